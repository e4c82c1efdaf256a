package urlnorm

import (
	"errors"
	"net/url"
	"testing"
)

// rfc3986Base is the base URI of RFC 3986 §5.4.
const rfc3986Base = "http://a/b/c/d;p?q"

// TestResolveRFC3986 checks every example of RFC 3986 §5.4.1 (normal) and
// §5.4.2 (abnormal). Where browsers differ (the WHATWG URL Standard) for
// an http base, their result is expected: "http:g" is a relative reference
// (the RFC's "backward compatible" reading) and a URL with a host has the
// path "/" at least.
func TestResolveRFC3986(t *testing.T) {
	tests := []struct{ ref, want string }{
		// §5.4.1 normal examples
		{"g:h", "g:h"},
		{"g", "http://a/b/c/g"},
		{"./g", "http://a/b/c/g"},
		{"g/", "http://a/b/c/g/"},
		{"/g", "http://a/g"},
		{"//g", "http://g/"},
		{"?y", "http://a/b/c/d;p?y"},
		{"g?y", "http://a/b/c/g?y"},
		{"#s", "http://a/b/c/d;p?q#s"},
		{"g#s", "http://a/b/c/g#s"},
		{"g?y#s", "http://a/b/c/g?y#s"},
		{";x", "http://a/b/c/;x"},
		{"g;x", "http://a/b/c/g;x"},
		{"g;x?y#s", "http://a/b/c/g;x?y#s"},
		{"", "http://a/b/c/d;p?q"},
		{".", "http://a/b/c/"},
		{"./", "http://a/b/c/"},
		{"..", "http://a/b/"},
		{"../", "http://a/b/"},
		{"../g", "http://a/b/g"},
		{"../..", "http://a/"},
		{"../../", "http://a/"},
		{"../../g", "http://a/g"},
		// §5.4.2 abnormal examples
		{"../../../g", "http://a/g"},
		{"../../../../g", "http://a/g"},
		{"/./g", "http://a/g"},
		{"/../g", "http://a/g"},
		{"g.", "http://a/b/c/g."},
		{".g", "http://a/b/c/.g"},
		{"g..", "http://a/b/c/g.."},
		{"..g", "http://a/b/c/..g"},
		{"./../g", "http://a/b/g"},
		{"./g/.", "http://a/b/c/g/"},
		{"g/./h", "http://a/b/c/g/h"},
		{"g/../h", "http://a/b/c/h"},
		{"g;x=1/./y", "http://a/b/c/g;x=1/y"},
		{"g;x=1/../y", "http://a/b/c/y"},
		{"g?y/./x", "http://a/b/c/g?y/./x"},
		{"g?y/../x", "http://a/b/c/g?y/../x"},
		{"g#s/./x", "http://a/b/c/g#s/./x"},
		{"g#s/../x", "http://a/b/c/g#s/../x"},
		{"http:g", "http://a/b/c/g"}, // browsers; the RFC's strict parser gives "http:g"
	}
	base := mustParse(t, rfc3986Base)
	for _, tt := range tests {
		u, err := Resolve(base, tt.ref)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.ref, err)
			continue
		}
		if got := u.String(); got != tt.want {
			t.Errorf("Resolve(%q) = %q, want %q", tt.ref, got, tt.want)
		}
	}
	if got := base.String(); got != rfc3986Base {
		t.Errorf("base modified: %q", got)
	}
}

func TestResolveLenient(t *testing.T) {
	tests := []struct{ base, ref, want string }{
		{"http://a/b/c", "  /x\t\n", "http://a/x"},
		{"http://a/b/c", "/a\tb\nc\r", "http://a/abc"},
		{"http://a/b/c", "\x00\x1f /x \x7f", "http://a/x%20%7F"},
		{"http://a/b/c", `\\evil.example\path`, "http://evil.example/path"},
		{"http://a/b/c", `..\g\h`, "http://a/g/h"},
		{"http://a/b/c", `g?x=\y`, `http://a/b/g?x=\y`}, // a query keeps "\" as browsers send it
		{"https://a/b/c", `HTTP:\\x.example\y`, "http://x.example/y"},
		{"ftp://a/b/c", `d\e`, "ftp://a/b/d/e"},
		{"foo://a/b/c", `d\e`, "foo://a/b/d%5Ce"},
		{"http://a/b/c", "/a b", "http://a/a%20b"},
		{"http://a/b/c", "/ü?ä=ö#é", "http://a/%C3%BC?%C3%A4=%C3%B6#%C3%A9"},
		{"http://a/b/c", "/100%", "http://a/100%25"},
		{"http://a/b/c", "/%zz%4", "http://a/%25zz%254"},
		{"http://a/b/c", "/%41%2f", "http://a/%41%2f"},
		{"http://a/b/c", `/"<x>"`, "http://a/%22%3Cx%3E%22"},
		{"http://a/b/c", "?q=a b#f g#h", "http://a/b/c?q=a%20b#f%20g%23h"},
		{"http://a/b/c", "http://bücher.example/x", "http://xn--bcher-kva.example/x"},
		{"http://a/b/c", "//BÜCHER.example:8080/", "http://xn--bcher-kva.example:8080/"},
		{"http://a/b/c", "http://b%C3%BCcher.example/", "http://xn--bcher-kva.example/"},
		{"http://a/b/c", "http://user:pä ss@bücher.example/", "http://user:p%C3%A4%20ss@xn--bcher-kva.example/"},
		{"http://a/b/c", "http://[2001:db8::1]:8080/x", "http://[2001:db8::1]:8080/x"},
		{"http://[2001:db8::1]/b/c", "d", "http://[2001:db8::1]/b/d"},
		{"http://a/b/c", "mailto:x@example.com", "mailto:x@example.com"},
		{"http://a/b/c", "javascript:void(0)", "javascript:void(0)"},
		{"http://a/b/c#frag", "", "http://a/b/c"},
		{"foo:/a/b", "..//c", "foo:///c"},
		{"http://a/b/c#frag", "#other", "http://a/b/c#other"},
		// Where RFC 3986 §5.2.4 and browsers keep an empty segment that
		// net/url drops.
		{"http://a/105/index.html", "..//index.html", "http://a//index.html"},
		{"http://a/b/c/d", "../..//x/./y", "http://a//x/y"},
		{"http://a/b/c", "x//../y", "http://a/b/x/y"},
		// Slashes after the scheme: any number, either kind.
		{"http://a/b/c", "http:///www.example.com/x", "http://www.example.com/x"},
		{"http://a/b/c", "https:////www.example.com/x", "https://www.example.com/x"},
		{"http://a/b/c", `http:\\www.example.com\x`, "http://www.example.com/x"},
		{"http://a/b/c", `https:\/www.example.com/x`, "https://www.example.com/x"},
		{"http://a/b/c", "https:www.example.com/x", "https://www.example.com/x"},
		{"http://a/b/c", "http:x", "http://a/b/x"},
		{"http://a/b/c", "http:/x", "http://a/x"},
		{"https://a/b/c", "http:/x", "http://x/"},
		{"http://a/b/c", `/\www.example.com/x`, "http://www.example.com/x"},
		{"http://a/b/c", `\x\y`, "http://a/x/y"},
		{"http://a/b/c", "ht\ttp://exa\nmple.com/\r\nx", "http://example.com/x"},
		{"http://a/b/c", "\x01\x1f http://example.com/x \x00", "http://example.com/x"},
		// Hosts: case, IPv4 forms, IPv6 compression, ports.
		{"http://a/b/c", "http://WWW.Example.COM/", "http://www.example.com/"},
		{"http://a/b/c", "http://0x7f.1/", "http://127.0.0.1/"},
		{"http://a/b/c", "http://3232235777/", "http://192.168.1.1/"},
		{"http://a/b/c", "http://[2001:DB8:0:0:0:0:0:1]/", "http://[2001:db8::1]/"},
		{"http://a/b/c", "http://[::ffff:1.2.3.4]/", "http://[::ffff:102:304]/"},
		{"http://a/b/c", "http://h.example:80/x", "http://h.example/x"},
		{"http://a/b/c", "https://h.example:0443/x", "https://h.example/x"},
		{"http://a/b/c", "http://h.example:/x", "http://h.example/x"},
		{"http://a/b/c", "http://h.example", "http://h.example/"},
		// Dot segments also spelled %2e.
		{"http://a/b/c/d", "%2e%2E/x", "http://a/b/x"},
		{"http://a/b/c/d", ".%2e/.%2E/x", "http://a/x"},
		// The query: "'" as %27, as browsers send it; other characters raw.
		{"http://a/b/c", "?q='x'", "http://a/b/c?q=%27x%27"},
		{"http://a/b/c", "/s?q=it's&a=\"b\"<c>{d}|e^", "http://a/s?q=it%27s&a=%22b%22%3Cc%3E{d}|e^"},
		{"http://a/b/c", "/it's", "http://a/it's"},
		{"http://en.wikipedia.org/wiki/Main_Page", "/wiki/Wikipedia:General_disclaimer",
			"http://en.wikipedia.org/wiki/Wikipedia:General_disclaimer"},
	}
	for _, tt := range tests {
		u, err := Resolve(mustParse(t, tt.base), tt.ref)
		if err != nil {
			t.Errorf("Resolve(%q, %q): %v", tt.base, tt.ref, err)
			continue
		}
		if got := u.String(); got != tt.want {
			t.Errorf("Resolve(%q, %q) = %q, want %q", tt.base, tt.ref, got, tt.want)
		}
		if _, err := url.Parse(u.String()); err != nil {
			t.Errorf("Resolve(%q, %q) = %q does not parse: %v", tt.base, tt.ref, u, err)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		base, ref string
		want      error
	}{
		{"", "/relative", ErrNoScheme},
		{"", "g", ErrNoScheme},
		{"http://a/", "http://xn--a.\u0000/", nil},
		{"http://a/", "http://bad\u200dhost\u00ad.example\uFFFF/", ErrBadHost},
		{"http://a/", "http://%zz\u00e9/", ErrBadHost},
		{"http://a/", "http://[::1/", nil},
		{"http://a/", "http://user@/x", ErrBadHost},
		{"http://a/", "http:///", ErrBadHost},
		{"http://a/", "http://a b/", ErrBadHost},
		{"http://a/", "http://1.2.3.256/", ErrBadHost},
		{"http://a/", "http://0x100000000/", ErrBadHost},
		{"http://a/", "http://[::1%25eth0]/", ErrBadHost},
		{"http://a/", "http://h:65536/", ErrBadPort},
		{"http://a/", "http://h:8x/", ErrBadPort},
		{"http://a/", "http://example.com%80/", ErrBadHost},
		{"/relative/base", "x", ErrNoScheme},
	}
	for _, tt := range tests {
		var base *url.URL
		if tt.base != "" {
			base = mustParse(t, tt.base)
		}
		u, err := Resolve(base, tt.ref)
		if err == nil {
			t.Errorf("Resolve(%q, %q) = %q, want error", tt.base, tt.ref, u)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Op != "resolve" || e.URL != tt.ref {
			t.Errorf("Resolve(%q, %q) error %#v is not a resolve *Error", tt.base, tt.ref, err)
		}
		if tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("Resolve(%q, %q) error %v, want %v", tt.base, tt.ref, err, tt.want)
		}
	}
	u, err := Resolve(nil, "HTTP://example.com/x")
	if err != nil || u.String() != "http://example.com/x" {
		t.Errorf("Resolve(nil, absolute) = %v, %v", u, err)
	}
}

func mustParse(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestFastResolveTaken makes sure the common hrefs take the one-allocation
// path (its results are compared with the general path by FuzzResolve).
func TestFastResolveTaken(t *testing.T) {
	base := mustParse(t, "http://docs.example/doc/page.html")
	for _, ref := range []string{"/pkg/time/#Time.Add", "go1compat.html", "../css/x.css", "/doc/", "./a?b=c&d=e", "x:y/z"} {
		want := ref != "x:y/z"
		if _, ok := fastResolve(base, ref); ok != want {
			t.Errorf("fastResolve(%q) taken = %v, want %v", ref, ok, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Resolve(base, "../css/x.css") }); n > 2 {
		t.Errorf("Resolve of a relative href: %v allocations", n)
	}
}
