package fetch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzHTML(f *testing.F) {
	for _, name := range []string{"messy.html", "broken.html", "frames.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<a href=x>a<a href=y>b</a><base href="//h/"><meta http-equiv=refresh content="0;url='z'">`))
	f.Add([]byte("<title>\x00</title><a href=\"\t\njava\nscript:x\">"))
	page := mustURL(f, "http://page.example/a/b.html")
	f.Fuzz(func(t *testing.T, body []byte) {
		p := HTML{MaxLinks: 50, MaxText: 1000}
		d := p.ParseBytes(body, page)
		if len(d.Links) > 50 || len(d.Text) > 1000 {
			t.Fatalf("caps exceeded: %d links, %d text", len(d.Links), len(d.Text))
		}
		if utf8.Valid(body) && (!utf8.ValidString(d.Text) || !utf8.ValidString(d.Title)) {
			t.Fatalf("invalid UTF-8 out of valid input: %q %q", d.Title, d.Text)
		}
		if strings.Contains(d.Text, "  ") || strings.TrimSpace(d.Text) != d.Text {
			t.Fatalf("whitespace not collapsed: %q", d.Text)
		}
		for _, l := range d.Links {
			if l.URL == nil || !l.URL.IsAbs() || skipScheme(l.URL.Scheme) {
				t.Fatalf("bad link %+v", l)
			}
		}
	})
}
