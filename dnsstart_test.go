package crawlkit

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// TestCrawlStartResolvesAtOnce starts a crawl of 1,000 hosts it has never
// seen, one seed each, resolving through the crawler's own DNS resolver
// and a local DNS server whose UDP socket has a stock kernel's receive
// buffer (212,992 bytes: about 500 queries). The seeds' hosts are
// resolved as soon as they are queued (the resolver's Prefetch), 2,000 A
// and AAAA queries at once; none may be lost to wait out an attempt
// timeout (1.5 s): every host's first request goes out with no pause of
// that size between two requests of the crawl, and the server reads
// next to every query the resolver sends.
func TestCrawlStartResolvesAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a crawl of 1,000 hosts")
	}
	const hosts, timeout = 1000, 1500 * time.Millisecond
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 4, Hosts: hosts, MeanPages: 2, ChangePeriods: []time.Duration{0}})
	defer web.Close()
	srv := dnstest.Start(t, dnstest.Config{ReadBuffer: 212992})
	srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))
	res, err := dns.New(&dns.Options{Nameservers: []string{srv.Addr()}, Timeout: timeout, Attempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var seeds []string
	for _, h := range web.OrdinaryHosts() {
		seeds = append(seeds, web.URL(h, "/"))
	}
	homeOnly := frontier.FilterFunc(func(u *url.URL) error {
		if u.Path != "/" {
			return errors.New("not a home page")
		}
		return nil
	})
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Seeds = seeds
		cfg.Resolver = res
		cfg.Fetcher = fetch.NewHTTP(&fetch.Options{Resolver: res, AllowPrivate: true, Timeout: 5 * time.Second})
		cfg.AllowPrivate = false
		cfg.Workers = 64
		cfg.Filters = append(frontier.DefaultFilters(), homeOnly)
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	log := web.Log()
	first := map[string]time.Time{}
	var starts []time.Time
	for _, r := range log {
		starts = append(starts, r.Start)
		if f, ok := first[r.Host]; !ok || r.Start.Before(f) {
			first[r.Host] = r.Start
		}
	}
	var last time.Time
	for _, f := range first {
		if f.After(last) {
			last = f
		}
	}
	// Until the last host's first request: later, politeness spaces a
	// host's requests (Crawl-delay), and few hosts are left.
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	pause := starts[0].Sub(start)
	for i := 1; i < len(starts) && !starts[i].After(last); i++ {
		pause = max(pause, starts[i].Sub(starts[i-1]))
	}
	st := res.Stats()
	// Queries the server read: those sent and never read were lost (its
	// receive queue overflowed); a timeout beyond them is an answer that
	// came late.
	received := 0
	for _, q := range srv.Log() {
		if q.Transport == "udp" {
			received++
		}
	}
	t.Logf("%d hosts contacted, the last %v after the start; longest pause before it %v; %d queries, %d of them read by the server, %d retries, %d timeouts, %d answers read late; %s",
		len(first), last.Sub(start).Round(time.Millisecond), pause.Round(time.Millisecond), st.Queries, received, st.Retries, st.Timeouts, st.LateReads, s.String())
	// How long the 1,000 first requests take depends on the machine's
	// load (the test suite runs packages in parallel); a lost query shows
	// as a pause and as a timeout, whatever the load.
	if len(first) < hosts {
		t.Errorf("%d of %d hosts contacted", len(first), hosts)
	}
	if pause >= timeout/2 {
		t.Errorf("a pause of %v between two requests: a lost query waits %v", pause, timeout)
	}
	// A query the server never read is the defect this test is for: a
	// burst overflowed its receive queue (1,488 of 2,016 were lost so).
	// A timeout beyond those is an answer that came later than the
	// adaptive timeout (at least Options.MinTimeout) while a loaded
	// machine held the server back: the lookup still takes it when it
	// comes, and the retry costs one more query. Those are logged, not
	// judged: beside the cluster and crawler packages' race-enabled
	// tests they ranged from 0 to 328 of 2,010, with every query read.
	if lost := int(st.Queries) - received; lost > hosts/10 {
		t.Errorf("%d of %d queries never read by the server, want ≤ %d", lost, st.Queries, hosts/10)
	}
}
