package crawlkit

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestCrawlUnderDNSFaults resolves the simulated web through a real DNS
// server (dnstest) that misbehaves: one name never answers (the resolver
// times out), one answers SERVFAIL, one ordinary host's name flaps
// (SERVFAIL on every other query), the wildcard answers the rest. The
// crawler's resolver is the caching resolver of package dns with three
// attempts per lookup. The test shows that failed lookups are retried
// (the query log), that the crawl goes on and finishes, that the flapping
// host is crawled completely, and that the dead names end counted.
func TestCrawlUnderDNSFaults(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 31, Hosts: 6, MeanPages: 6, Mirrors: -1,
		ChangePeriods: []time.Duration{0}, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	srv := dnstest.Start(t, dnstest.Config{})
	srv.AddWildcard("sim.test", 300, netip.MustParseAddr("127.0.0.1"))

	_, port, _ := net.SplitHostPort(web.Addr())
	const (
		dead     = "dead.sim.test"     // never answers
		servfail = "servfail.sim.test" // always SERVFAIL
	)
	flapping := web.Host("h001")
	srv.SetFault(dead, dnstest.Fault{Mode: dnstest.Drop})
	srv.SetFault(servfail, dnstest.Fault{Mode: dnstest.ServFail})
	srv.SetFault(flapping, dnstest.Fault{Mode: dnstest.ServFail, Flap: true})

	const attempts = 3
	res, err := dns.New(&dns.Options{Nameservers: []string{srv.Addr()}, Network: "ip4",
		Timeout: 100 * time.Millisecond, Backoff: 1, Attempts: attempts})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()

	var (
		mu      sync.Mutex
		errKind = map[string]string{}
	)
	deadURL := "http://" + dead + ":" + port + "/"
	servfailURL := "http://" + servfail + ":" + port + "/"
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Seeds = append(web.Seeds(), deadURL, servfailURL)
		cfg.Resolver = res
		cfg.Fetcher = fetch.NewHTTP(&fetch.Options{Resolver: res, AllowPrivate: true, Timeout: 5 * time.Second})
		cfg.AllowPrivate = false
		cfg.MaxPagesPerHost = 40
		cfg.MaxRetries = 1
		cfg.OnError = func(u string, err error) {
			k := fetch.KindOther
			if fe, ok := err.(*fetch.Error); ok {
				k = fe.Kind
			}
			mu.Lock()
			errKind[u] = k.String()
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("crawl took %v\n%s", time.Since(start).Round(time.Millisecond), s.Summary())
	if ctx.Err() != nil {
		t.Fatal("the crawl did not finish within 30 s")
	}

	// Retries: each failed lookup of a dead name was asked attempts
	// times (per lookup; the crawler may look it up more than once).
	asked := map[string]int{}
	for _, q := range srv.Log() {
		asked[q.Name]++
	}
	t.Logf("queries: %s %d, %s %d, %s %d", dead, asked[dead], servfail, asked[servfail], flapping, asked[flapping])
	for _, n := range []string{dead, servfail} {
		if asked[n] < attempts {
			t.Errorf("%s asked %d times, want ≥ %d (the resolver retries)", n, asked[n], attempts)
		}
	}
	if asked[flapping] < 2 {
		t.Errorf("flapping %s asked %d times, want ≥ 2 (one SERVFAIL, then the retry)", flapping, asked[flapping])
	}

	// The crawl goes on: every reachable page, the flapping host's too,
	// was requested.
	if missing := missingPages(web); len(missing) > 0 {
		t.Errorf("%d reachable pages never requested, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
	for _, r := range web.Log() {
		if r.Host == dead || r.Host == servfail {
			t.Errorf("the server got a request for %s%s, whose name does not resolve", r.Host, r.Path)
		}
	}

	// The dead names end counted: as a fetch error of kind dns, or, when
	// the failure hits the robots.txt fetch first, as robots denied
	// (RFC 9309 §2.3.1.4: an unreachable robots.txt disallows all).
	mu.Lock()
	defer mu.Unlock()
	for _, u := range []string{deadURL, servfailURL} {
		cu, _ := url.Parse(u)
		if k, ok := errKind[u]; ok && k != fetch.KindDNS.String() {
			t.Errorf("%s ended with a %q error, want dns", cu.Host, k)
		}
	}
	if n := s.Errors[fetch.KindDNS.String()] + s.Outcomes[RobotsDenied]; n < 2 {
		t.Errorf("dns errors %d + robots denied %d: the two dead names were not both counted", s.Errors[fetch.KindDNS.String()], s.Outcomes[RobotsDenied])
	}
	checkFetchErrorAccounting(t, s)
	if s.Errors[fetch.KindDNS.String()] == 0 {
		t.Errorf("a host whose name does not resolve was not counted under the dns kind: robots denied %d, errors %v",
			s.Outcomes[RobotsDenied], s.Errors)
	}
}
