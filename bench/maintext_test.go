package bench

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	readability "codeberg.org/readeck/go-readability/v2"

	"github.com/crawlkit/crawlkit/fetch"
)

// mainPage is a page of crawlkit's fetch/testdata/maintext with its
// hand-marked main content.
type mainPage struct {
	name string
	html []byte
	gold string
	url  *url.URL
}

func loadMainPages(tb testing.TB) []mainPage {
	tb.Helper()
	files, err := filepath.Glob("../fetch/testdata/maintext/*.html")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no pages: %v", err)
	}
	var pages []mainPage
	for _, f := range files {
		h, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		g, err := os.ReadFile(strings.TrimSuffix(f, ".html") + ".main.txt")
		if err != nil {
			tb.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".html")
		u, _ := url.Parse("https://site.example/" + name)
		pages = append(pages, mainPage{name, h, string(g), u})
	}
	return pages
}

func mainTokens(s string) map[string]int {
	m := make(map[string]int)
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		m[strings.ToLower(w)]++
	}
	return m
}

// precisionRecall is the token-level (multiset of lowercase words)
// precision and recall of got against want.
func precisionRecall(got, want string) (p, r float64) {
	g, w := mainTokens(got), mainTokens(want)
	var common, ng, nw int
	for t, n := range g {
		ng += n
		common += min(n, w[t])
	}
	for _, n := range w {
		nw += n
	}
	if ng > 0 {
		p = float64(common) / float64(ng)
	}
	return p, float64(common) / float64(nw)
}

// mainExtractors are the contenders: crawlkit's MainTextParser, the plain
// Document.Text, and go-readability (its title in front of its text, as a
// reader shows it: the hand-marked content starts with the headline).
var mainExtractors = []struct {
	name    string
	extract func(p mainPage) (string, error)
}{
	{"crawlkit-MainText", func(p mainPage) (string, error) {
		d, err := (&fetch.MainTextParser{}).Parse(&fetch.Response{URL: p.url, ContentType: "text/html", Body: p.html})
		if err != nil {
			return "", err
		}
		return d.Text, nil
	}},
	{"crawlkit-PlainText", func(p mainPage) (string, error) {
		return (&fetch.HTML{}).ParseBytes(p.html, p.url).Text, nil
	}},
	{"go-readability", func(p mainPage) (string, error) {
		parser := readability.NewParser()
		a, err := parser.Parse(bytes.NewReader(p.html), p.url)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		b.WriteString(a.Title())
		b.WriteByte('\n')
		if a.Node != nil {
			if err := a.RenderText(&b); err != nil {
				return "", err
			}
		}
		return b.String(), nil
	}},
}

// TestMainTextCompare logs the per-page precision and recall of each
// extractor, for reading with -v.
func TestMainTextCompare(t *testing.T) {
	pages := loadMainPages(t)
	for _, e := range mainExtractors {
		var sp, sr float64
		for _, p := range pages {
			got, err := e.extract(p)
			if err != nil {
				t.Fatalf("%s on %s: %v", e.name, p.name, err)
			}
			pr, rc := precisionRecall(got, p.gold)
			sp, sr = sp+pr, sr+rc
			t.Logf("%-20s %-8s P %.2f R %.2f", e.name, p.name, pr, rc)
		}
		t.Logf("%-20s mean     P %.3f R %.3f", e.name, sp/float64(len(pages)), sr/float64(len(pages)))
	}
}

// BenchmarkMainText reports, for each extractor, the mean token-level
// precision and recall over the hand-marked pages and the time per page.
func BenchmarkMainText(b *testing.B) {
	pages := loadMainPages(b)
	for _, e := range mainExtractors {
		b.Run(e.name, func(b *testing.B) {
			var sp, sr float64
			for _, p := range pages {
				got, err := e.extract(p)
				if err != nil {
					b.Fatal(err)
				}
				pr, rc := precisionRecall(got, p.gold)
				sp, sr = sp+pr, sr+rc
			}
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				for _, p := range pages {
					if _, err := e.extract(p); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(time.Since(start).Seconds()*1000/float64(b.N*len(pages)), "ms/page")
			b.ReportMetric(sp/float64(len(pages)), "precision")
			b.ReportMetric(sr/float64(len(pages)), "recall")
		})
	}
}
