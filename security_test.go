package crawlkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
)

// rebinder is a resolver whose answer for a name changes between the
// crawler's own resolution (Prefetch, which the crawler calls for every
// host it queues) and the dial: Prefetch sees a public-looking address,
// LookupNetIP (the fetcher's, at dial time) gets 127.0.0.1. LookupNetIP
// never returns the public address, so nothing outside loopback is dialed.
type rebinder struct {
	mu         sync.Mutex
	prefetched map[string]netip.Addr
	lookups    map[string]int
}

func (r *rebinder) Prefetch(hosts ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range hosts {
		h, _, _ = strings.Cut(h, ":")
		r.prefetched[h] = netip.MustParseAddr("93.184.216.34")
	}
}

func (r *rebinder) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.lookups[host]++
	r.mu.Unlock()
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

var _ dns.Resolver = (*rebinder)(nil)

// TestSecurityGuards runs a crawl with AllowPrivate off against an
// internal server on 127.0.0.1 that must never be reached, and a
// stand-in for a public site (public.x.test, fetched by a fetcher that
// permits loopback, since every test server is on loopback) whose page
// links non-http schemes and the internal server, and which redirects to
// the internal server. A third name, rebind.x.test, rebinds: the crawler's
// prefetch sees a public address, the dial-time lookup 127.0.0.1.
func TestSecurityGuards(t *testing.T) {
	var internalHits atomic.Int64
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internalHits.Add(1)
		fmt.Fprint(w, "<html><body>internal admin page</body></html>")
	}))
	defer internal.Close()
	_, iport, _ := net.SplitHostPort(internal.Listener.Addr().String())
	internalURL := "http://127.0.0.1:" + iport + "/admin"

	public := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<html><body>
<a href="file:///etc/passwd">file</a>
<a href="ftp://127.0.0.1:%[1]s/pub">ftp</a>
<a href="gopher://127.0.0.1:%[1]s/1">gopher</a>
<a href="javascript:fetch('http://127.0.0.1:%[1]s/')">js</a>
<a href="data:text/html,hello">data</a>
<a href="mailto:root@localhost">mail</a>
<a href="/to-internal">redirect</a>
<a href="http://localhost:%[1]s/direct">direct</a>
</body></html>`, iport)
		case "/to-internal":
			http.Redirect(w, r, internalURL, http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer public.Close()
	_, pport, _ := net.SplitHostPort(public.Listener.Addr().String())
	publicURL := "http://public.x.test:" + pport + "/"
	rebindURL := "http://rebind.x.test:" + iport + "/"

	reb := &rebinder{prefetched: map[string]netip.Addr{}, lookups: map[string]int{}}
	// Only public.x.test is let through to loopback; every other host
	// goes through the guarded fetcher (AllowPrivate false).
	open := fetch.NewHTTP(&fetch.Options{Resolver: webResolver(), AllowPrivate: true, Timeout: 3 * time.Second})
	guarded := fetch.NewHTTP(&fetch.Options{Resolver: reb, Timeout: 3 * time.Second})
	defer open.Close()
	defer guarded.Close()
	var (
		mu      sync.Mutex
		schemes = map[string]int{}
		errKind = map[string]fetch.Kind{}
	)
	fetcher := fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
		mu.Lock()
		schemes[req.URL.Scheme]++
		mu.Unlock()
		if req.URL.Hostname() == "public.x.test" {
			return open.Fetch(ctx, req)
		}
		return guarded.Fetch(ctx, req)
	})
	c, err := New(Config{
		Seeds:    []string{publicURL, rebindURL},
		Resolver: reb,
		Fetcher:  fetcher,
		Workers:  4,
		Logger:   quietLogger(),
		OnError: func(u string, err error) {
			var fe *fetch.Error
			if errors.As(err, &fe) {
				mu.Lock()
				errKind[u] = fe.Kind
				mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", s.Summary())

	if n := internalHits.Load(); n != 0 {
		t.Errorf("the internal server got %d requests", n)
	}
	mu.Lock()
	defer mu.Unlock()
	for sc, n := range schemes {
		if sc != "http" && sc != "https" {
			t.Errorf("the fetcher was asked for %d %s: URLs", n, sc)
		}
	}
	// file:, ftp: and gopher: links are refused by the URL filter and
	// counted under "scheme"; javascript:, data: and mailto: anchors are
	// not links to the HTML parser and never reach the crawler. Links are
	// then /to-internal, the localhost link, the redirect target and the
	// public host's /sitemap.xml (its robots.txt names no sitemap).
	if n := s.FilteredBy["scheme"]; n != 3 {
		t.Errorf("%d links filtered by scheme, want 3 (file, ftp, gopher): %v", n, s.FilteredBy)
	}
	if s.Links != 7 {
		t.Errorf("%d links, want 7 (3 refused schemes, 2 http links, 1 redirect target, 1 sitemap)", s.Links)
	}
	// The rebinding name: the crawler's own resolution saw a public
	// address, the dial a private one, and the dial was refused.
	if _, ok := reb.prefetched["rebind.x.test"]; !ok {
		t.Logf("the crawler did not prefetch rebind.x.test (its first look saw no public address)")
	}
	if reb.lookups["rebind.x.test"] == 0 {
		t.Errorf("rebind.x.test was never looked up at dial time")
	}
	// The redirect to the internal address and the direct link went back
	// through the crawler (queued) and were refused.
	if s.Outcomes[Redirected] != 1 {
		t.Errorf("%d redirects, want 1", s.Outcomes[Redirected])
	}
	for _, u := range []string{internalURL, rebindURL} {
		if k, ok := errKind[u]; ok && k != fetch.KindRefused {
			t.Errorf("%s failed with kind %v, want refused address", u, k)
		}
	}
	checkFetchErrorAccounting(t, s)
	if s.Errors[fetch.KindRefused.String()] < 2 {
		t.Errorf("refusals of private addresses not counted under \"refused address\": errors %v, robots denied %d", s.Errors, s.Outcomes[RobotsDenied])
	}
}
