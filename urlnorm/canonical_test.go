package urlnorm

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/internal/cputime"
)

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://example.com/", "http://example.com/"},
		{"HTTP://WWW.Example.COM:80/", "http://www.example.com/"},
		{"https://example.com:443", "https://example.com/"},
		{"https://example.com:0443/a", "https://example.com/a"},
		{"https://example.com:8443/a", "https://example.com:8443/a"},
		{"http://example.com:443/", "http://example.com:443/"},
		{"http://example.com:08080/", "http://example.com:8080/"},
		{"https://example.com:80/", "https://example.com:80/"},
		{"http://example.com:/a", "http://example.com/a"},
		{"http://example.com./a", "http://example.com/a"},
		{"http://example.com../a", "http://example.com/a"},
		{"http://example.com", "http://example.com/"},
		{"http://example.com?q", "http://example.com/?q"},
		{"http://example.com/a/./b/../c", "http://example.com/a/c"},
		{"http://example.com/a/b/..", "http://example.com/a/"},
		{"http://example.com/a/b/.", "http://example.com/a/b/"},
		{"http://example.com/../../x", "http://example.com/x"},
		{"http://example.com/a//b", "http://example.com/a//b"},
		{"http://example.com/%2E%2e/b", "http://example.com/b"},
		{"http://example.com/a%2e%2E/b", "http://example.com/a../b"},
		{"http://example.com/%7euser/%2fx%3a%41", "http://example.com/~user/%2Fx%3AA"},
		{"http://example.com/a?b=%2f%7e&c=%3D", "http://example.com/a?b=%2F~&c=%3D"},
		{"http://example.com/a?x=../y/./z", "http://example.com/a?x=../y/./z"},
		{"http://example.com/a#frag", "http://example.com/a"},
		{"http://example.com/a?q#frag?x", "http://example.com/a?q"},
		{"http://example.com/a?", "http://example.com/a?"},
		{"http://example.com/?b=2&a=1", "http://example.com/?b=2&a=1"},
		{"https://example.com/", "https://example.com/"},
		{"http://example.com/a b", "http://example.com/a%20b"},
		{"http://example.com/ü", "http://example.com/%C3%BC"},
		{"http://example.com/100%", "http://example.com/100%25"},
		{"http://example.com/100%25", "http://example.com/100%25"},
		{`http://example.com\a\b?c\d`, "http://example.com/a/b?c%5Cd"},
		{"http://bücher.example/", "http://xn--bcher-kva.example/"},
		{"http://B%C3%BCcher.example/", "http://xn--bcher-kva.example/"},
		{"http://xn--bcher-kva.example/", "http://xn--bcher-kva.example/"},
		{"http://[2001:DB8::1]:80/", "http://[2001:db8::1]/"},
		{"http://[2001:db8::1]:8080", "http://[2001:db8::1]:8080/"},
		{"http://192.168.0.1:80/x", "http://192.168.0.1/x"},
		{"http://User:P%61ss@Example.com/", "http://User:Pass@example.com/"},
		{"http://under_score.example/", "http://under_score.example/"},
		{"http://a@b[c]:p%61ss@example.com/", "http://a%40b%5Bc%5D:pass@example.com/"},
		{"mailto:Joe@Example.COM", "mailto:Joe@Example.COM"},
		{"urn:isbn:0-395-36341-1", "urn:isbn:0-395-36341-1"},
		{"file:///etc/../passwd", "file:///passwd"},
		{"foo:/a/..//b", "foo:/.//b"},
		{"  http://example.com/a\tb\n  ", "http://example.com/ab"},
		// Slashes after a special scheme, as browsers read them.
		{"http:///www.example.com/x", "http://www.example.com/x"},
		{`https:\\example.com\x`, "https://example.com/x"},
		{"http:foo", "http://foo/"},
		{"foo:///x", "foo:///x"},
		// The query as browsers send it: "'" is %27, one key for both.
		{"http://example.com/?q='x'", "http://example.com/?q=%27x%27"},
		{"http://example.com/?q=%27x%27", "http://example.com/?q=%27x%27"},
		{"https://example.com/it's?a='", "https://example.com/it's?a=%27"},
		{"foo://example.com/?a='", "foo://example.com/?a='"},
		{`http://example.com/?a b"c<d>e`, "http://example.com/?a%20b%22c%3Cd%3Ee"},
		{"http://example.com/?a%20b%22c%3Cd%3Ee", "http://example.com/?a%20b%22c%3Cd%3Ee"},
		{"http://example.com/?a={b}|c", "http://example.com/?a=%7Bb%7D%7Cc"},
		{"http://example.com/?q=\u00e9", "http://example.com/?q=%C3%A9"},
	}
	for _, tt := range tests {
		got, err := Canonical(tt.in)
		if err != nil {
			t.Errorf("Canonical(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again, err := Canonical(got); err != nil || again != got {
			t.Errorf("Canonical(%q) = %q, %v: not idempotent", got, again, err)
		}
		if _, err := url.Parse(got); err != nil {
			t.Errorf("Canonical(%q) = %q does not parse: %v", tt.in, got, err)
		}
	}
}

func TestCanonicalErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", ErrNoScheme},
		{"example.com/x", ErrNoScheme},
		{"/x", ErrNoScheme},
		{"1http://x/", ErrBadScheme},
		{"ht tp://x/", ErrBadScheme},
		{"http:", ErrBadHost},
		{"http:///", ErrBadHost},
		{"http:?x", ErrBadHost},
		{"http://./x", ErrBadHost},
		{"http://a b/", ErrBadHost},
		{"http://a<b/", ErrBadHost},
		{"http://[zz]/", ErrBadHost},
		{"http://[1.2.3.4]/", ErrBadHost},
		{"http://[::1/", ErrBadHost},
		{"http://[::1]x/", ErrBadHost},
		{"http://%zz%c3/", ErrBadHost},
		{"http://a%20b/", ErrBadHost},
		{"http://a:99999/", ErrBadPort},
		{"http://a:65536/", ErrBadPort},
		{"http://a:8x/", ErrBadPort},
		{"http://a:-1/", ErrBadPort},
	}
	for _, tt := range tests {
		got, err := Canonical(tt.in)
		if !errors.Is(err, tt.want) {
			t.Errorf("Canonical(%q) = %q, %v; want %v", tt.in, got, err, tt.want)
		}
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Op != "canonical" || e.URL != tt.in) {
			t.Errorf("Canonical(%q) error %#v is not a canonical *Error", tt.in, err)
		}
	}
}

func TestCanonicalizerOptions(t *testing.T) {
	sort := Canonicalizer{SortQuery: true}
	strip := Canonicalizer{StripParams: TrackingParams()}
	www := Canonicalizer{FoldWWW: true}
	all := Canonicalizer{SortQuery: true, StripParams: TrackingParams(), FoldWWW: true}
	tests := []struct {
		c        *Canonicalizer
		in, want string
	}{
		{&sort, "http://a/?b=2&a=1&a=0", "http://a/?a=1&a=0&b=2"},
		{&sort, "http://a/?b&&a=%7e", "http://a/?a=~&b"},
		{&sort, "http://a/?", "http://a/"},
		{&sort, "http://a/?&&", "http://a/"},
		{&strip, "http://a/?utm_source=x&id=3&UTM_Medium=y&gclid=1", "http://a/?id=3"},
		{&strip, "http://a/?utm_source=x", "http://a/"},
		{&strip, "http://a/x?JSESSIONID=1&b=2&a=1", "http://a/x?b=2&a=1"},
		{&strip, "http://a/?b&&c", "http://a/?b&&c"},
		{&strip, "http://a/?sidebar=1", "http://a/?sidebar=1"},
		{&www, "http://WWW.example.com/", "http://example.com/"},
		{&www, "http://www.www.example.com/", "http://example.com/"},
		{&www, "http://www.com/", "http://www.com/"},
		{&www, "http://www2.example.com/", "http://www2.example.com/"},
		{&all, "HTTPS://www.Example.com:443/a/../b?z=1&utm_campaign=q&a=2#x", "https://example.com/b?a=2&z=1"},
		{&sort, "http://a/?b='&a=%27", "http://a/?a=%27&b=%27"},
		{&Canonicalizer{}, "http://www.example.com/?b&a", "http://www.example.com/?b&a"},
	}
	for _, tt := range tests {
		got, err := tt.c.Canonical(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("%+v.Canonical(%q) = %q, %v; want %q", *tt.c, tt.in, got, err, tt.want)
		}
		if again, _ := tt.c.Canonical(got); again != got {
			t.Errorf("%+v: Canonical(%q) = %q: not idempotent", *tt.c, got, again)
		}
	}
}

// typicalURLs are the kind of URLs a crawl canonicalizes: already resolved,
// mostly lowercase, some with queries, escapes and default ports.
var typicalURLs = []string{
	"http://www.example.com/",
	"https://en.wikipedia.org/wiki/Web_crawler",
	"http://www.stanford.edu/class/cs276/handouts/lecture14-crawling.pdf",
	"https://www.example.com/search?q=web+crawling&page=2",
	"http://Example.COM:80/a/./b/../c/%7euser/index.html#top",
	"https://news.example.org/2024/05/17/some-long-article-title-here?utm_source=rss",
	"http://h012.sim.test:41234/p/17/3",
	"https://shop.example.co.uk/cat/item%2Fslash?id=123&ref=home",
}

func BenchmarkCanonical(b *testing.B) {
	var n int
	for _, u := range typicalURLs {
		n += len(u)
	}
	b.ReportAllocs()
	b.SetBytes(int64(n / len(typicalURLs)))
	cpu := cputime.Now()
	for i := 0; b.Loop(); i++ {
		if _, err := Canonical(typicalURLs[i%len(typicalURLs)]); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkParseString is the baseline Canonical is measured against: a
// net/url round trip, which normalizes far less.
func BenchmarkParseString(b *testing.B) {
	b.ReportAllocs()
	cpu := cputime.Now()
	for i := 0; b.Loop(); i++ {
		u, err := url.Parse(typicalURLs[i%len(typicalURLs)])
		if err != nil {
			b.Fatal(err)
		}
		_ = u.String()
	}
	reportCPU(b, cpu)
}

func BenchmarkResolve(b *testing.B) {
	base := mustParse(b, "http://www.example.com/a/b/c.html")
	refs := []string{"../d/e.html", "/x?y=1", "https://other.example.org/", "f.html#frag", "  g h.html "}
	b.ReportAllocs()
	cpu := cputime.Now()
	for i := 0; b.Loop(); i++ {
		if _, err := Resolve(base, refs[i%len(refs)]); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// reportCPU reports the process CPU time per URL, which stays meaningful
// when other processes share the cores (ns/op is wall time).
func reportCPU(b *testing.B, start time.Duration) {
	if d := cputime.Now() - start; start > 0 && d > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/url")
	}
}
