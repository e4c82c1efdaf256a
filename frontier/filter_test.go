package frontier_test

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
)

func TestFilters(t *testing.T) {
	long := "http://a.test/" + strings.Repeat("x", 2100)
	tests := []struct {
		name   string
		f      frontier.URLFilter
		url    string
		reason frontier.Reason // ReasonOther means accepted
		ok     bool
	}{
		{"scheme http", frontier.Schemes("http", "https"), "http://a.test/", 0, true},
		{"scheme HTTPS", frontier.Schemes("http", "https"), "HTTPS://a.test/", 0, true},
		{"scheme ftp", frontier.Schemes("http", "https"), "ftp://a.test/", frontier.ReasonScheme, false},
		{"scheme mailto", frontier.Schemes("http", "https"), "mailto:x@a.test", frontier.ReasonScheme, false},
		{"domain include sub", frontier.Domains([]string{"example.com"}, nil), "http://www.example.com/", 0, true},
		{"domain include exact", frontier.Domains([]string{"example.com"}, nil), "http://example.com:8080/", 0, true},
		{"domain include lookalike", frontier.Domains([]string{"example.com"}, nil), "http://badexample.com/", frontier.ReasonDomain, false},
		{"domain exclude", frontier.Domains(nil, []string{".ads.test"}), "http://x.ads.test/", frontier.ReasonDomain, false},
		{"domain exclude other", frontier.Domains(nil, []string{"ads.test"}), "http://x.test/", 0, true},
		{"pattern exclude", frontier.Patterns(nil, []*regexp.Regexp{regexp.MustCompile(`/login`)}), "http://a.test/login?x", frontier.ReasonPattern, false},
		{"pattern include miss", frontier.Patterns([]*regexp.Regexp{regexp.MustCompile(`/news/`)}, nil), "http://a.test/sport/1", frontier.ReasonPattern, false},
		{"pattern include hit", frontier.Patterns([]*regexp.Regexp{regexp.MustCompile(`/news/`)}, nil), "http://a.test/news/1", 0, true},
		{"length ok", frontier.MaxLength(2048), "http://a.test/" + strings.Repeat("x", 2000), 0, true},
		{"length over", frontier.MaxLength(2048), long, frontier.ReasonLength, false},
		{"depth ok", frontier.MaxPathDepth(3), "http://a.test/a/b/c", 0, true},
		{"depth trailing slash", frontier.MaxPathDepth(3), "http://a.test/a/b/c/", 0, true},
		{"depth over", frontier.MaxPathDepth(3), "http://a.test/a/b/c/d", frontier.ReasonPathDepth, false},
		{"repeat twice ok", frontier.RepeatedSegments(3), "http://a.test/a/b/a/b", 0, true},
		{"repeat thrice", frontier.RepeatedSegments(3), "http://a.test/a/b/a/b/a", frontier.ReasonRepeatedSegment, false},
		{"repeat calendar", frontier.RepeatedSegments(3), "http://a.test/cal/x/cal/y/cal/z", frontier.ReasonRepeatedSegment, false},
		{"repeat past 16 segments", frontier.RepeatedSegments(3), "http://a.test/" + segs(20) + "/s3/s7/s3", frontier.ReasonRepeatedSegment, false},
		{"repeat after 16 distinct", frontier.RepeatedSegments(2), "http://a.test/" + segs(17) + "/s16", frontier.ReasonRepeatedSegment, false},
		{"no repeat in 40 segments", frontier.RepeatedSegments(2), "http://a.test/" + segs(40), 0, true},
		{"repeat once ok", frontier.RepeatedSegments(1), "http://a.test/", 0, true},
		{"repeat n=1", frontier.RepeatedSegments(1), "http://a.test/a", frontier.ReasonRepeatedSegment, false},
		{"length escaped over", frontier.MaxLength(100), "http://a.test/" + strings.Repeat("%C3%A9", 20), frontier.ReasonLength, false},
		{"length escaped ok", frontier.MaxLength(130), "http://a.test/" + strings.Repeat("%C3%A9", 19), 0, true},
		{"query ok", frontier.MaxQueryParams(2), "http://a.test/?a=1&b=2", 0, true},
		{"query over", frontier.MaxQueryParams(2), "http://a.test/?a=1&b=2&c=3", frontier.ReasonQueryParams, false},
		{"ext page", frontier.Extensions(nil), "http://a.test/index.html", 0, true},
		{"ext none", frontier.Extensions(nil), "http://a.test/dir/", 0, true},
		{"ext jpg", frontier.Extensions(nil), "http://a.test/p/PHOTO.JPG", frontier.ReasonExtension, false},
		{"ext custom", frontier.Extensions([]string{".pdf"}), "http://a.test/x.pdf", frontier.ReasonExtension, false},
		{"chain empty", frontier.Chain{}, "gopher://a.test/", 0, true},
		{"chain first wins", frontier.Chain{frontier.Schemes("http"), frontier.MaxLength(5)}, "ftp://a.test/", frontier.ReasonScheme, false},
		{"defaults trap", frontier.DefaultFilters(), "http://a.test/a/a/a", frontier.ReasonRepeatedSegment, false},
		{"defaults ok", frontier.DefaultFilters(), "https://a.test/news/today.html?id=3", 0, true},
		{"func", frontier.FilterFunc(func(u *url.URL) error { return nil }), "http://a.test/", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			err = tc.f.Filter(u)
			if tc.ok {
				if err != nil {
					t.Fatalf("Filter(%s) = %v, want accept", tc.url, err)
				}
				return
			}
			if !errors.Is(err, frontier.ErrRejected) {
				t.Fatalf("Filter(%s) = %v, want a rejection", tc.url, err)
			}
			if r, ok := frontier.ReasonOf(err); !ok || r != tc.reason {
				t.Fatalf("reason = %v (%v), want %v; err %v", r, ok, tc.reason, err)
			}
			if len(err.Error()) > 3000 {
				t.Errorf("error message of %d bytes", len(err.Error()))
			}
		})
	}
}

// segs returns "s0/s1/…" of n distinct segments.
func segs(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte('/')
		}
		fmt.Fprintf(&b, "s%d", i)
	}
	return b.String()
}

// TestMaxLengthExact checks the filter against the length of String on
// URLs whose escaped form is longer than their parts: it must reject
// exactly those over the limit.
func TestMaxLengthExact(t *testing.T) {
	for _, raw := range []string{
		"http://a.test/" + strings.Repeat("%C3%A9", 30),
		"http://user:p%40ss@a.test/x?q=" + strings.Repeat("%20", 30) + "#" + strings.Repeat("%C3%A9", 10),
		"http://[::1]:8080/a b/" + strings.Repeat("é", 25),
		"mailto:" + strings.Repeat("x", 90),
		"http://a.test/" + strings.Repeat("x", 80),
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		l := len(u.String())
		for _, n := range []int{l - 1, l, l + 1} {
			err := frontier.MaxLength(n).Filter(u)
			if (err != nil) != (l > n) {
				t.Errorf("%s (%d bytes): MaxLength(%d) = %v", raw, l, n, err)
			}
		}
	}
}

func TestHostBudget(t *testing.T) {
	b := frontier.NewHostBudget(2)
	c := frontier.Chain{frontier.Schemes("http"), b}
	var reasons []frontier.Reason
	for _, s := range []string{"http://a.test/1", "ftp://a.test/x", "http://A.test/2", "http://a.test/3", "http://b.test/1"} {
		u, _ := url.Parse(s)
		if r, ok := frontier.ReasonOf(c.Filter(u)); ok {
			reasons = append(reasons, r)
		}
	}
	want := []frontier.Reason{frontier.ReasonScheme, frontier.ReasonHostBudget}
	if len(reasons) != len(want) || reasons[0] != want[0] || reasons[1] != want[1] {
		t.Errorf("reasons = %v, want %v", reasons, want)
	}
	if b.Count("a.test") != 2 || b.Count("b.test") != 1 {
		t.Errorf("counts a=%d b=%d", b.Count("a.test"), b.Count("b.test"))
	}
}

func TestReasonString(t *testing.T) {
	if s := frontier.ReasonRepeatedSegment.String(); s != "repeated-segment" {
		t.Errorf("String = %q", s)
	}
	if s := frontier.Reason(200).String(); s != "reason(200)" {
		t.Errorf("String = %q", s)
	}
	if _, ok := frontier.ReasonOf(errors.New("x")); ok {
		t.Error("ReasonOf of a plain error")
	}
}

// TestFiltersAcceptWithoutAllocating: every link of every page passes the
// chain, so accepting a URL must not allocate (a rejection may: it builds
// its Rejection).
func TestFiltersAcceptWithoutAllocating(t *testing.T) {
	c := frontier.DefaultFilters()
	for _, raw := range []string{
		"http://a.example/",
		"https://www.example.com/news/2024/05/some-article-title.html?id=42&ref=home",
		"http://a.example/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Filter(u); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if n := testing.AllocsPerRun(100, func() { c.Filter(u) }); n != 0 {
			t.Errorf("%s: %v allocations to accept", raw, n)
		}
	}
}
