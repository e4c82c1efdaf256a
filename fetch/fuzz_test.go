package fetch

import (
	"bytes"
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
	f.Add([]byte(`<head><noscript><meta http-equiv=refresh content="0;url=/n"><a href=x>x</noscript></head><NOSCRIPT/><A HREF=..//y>y</A><noscript><noscript>z`))
	f.Add([]byte(`<link rel="next prev" hreflang=" de " href="http:///h/x"><link rel=alternate hreflang href=\\h\y?'>`))
	page := mustURL(f, "http://page.example/a/b.html")
	f.Fuzz(func(t *testing.T, body []byte) {
		p := HTML{MaxLinks: 50, MaxText: 1000}
		d := p.ParseBytes(body, page)
		if len(d.Links) > 50 || len(d.Text) > 1000 || d.LinksDropped > 0 && !d.Truncated {
			t.Fatalf("caps exceeded: %d links, %d text, %d dropped, truncated %v", len(d.Links), len(d.Text), d.LinksDropped, d.Truncated)
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

// refCollapse is the obvious byte-at-a-time definition appendCollapsed must
// match.
func refCollapse(t []byte) []byte {
	var out []byte
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == 0 {
			continue
		}
		ws := isSpace(c)
		if c == 0xc2 && i+1 < len(t) && t[i+1] == 0xa0 {
			ws = true
			i++
		}
		if ws {
			if len(out) > 0 && out[len(out)-1] != ' ' {
				out = append(out, ' ')
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

func FuzzCollapse(f *testing.F) {
	for _, s := range []string{"0000000  0", "a  b\t\nc", "\u00a0x\u00a0\u00a0y ", "word word word word\n  word", "a\x00 \x00b", "\xc2\xc2\xa0", "fish &amp; chips", "0123456&"} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, b []byte, split int) {
		want := refCollapse(b)
		if got := appendCollapsed(nil, b, len(b)+1); !bytes.Equal(got, want) {
			t.Fatalf("appendCollapsed(%q) = %q, want %q", b, got, want)
		}
		raw, ok := appendRawText([]byte("x"), b, len(b)+2)
		if hasAmp := bytes.IndexByte(b, '&') >= 0; ok == hasAmp || hasAmp && string(raw) != "x" ||
			!hasAmp && !bytes.Equal(raw, refCollapse(append([]byte("x"), b...))) {
			t.Fatalf("appendRawText(%q) = %q, %v", b, raw, ok)
		}
		if got := appendCollapsedMax(nil, b, len(b)+1); !bytes.Equal(got, want) {
			t.Fatalf("appendCollapsedMax(%q) = %q, want %q", b, got, want)
		}
		// Split into two tokens: the result must not depend on where
		// the tokenizer cut the text, except at a U+00A0 cut in half.
		if split < 0 || split > len(b) || (split > 0 && b[split-1] == 0xc2) {
			return
		}
		got := appendCollapsed(appendCollapsed(nil, b[:split], len(b)+1), b[split:], len(b)+1)
		if !bytes.Equal(got, want) {
			t.Fatalf("appendCollapsed(%q)+(%q) = %q, want %q", b[:split], b[split:], got, want)
		}
	})
}
