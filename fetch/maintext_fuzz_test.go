package fetch

import (
	"os"
	"path/filepath"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzMainText checks that any bytes give a main text without panicking,
// in valid UTF-8 for valid input, and made only of the page's visible
// text: no letter appears in it more often than in the whole text.
func FuzzMainText(f *testing.F) {
	for _, name := range []string{"maintext/news.html", "maintext/forum.html", "messy.html", "broken.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<header><h1>a</h1></header><div class="nav-content"><p hidden>x</p><a>b c d</a> e f g h i j k</div>`))
	page := mustURL(f, "http://page.example/a")
	f.Fuzz(func(t *testing.T, body []byte) {
		dom, err := ParseDOM(body, page, false)
		if err != nil {
			t.Fatal(err)
		}
		main := dom.MainText()
		if utf8.Valid(body) && !utf8.ValidString(main) {
			t.Fatalf("invalid UTF-8 out of valid input: %q", main)
		}
		all := map[rune]int{}
		for _, r := range dom.Root().Text() {
			all[r]++
		}
		for _, r := range main {
			if unicode.IsLetter(r) {
				if all[r]--; all[r] < 0 {
					t.Fatalf("main text has more %q than the page:\n%q\n%q", r, main, dom.Root().Text())
				}
			}
		}
	})
}
