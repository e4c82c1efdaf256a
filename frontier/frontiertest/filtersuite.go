package frontiertest

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
)

// Case is one line of a URL filter's table: the filter must accept URL,
// or, when Reject is set, refuse it with Reason.
type Case struct {
	URL    string
	Reject bool
	Reason frontier.Reason
}

// Cases is a URL filter's table. RunFilter checks it in order on one
// filter, so a stateful filter (frontier.HostBudget) may expect the
// answer its earlier lines lead to.
type Cases []Case

// RunFilter runs the conformance suite of frontier.URLFilter as subtests
// of t, on filters made by newFilter (one per subtest, so that a stateful
// filter starts afresh): the caller's cases hold, in order; every
// rejection is a *frontier.Rejection that wraps frontier.ErrRejected and
// carries a known Reason, which frontier.ReasonOf returns; Filter never
// panics, whatever the *url.URL (zero, no host, IPv6, huge or odd paths,
// percent-escapes, opaque URLs); and one filter is safe for concurrent
// use: under the race detector, and with the answers of the cases
// unchanged when the filter gives the same answers on a second pass (a
// stateful filter's answers are only checked to be valid).
func RunFilter(t *testing.T, newFilter func() frontier.URLFilter, cases Cases) {
	us := make([]*url.URL, len(cases))
	for i, c := range cases {
		u, err := url.Parse(c.URL)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		us[i] = u
	}
	t.Run("Cases", func(t *testing.T) {
		f := newFilter()
		for i, c := range cases {
			if msg := checkCase(f, us[i], c); msg != "" {
				t.Errorf("case %d: %s", i, msg)
			}
		}
	})
	t.Run("OddURLs", func(t *testing.T) {
		f := newFilter()
		for _, o := range oddURLs() {
			for range 2 {
				if msg := filterOnce(f, o.u); msg != "" {
					t.Errorf("%s: %s", o.name, msg)
					break
				}
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) { testFilterConcurrent(t, newFilter, cases, us) })
}

// checkCase filters u and compares the outcome with c; "" if it holds.
func checkCase(f frontier.URLFilter, u *url.URL, c Case) string {
	panicked, err := filter(f, u)
	switch {
	case panicked != nil:
		return fmt.Sprintf("Filter(%s) panicked: %v", c.URL, panicked)
	case !c.Reject && err != nil:
		return fmt.Sprintf("Filter(%s) = %v, want accepted", c.URL, err)
	case c.Reject && err == nil:
		return fmt.Sprintf("Filter(%s) accepted it, want a rejection (%s)", c.URL, c.Reason)
	case c.Reject:
		if msg := checkRejection(err); msg != "" {
			return fmt.Sprintf("Filter(%s): %s", c.URL, msg)
		}
		if r, _ := frontier.ReasonOf(err); r != c.Reason {
			return fmt.Sprintf("Filter(%s) rejected it for %s, want %s: %v", c.URL, r, c.Reason, err)
		}
	}
	return ""
}

// filterOnce filters u and checks the outcome is an acceptance or a
// valid rejection; "" if so.
func filterOnce(f frontier.URLFilter, u *url.URL) string {
	panicked, err := filter(f, u)
	if panicked != nil {
		return fmt.Sprintf("Filter panicked: %v", panicked)
	}
	if err != nil {
		return checkRejection(err)
	}
	return ""
}

// filter calls f.Filter(u), recovering a panic.
func filter(f frontier.URLFilter, u *url.URL) (panicked any, err error) {
	defer func() { panicked = recover() }()
	return nil, f.Filter(u)
}

// checkRejection says what is wrong with a filter's error, "" if nothing.
func checkRejection(err error) string {
	var rej *frontier.Rejection
	if !errors.As(err, &rej) {
		return fmt.Sprintf("error %v (%T) is not a *frontier.Rejection", err, err)
	}
	if !errors.Is(err, frontier.ErrRejected) {
		return fmt.Sprintf("error %v does not wrap frontier.ErrRejected", err)
	}
	r, ok := frontier.ReasonOf(err)
	if !ok || r != rej.Reason {
		return fmt.Sprintf("ReasonOf(%v) = %v, %v; want %v, true", err, r, ok, rej.Reason)
	}
	if strings.HasPrefix(r.String(), "reason(") {
		return fmt.Sprintf("rejection %v has an unknown Reason %d", err, uint8(r))
	}
	if err.Error() == "" {
		return "rejection with an empty message"
	}
	return ""
}

type oddURL struct {
	name string
	u    *url.URL
}

// oddURLs returns URLs a crawl meets or a caller may build: every filter
// must answer them without panicking.
func oddURLs() []oddURL {
	parse := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			panic(err)
		}
		return u
	}
	var many, distinct strings.Builder
	for i := range 5000 {
		many.WriteString("/a/b")
		fmt.Fprintf(&distinct, "/s%d", i)
	}
	var params strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&params, "p%d=%d&", i, i)
	}
	return []oddURL{
		{"zero URL", &url.URL{}},
		{"scheme only", &url.URL{Scheme: "http"}},
		{"empty host", parse("http:///path/x.html")},
		{"port only", parse("http://:8080/")},
		{"IPv6", parse("http://[::1]:8080/a/b?x=1")},
		{"IPv6 zone", parse("http://[fe80::1%25eth0]/")},
		{"unclosed bracket", &url.URL{Scheme: "http", Host: "[::1", Path: "/"}},
		{"IPv4 bad port", &url.URL{Scheme: "http", Host: "127.0.0.1:99999", Path: "/"}},
		{"userinfo", parse("http://user:pass@a.test/")},
		{"empty user", &url.URL{Scheme: "http", Host: "a.test", User: url.User("")}},
		{"opaque mailto", parse("mailto:someone@a.test")},
		{"javascript", parse("javascript:alert(1)")},
		{"no scheme", parse("//a.test/relative")},
		{"path only", parse("/just/a/path")},
		{"query only", parse("?q=1")},
		{"fragment only", parse("#top")},
		{"upper case", parse("HTTP://A.TEST/UPPER.JPG")},
		{"unicode host", &url.URL{Scheme: "http", Host: "bücher.test", Path: "/ü"}},
		{"trailing dot", parse("http://a.test./")},
		{"dots host", &url.URL{Scheme: "http", Host: "..", Path: "/"}},
		{"long host", &url.URL{Scheme: "http", Host: strings.Repeat("a.", 5000) + "test", Path: "/"}},
		{"huge path", &url.URL{Scheme: "http", Host: "a.test", Path: "/" + strings.Repeat("x", 1<<20)}},
		{"10000 repeated segments", &url.URL{Scheme: "http", Host: "a.test", Path: many.String()}},
		{"5000 distinct segments", &url.URL{Scheme: "http", Host: "a.test", Path: distinct.String()}},
		{"slashes", &url.URL{Scheme: "http", Host: "a.test", Path: strings.Repeat("/", 1000)}},
		{"escaped slashes", parse("http://a.test/" + strings.Repeat("%2F", 1000) + "x.jpg")},
		{"escapes", parse("http://a.test/%E2%82%AC/%20x%2e%2E/?q=%25&r=%zz")},
		{"bad RawPath", &url.URL{Scheme: "http", Host: "a.test", Path: "/é ü/%", RawPath: "/%zz"}},
		{"NUL and controls", &url.URL{Scheme: "http", Host: "a.test", Path: "/a\x00b\r\n", RawQuery: "\x00"}},
		{"5000 params", &url.URL{Scheme: "http", Host: "a.test", Path: "/", RawQuery: params.String()}},
		{"empty params", parse("http://a.test/?&&&&=&")},
		{"dot extension", parse("http://a.test/dir/.")},
		{"bare extension", parse("http://a.test/.jpg")},
		{"fragment", &url.URL{Scheme: "https", Host: "a.test", Path: "/p", Fragment: "x y", RawFragment: "x%20y"}},
		{"invalid UTF-8", &url.URL{Scheme: "http", Host: "a.test\xff", Path: "/\xfe\xff"}},
	}
}

// testFilterConcurrent runs the cases and the small odd URLs through one
// filter from many goroutines.
func testFilterConcurrent(t *testing.T, newFilter func() frontier.URLFilter, cases Cases, us []*url.URL) {
	// A filter that gives the same answers twice in a row is held to its
	// table under concurrency too.
	repeatable := true
	f := newFilter()
	first := make([]bool, len(cases))
	for i := range cases {
		_, err := filter(f, us[i])
		first[i] = err == nil
	}
	for i := range cases {
		if _, err := filter(f, us[i]); (err == nil) != first[i] {
			repeatable = false
		}
	}
	var odd []oddURL
	for _, o := range oddURLs() {
		if len(o.u.Path) < 1000 && len(o.u.RawQuery) < 1000 && len(o.u.Host) < 1000 {
			odd = append(odd, o)
		}
	}
	f = newFilter()
	const workers, rounds = 16, 20
	var mu sync.Mutex
	var errs []string // distinct, at most 10
	report := func(msg string) {
		mu.Lock()
		if len(errs) < 10 && !slices.Contains(errs, msg) {
			errs = append(errs, msg)
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				for k := range cases {
					i := (k + w + r) % len(cases)
					if repeatable {
						if msg := checkCase(f, us[i], cases[i]); msg != "" {
							report(fmt.Sprintf("case %d: %s", i, msg))
						}
					} else if msg := filterOnce(f, us[i]); msg != "" {
						report(fmt.Sprintf("case %d: %s", i, msg))
					}
				}
				o := odd[(w+r)%len(odd)]
				if msg := filterOnce(f, o.u); msg != "" {
					report(o.name + ": " + msg)
				}
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		t.Error("concurrent: " + e)
	}
}
