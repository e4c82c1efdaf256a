package resolvertest

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/dnstest"
)

// atOnce bounds how long Prefetch may take: it starts resolutions, it
// does not wait for them (the names it is given here take a minute to
// answer, or never do).
const atOnce = 500 * time.Millisecond

// RunPrefetcher runs the conformance suite of dns.Prefetcher as subtests
// of t, on resolvers made by h.New (each asking a dnstest.Server of its
// own on 127.0.0.1) that must implement dns.Prefetcher as well as
// dns.Resolver:
//
//   - Prefetch returns at once, whatever the names: ones whose answers
//     take a minute, ones the server never answers, IP literals, bad
//     names, or a nameserver that is not there at all; and lookups of
//     other names are not held up by the resolutions it started;
//   - the names prefetched resolve afterwards from the resolver's cache:
//     once the server has answered the prefetch's queries, looking the
//     names up (in any case, with or without the trailing dot) sends no
//     query and returns their addresses;
//   - Prefetch and LookupNetIP are safe to call from many goroutines at
//     once, and the lookups get the right answers.
//
// A resolver with NoServer cannot be tested: the suite skips.
func RunPrefetcher(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"ReturnsAtOnce", testPrefetchAtOnce},
		{"Unanswering", testPrefetchUnanswering},
		{"NoServer", testPrefetchNoServer},
		{"Cached", testPrefetchCached},
		{"Concurrent", testPrefetchConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if h.NoServer {
				t.Skip("the resolver cannot be pointed at a test nameserver")
			}
			tc.fn(t, h)
		})
	}
}

// prefetchZone starts the suite's server with names that answer late,
// names that are never answered and names that answer at once.
func prefetchZone(t *testing.T) *dnstest.Server {
	t.Helper()
	s := zone(t)
	s.AddWildcard("slow.test", 300, v4a)
	s.SetFault("*.slow.test", dnstest.Fault{Delay: time.Minute}) // cut short by Close
	s.AddWildcard("drop.test", 300, v4a)
	s.SetFault("*.drop.test", dnstest.Fault{Mode: dnstest.Drop})
	s.AddWildcard("pre.test", 300, v4b, v6a)
	return s
}

// prefetcher returns h's resolver on srv as a dns.Prefetcher.
func prefetcher(t *testing.T, h Harness, addr string) (dns.Resolver, dns.Prefetcher) {
	t.Helper()
	r := h.New(t, addr)
	p, ok := r.(dns.Prefetcher)
	if !ok {
		t.Fatalf("%T does not implement dns.Prefetcher", r)
	}
	return r, p
}

// prefetchNow calls p.Prefetch(hosts...) and fails the test if it does
// not return within atOnce. A Prefetch that blocks is left to the
// resolver's Close.
func prefetchNow(t *testing.T, p dns.Prefetcher, what string, hosts ...string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Prefetch(hosts...)
	}()
	select {
	case <-done:
	case <-time.After(atOnce):
		t.Errorf("Prefetch of %s did not return within %v", what, atOnce)
	}
}

// names returns n names under zone.
func names(n int, zone string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("h%d.%s", i, zone)
	}
	return out
}

// promptly checks that a lookup of another name answers within a second.
func promptly(t *testing.T, r dns.Resolver, what string) {
	t.Helper()
	start := time.Now()
	wantAddrs(t, r, "other.test", v4b)
	if d := time.Since(start); d > time.Second {
		t.Errorf("a lookup took %v %s", d, what)
	}
}

func testPrefetchAtOnce(t *testing.T, h Harness) {
	srv := prefetchZone(t)
	r, p := prefetcher(t, h, srv.Addr())
	prefetchNow(t, p, "names answered after a minute", names(50, "slow.test")...)
	prefetchNow(t, p, "the same names again", names(50, "slow.test")...)
	prefetchNow(t, p, "no names")
	prefetchNow(t, p, "IP literals, localhost and bad names",
		"", "10.0.0.1", "::1", "[::1]", "localhost", "bad..name", "-x-.test", strings.Repeat("a", 300)+".test",
		strings.Repeat("a.", 200)+"test", "a\x00b.test", "\xff.test", ".", "..")
	promptly(t, r, "while 50 prefetched names waited for their answers")
}

func testPrefetchUnanswering(t *testing.T, h Harness) {
	srv := prefetchZone(t)
	r, p := prefetcher(t, h, srv.Addr())
	prefetchNow(t, p, "names the server never answers", names(20, "drop.test")...)
	promptly(t, r, "while 20 prefetched names went unanswered")
	prefetchNow(t, p, "the same names again", names(20, "drop.test")...)
}

func testPrefetchNoServer(t *testing.T, h Harness) {
	// A server that was there and is gone: its port answers nothing.
	srv, err := dnstest.NewServer(dnstest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	srv.Close()
	_, p := prefetcher(t, h, addr)
	prefetchNow(t, p, "names with no nameserver to ask", names(20, "gone.test")...)
}

// quiet waits until the server's log holds a query for every name in
// want (lower case, no trailing dot) and has not grown for a while, and
// returns its length.
func quiet(t *testing.T, srv *dnstest.Server, want []string) int {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	last, since := -1, time.Now()
	for time.Now().Before(deadline) {
		log := srv.Log()
		asked := make(map[string]bool)
		for _, q := range log {
			asked[q.Name] = true
		}
		all := true
		for _, n := range want {
			all = all && asked[n]
		}
		if len(log) != last {
			last, since = len(log), time.Now()
		}
		if all && time.Since(since) >= 100*time.Millisecond {
			return len(log)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var missing []string
	asked := make(map[string]bool)
	for _, q := range srv.Log() {
		asked[q.Name] = true
	}
	for _, n := range want {
		if !asked[n] {
			missing = append(missing, n)
		}
	}
	t.Fatalf("Prefetch sent no query for %v within 3s (or queries never stopped: %d so far)", missing, len(srv.Log()))
	return 0
}

func testPrefetchCached(t *testing.T, h Harness) {
	srv := prefetchZone(t)
	r, p := prefetcher(t, h, srv.Addr())
	hosts := []string{"a.pre.test", "B.Pre.Test", "c.pre.test.", "alias2.test", "four.test"}
	prefetchNow(t, p, "names answered at once", hosts...)
	n := quiet(t, srv, []string{"a.pre.test", "b.pre.test", "c.pre.test", "alias2.test", "four.test"})
	want := map[string][]netip.Addr{
		"a.pre.test": {v4b, v6a}, "b.pre.test": {v4b, v6a}, "c.pre.test": {v4b, v6a},
		"alias2.test": {v4a, v6a}, "four.test": {v4a, v4b},
	}
	for _, host := range append(hosts, "A.PRE.TEST.", "c.pre.test") {
		wantAddrs(t, r, host, want[strings.ToLower(strings.TrimSuffix(host, "."))]...)
	}
	if log := srv.Log(); len(log) != n {
		var extra []string
		for _, q := range log[n:] {
			extra = append(extra, q.Name+"/"+q.Type)
		}
		t.Errorf("lookups of prefetched names sent %d queries %v, want none: they should come from the cache", len(log)-n, extra)
	}
}

func testPrefetchConcurrent(t *testing.T, h Harness) {
	srv := prefetchZone(t)
	r, p := prefetcher(t, h, srv.Addr())
	hosts := names(40, "pre.test")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 10 {
				p.Prefetch(hosts[(w*5+i)%len(hosts)], hosts[(w*7+i*3)%len(hosts)], "h1.drop.test")
			}
		})
		wg.Go(func() {
			for i := range 10 {
				host := hosts[(w*3+i*7)%len(hosts)]
				addrs, err := r.LookupNetIP(ctx, host)
				if err != nil || !sameAddrs(addrs, []netip.Addr{v4b, v6a}) {
					t.Errorf("LookupNetIP(%q) during prefetches = %v, %v; want %v", host, addrs, err, []netip.Addr{v4b, v6a})
					return
				}
			}
		})
	}
	wg.Wait()
}
