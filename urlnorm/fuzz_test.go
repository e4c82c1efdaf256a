package urlnorm

import (
	"net/url"
	"testing"
)

func FuzzCanonical(f *testing.F) {
	for _, s := range typicalURLs {
		f.Add(s)
	}
	for _, s := range []string{
		"HTTP://WWW.Example.COM:80/a/./b/../%7e?q#f", "http://bücher.example/ü",
		"http://[2001:DB8::1]:080/", "foo:/a/..//b", `http://a\b\..\c`, "http://a/%2e%2E/%", "mailto:x@y",
	} {
		f.Add(s)
	}
	all := Canonicalizer{SortQuery: true, StripParams: TrackingParams(), FoldWWW: true}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, c := range []*Canonicalizer{{}, &all} {
			got, err := c.Canonical(raw)
			if err != nil {
				continue
			}
			again, err := c.Canonical(got)
			if err != nil || again != got {
				t.Fatalf("%+v: Canonical(%q) = %q; Canonical of that = %q, %v", *c, raw, got, again, err)
			}
			if _, err := url.Parse(got); err != nil {
				t.Fatalf("Canonical(%q) = %q does not parse: %v", raw, got, err)
			}
		}
	})
}

func FuzzResolve(f *testing.F) {
	f.Add("http://a/b/c/d;p?q", "../g?y#s")
	f.Add("http://a/b/c/d;p?q", "g:h")
	f.Add("https://x.example/", `\\bücher.example\ü x`)
	f.Add("http://[::1]:80/", "//[2001:db8::1]/%zz")
	f.Add("mailto:x@y", "z")
	f.Add("http://a/b/c/d;p?q", "g;x=1/y?a=b#c")
	f.Add("http://a/b", "/x:y/z")
	f.Add("http://a", "g")
	f.Add("http://a/b/c/d", "../../x/./y")
	f.Add("http://a/b/c/d", "./../y?q#f")
	f.Add("http://a/b", "../../../../z/")
	f.Add("http://a/b", "http://code.google.com/p/go/source/detail?r=2646dc956207")
	f.Add("http://a/b", "https://h.example:8080?x#y")
	f.Add("http://a/b", "http://h.example#f")
	f.Add("http://a/b", "http://h.:1/a;b@c$d")
	f.Add("http://a/b", "http://-h/./x")
	f.Add("http://a/b", "https://h:/")
	f.Add("http://a/105/index.html", "..//index.html")
	f.Add("https://a/b", "http:///www.example.com/x?q='1'#f#g")
	f.Add("http://a/b", "HTTP://0x7F.1:0080/%2e%2E/x")
	f.Add("http://a/b", "https://[::FFFF:1.2.3.4]/\\x/%zz|^")
	f.Add("http://a/b", "ws:\\b%C3%BCcher.example/")
	f.Add("http://a/b", "../c/D.html#m(java.lang.String[], int)!*")
	f.Fuzz(func(t *testing.T, base, ref string) {
		b, err := url.Parse(base)
		if err != nil {
			return
		}
		u, err := Resolve(b, ref)
		slow, slowErr := resolve(b, ref, false)
		if (err == nil) != (slowErr == nil) || err == nil && (u.String() != slow.String() || !sameURL(u, slow)) {
			t.Fatalf("Resolve(%q, %q) = %v, %v; general path %v, %v", base, ref, u, err, slow, slowErr)
		}
		if err != nil {
			return
		}
		s := u.String()
		if _, err := url.Parse(s); err != nil {
			t.Fatalf("Resolve(%q, %q) = %q does not parse: %v", base, ref, s, err)
		}
		if c, err := Canonical(s); err == nil {
			if again, err := Canonical(c); err != nil || again != c {
				t.Fatalf("Canonical(%q) = %q not idempotent: %q, %v", s, c, again, err)
			}
		}
	})
}

// sameURL reports whether a and b are equal field by field (the
// Userinfo by value).
func sameURL(a, b *url.URL) bool {
	if (a.User == nil) != (b.User == nil) || a.User != nil && a.User.String() != b.User.String() {
		return false
	}
	x, y := *a, *b
	x.User, y.User = nil, nil
	return x == y
}
