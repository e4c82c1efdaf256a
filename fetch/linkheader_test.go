package fetch

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseLinkHeader(t *testing.T) {
	base, _ := url.Parse("http://a.test/dir/page.pdf")
	type want struct{ url, rel string }
	for _, c := range []struct {
		name   string
		values []string
		want   []want
	}{
		{"canonical", []string{`<http://a.test/c.html>; rel="canonical"`}, []want{{"http://a.test/c.html", "canonical"}}},
		{"relative", []string{`</c.html>; rel=canonical`}, []want{{"http://a.test/c.html", "canonical"}}},
		{"relative to dir", []string{`<c.html>;rel=canonical`}, []want{{"http://a.test/dir/c.html", "canonical"}}},
		{"list", []string{`<http://a.test/1>; rel="next", <http://a.test/0>; rel="prev"`},
			[]want{{"http://a.test/1", "next"}, {"http://a.test/0", "prev"}}},
		{"two fields", []string{`<http://a.test/1>; rel=next`, `<http://a.test/c>; rel=canonical`},
			[]want{{"http://a.test/1", "next"}, {"http://a.test/c", "canonical"}}},
		{"comma in URI", []string{`<http://a.test/a,b>; rel=canonical`}, []want{{"http://a.test/a,b", "canonical"}}},
		{"comma and semicolon in quotes", []string{`<http://a.test/x>; title="a, b; \"c\""; rel="canonical", <http://a.test/y>`},
			[]want{{"http://a.test/x", "canonical"}, {"http://a.test/y", ""}}},
		{"case and spaces", []string{"<http://a.test/x> ;\tREL = \"  Canonical   Alternate \""}, []want{{"http://a.test/x", "canonical alternate"}}},
		{"first rel wins", []string{`<http://a.test/x>; rel=next; rel=canonical`}, []want{{"http://a.test/x", "next"}}},
		{"no rel", []string{`<http://a.test/x>; type="text/html"`}, []want{{"http://a.test/x", ""}}},
		{"valueless param", []string{`<http://a.test/x>; crossorigin; rel=preload`}, []want{{"http://a.test/x", "preload"}}},
		{"stray semicolons", []string{`<http://a.test/x>;; ;rel=canonical;`}, []want{{"http://a.test/x", "canonical"}}},
		{"extended param", []string{`<http://a.test/x>; title*=UTF-8'de'n%c3%a4chstes; rel=next`}, []want{{"http://a.test/x", "next"}}},
		{"malformed then good", []string{`http://a.test/bad; rel=canonical, <http://a.test/good>; rel=canonical`},
			[]want{{"http://a.test/good", "canonical"}}},
		{"junk after URI", []string{`<http://a.test/bad> junk; rel=canonical, <http://a.test/ok>; rel=canonical`},
			[]want{{"http://a.test/ok", "canonical"}}},
		{"unclosed URI", []string{`<http://a.test/x; rel=canonical`}, nil},
		{"unclosed quote", []string{`<http://a.test/x>; rel="canonical`}, nil},
		{"other scheme", []string{`<mailto:a@b.test>; rel=author, <ftp://a.test/f>; rel=canonical`}, nil},
		{"empty", []string{"", " , ,"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ParseLinkHeader(c.values, base)
			if len(got) != len(c.want) {
				t.Fatalf("got %d links %+v, want %v", len(got), got, c.want)
			}
			for i, l := range got {
				if l.URL.String() != c.want[i].url || l.Rel != c.want[i].rel || l.Tag != "header" {
					t.Errorf("link %d = %s rel %q tag %q, want %s rel %q", i, l.URL, l.Rel, l.Tag, c.want[i].url, c.want[i].rel)
				}
			}
		})
	}
}

func TestParseLinkHeaderCap(t *testing.T) {
	v := strings.Repeat("<http://a.test/x>; rel=preload, ", 2*MaxHeaderLinks)
	if got := ParseLinkHeader([]string{v, v}, nil); len(got) != MaxHeaderLinks {
		t.Errorf("%d links, want the cap %d", len(got), MaxHeaderLinks)
	}
}

func FuzzLinkHeader(f *testing.F) {
	for _, s := range []string{
		`<http://a.test/c.html>; rel="canonical"`,
		`</x>; rel=next, <y>; rel="prev"; title="a, \"b\""`,
		`<http://a.test/a,b>; title*=UTF-8'de'x; rel=canonical,,`,
		`bad; rel=x, <http://a.test/ok>`,
		`<unclosed; rel="open`,
	} {
		f.Add(s)
	}
	base, _ := url.Parse("http://page.test/a/b")
	f.Fuzz(func(t *testing.T, v string) {
		links := ParseLinkHeader([]string{v}, base)
		if len(links) > MaxHeaderLinks {
			t.Fatalf("%d links past the cap", len(links))
		}
		for _, l := range links {
			if l.URL == nil || !l.URL.IsAbs() || (l.URL.Scheme != "http" && l.URL.Scheme != "https") || l.Tag != "header" {
				t.Fatalf("bad link %+v", l)
			}
			if l.Rel != strings.ToLower(l.Rel) || strings.Join(strings.Fields(l.Rel), " ") != l.Rel {
				t.Fatalf("rel not normalised: %q", l.Rel)
			}
		}
	})
}

func BenchmarkParseLinkHeader(b *testing.B) {
	base, _ := url.Parse("http://a.test/doc.pdf")
	v := []string{`<https://a.test/doc.html>; rel="canonical", </style.css>; rel=preload; as=style, </next>; rel="next"`}
	b.ReportAllocs()
	b.SetBytes(int64(len(v[0])))
	for b.Loop() {
		if len(ParseLinkHeader(v, base)) != 3 {
			b.Fatal("want 3 links")
		}
	}
}
