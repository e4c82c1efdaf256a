package lang_test

import (
	"testing"
	"unicode/utf8"

	"github.com/crawlkit/crawlkit/fetch/lang"
)

// FuzzDetect checks that any text gets an answer without panicking, and
// that the answer is a code or nothing, and nothing for text without
// letters.
func FuzzDetect(f *testing.F) {
	f.Add("Der Rhein ist ein Strom in Mitteleuropa.")
	f.Add("如何逐行读取文件")
	f.Add("\xff\xfe")
	f.Add("")
	europe, err := lang.NewDetector("en", "de", "ru")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, detect := range []func(string) (string, bool){lang.Detect, europe.Detect} {
			code, reliable := detect(text)
			if code == "" && reliable {
				t.Fatalf("reliable without a language for %q", text)
			}
			if n := len(code); n != 0 && n != 2 && n != 3 || !utf8.ValidString(code) {
				t.Fatalf("code %q for %q", code, text)
			}
		}
	})
}
