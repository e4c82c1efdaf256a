package lang_test

import (
	"bufio"
	"errors"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/lang"
)

type sample struct{ code, text string }

// loadSamples reads a testdata file of "code<TAB>text" lines.
func loadSamples(tb testing.TB, name string) []sample {
	tb.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		code, text, ok := strings.Cut(line, "\t")
		if !ok {
			tb.Fatalf("%s: bad line %q", name, line)
		}
		out = append(out, sample{code, text})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// score counts the samples detected right, reliable or not, and the
// reliable guesses that were wrong.
func score(samples []sample, detect func(string) (string, bool)) (right, reliableWrong int, misses []string) {
	for _, s := range samples {
		got, ok := detect(s.text)
		switch {
		case got == s.code:
			right++
		case ok:
			reliableWrong++
			misses = append(misses, s.code+"→"+got+" (reliable)")
		default:
			misses = append(misses, s.code+"→"+got)
		}
	}
	return right, reliableWrong, misses
}

func TestDetectPages(t *testing.T) {
	samples := loadSamples(t, "pages.tsv")
	right, _, misses := score(samples, lang.Detect)
	t.Logf("pages: %d/%d right; misses %v", right, len(samples), misses)
	// Paragraphs are what Parser detects on: every one must be right.
	if right != len(samples) {
		t.Errorf("pages: %d of %d right, misses %v", right, len(samples), misses)
	}
	for _, s := range samples {
		if _, ok := lang.Detect(s.text); !ok {
			t.Errorf("%s: paragraph detection not reliable: %.40q", s.code, s.text)
		}
	}
}

func TestDetectTitles(t *testing.T) {
	samples := loadSamples(t, "titles.tsv")
	right, reliableWrong, misses := score(samples, lang.Detect)
	t.Logf("titles: %d/%d right, %d wrong but reliable; misses %v", right, len(samples), reliableWrong, misses)
	// A few words are thin evidence: two thirds must still be right, and
	// a wrong guess must be marked unreliable, since Parser keeps only
	// reliable ones.
	if right*3 < len(samples)*2 || reliableWrong > 0 {
		t.Errorf("titles: %d of %d right, %d wrong but reliable", right, len(samples), reliableWrong)
	}
}

func TestDetectEdges(t *testing.T) {
	for _, tc := range []struct {
		text     string
		code     string
		reliable bool
	}{
		{"", "", false},
		{"12345 !!! ---", "", false},
		{"\xff\xfe\x00", "", false},
	} {
		code, ok := lang.Detect(tc.text)
		if code != tc.code || ok != tc.reliable {
			t.Errorf("Detect(%q) = %q, %v; want %q, %v", tc.text, code, ok, tc.code, tc.reliable)
		}
	}
}

func TestParser(t *testing.T) {
	u, _ := url.Parse("https://site.example/p")
	page := func(htmlLang, text string) *fetch.Response {
		attr := ""
		if htmlLang != "" {
			attr = ` lang="` + htmlLang + `"`
		}
		return &fetch.Response{URL: u, ContentType: "text/html", Header: http.Header{},
			Body: []byte(`<html` + attr + `><title>t</title><body><p>` + text + `</p></body></html>`)}
	}
	de := loadSamples(t, "pages.tsv")[2].text // German
	for _, tc := range []struct {
		name string
		p    *lang.Parser
		resp *fetch.Response
		want string
	}{
		{"undeclared gets detected", &lang.Parser{}, page("", de), "de"},
		{"declared kept", &lang.Parser{}, page("en", de), "en"},
		{"override", &lang.Parser{Override: true}, page("en", de), "de"},
		{"unreliable leaves empty", &lang.Parser{}, page("", "ok 42"), ""},
		{"wraps another parser", &lang.Parser{Parser: &fetch.MainTextParser{}}, page("", de), "de"},
		{"tiny sample still cut at a rune", &lang.Parser{MaxBytes: 3}, page("", "Ärger über Öl"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.p.Parse(tc.resp)
			if err != nil {
				t.Fatal(err)
			}
			if d.Lang != tc.want {
				t.Errorf("Lang = %q, want %q", d.Lang, tc.want)
			}
		})
	}
	if _, err := (&lang.Parser{}).Parse(&fetch.Response{ContentType: "text/html"}); err == nil {
		t.Error("no URL: want the inner parser's error")
	}
}

// BenchmarkDetect reports the accuracy (share of samples whose language
// Detect names right) and the time per sample, for paragraphs and titles.
func BenchmarkDetect(b *testing.B) {
	europe, err := lang.NewDetector("en", "de", "fr", "es", "it", "pt", "nl", "ru")
	if err != nil {
		b.Fatal(err)
	}
	for _, set := range []string{"pages", "titles", "pages-8langs"} {
		b.Run(set, func(b *testing.B) {
			detect, file := lang.Detect, set
			if set == "pages-8langs" {
				detect, file = europe.Detect, "pages"
			}
			samples := loadSamples(b, file+".tsv")
			if set == "pages-8langs" {
				samples = slices.DeleteFunc(samples, func(s sample) bool {
					return !slices.Contains([]string{"en", "de", "fr", "es", "it", "pt", "nl", "ru"}, s.code)
				})
			}
			right, reliableWrong, _ := score(samples, detect)
			var size int64
			for _, s := range samples {
				size += int64(len(s.text))
			}
			b.SetBytes(size)
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				for _, s := range samples {
					detect(s.text)
				}
			}
			b.ReportMetric(time.Since(start).Seconds()*1e6/float64(b.N*len(samples)), "µs/page")
			b.ReportMetric(float64(right)/float64(len(samples)), "accuracy")
			b.ReportMetric(float64(reliableWrong)/float64(len(samples)), "reliable-wrong")
		})
	}
}

func TestDetector(t *testing.T) {
	europe, err := lang.NewDetector("en", "de", "FR", "spa", "it", "pt", "nl", "ru")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range loadSamples(t, "pages.tsv") {
		code, ok := europe.Detect(s.text)
		switch s.code {
		case "en", "de", "fr", "es", "it", "pt", "nl", "ru":
			if code != s.code || !ok {
				t.Errorf("%s: got %q, %v", s.code, code, ok)
			}
		default:
			// Not a candidate: never named, and any guess in its stead
			// (Ukrainian read as Russian) must at least be a candidate.
			if code == s.code {
				t.Errorf("%s: named a language outside the set", s.code)
			}
		}
	}
	if code, ok := europe.Detect("如何逐行读取文件"); code != "" || ok {
		t.Errorf("Chinese among European languages: got %q, %v", code, ok)
	}
	var ule *lang.UnknownLanguageError
	if _, err := lang.NewDetector("en", "xx"); !errors.As(err, &ule) || ule.Code != "xx" {
		t.Errorf("unknown code: err = %v", err)
	}
}
