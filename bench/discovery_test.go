//go:build unix

package bench

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// BenchmarkCrawlDiscovery explains the polite crawl's distance from the
// naive loop on the bench web: for crawlkit and for the naive loop on
// crawlkit's page set, it reports the CPU time a crawl takes (process
// rusage, the in-process server included) and when the host that sets
// crawlkit's politeness bound (the largest first request + (requests −
// 1) × gap) is first contacted ("found-s"; for the naive loop, when the
// naive loop first contacts that same host).
func BenchmarkCrawlDiscovery(b *testing.B) {
	web := newCrawlWeb()
	defer web.Close()
	traps := map[string]bool{}
	for _, h := range trapHosts(web) {
		traps[h] = true
	}
	var ckCPU, naiveCPU, ckFound, naiveFound, ckEnd, naiveEnd time.Duration
	for b.Loop() {
		web.ResetLog()
		c0, start := cpuTime(), time.Now()
		_, _, el := naiveCrawl(b, web, traps, bestWorkers, true)
		naiveCPU += cpuTime() - c0
		naiveEnd += el
		naive := firstContacts(web.Log(), start)

		web.ResetLog()
		c, err := crawlkit.New(crawlkit.Config{
			Seeds: web.Seeds(),
			Resolver: dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}),
			AllowPrivate: true, PrivateSuffixes: []string{web.Domain()}, Workers: bestWorkers,
			DelayFactor: -1, MinDelay: crawlGap, MaxRetries: -1, NoSitemaps: true, // as BenchmarkCrawlCrawlkit
			Filters: append(frontier.DefaultFilters(), frontier.Domains(nil, trapHosts(web))),
			Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			b.Fatal(err)
		}
		c0, start = cpuTime(), time.Now()
		s, err := c.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		ckCPU += cpuTime() - c0
		ckEnd += s.Elapsed
		log := web.Log()
		ck := firstContacts(log, start)
		worst, bound := "", time.Duration(-1)
		n := map[string]int{}
		for _, r := range log {
			n[r.Host]++
		}
		for h, first := range ck {
			if t := first + time.Duration(n[h]-1)*crawlGap; t > bound {
				worst, bound = h, t
			}
		}
		ckFound += ck[worst]
		naiveFound += naive[worst]
	}
	per := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) }
	b.ReportMetric(per(ckCPU), "crawlkit-cpu-s")
	b.ReportMetric(per(naiveCPU), "naive-cpu-s")
	b.ReportMetric(per(ckEnd), "crawlkit-s")
	b.ReportMetric(per(naiveEnd), "naive-s")
	b.ReportMetric(per(ckFound), "crawlkit-found-s")
	b.ReportMetric(per(naiveFound), "naive-found-s")
}

// firstContacts returns when each host of log was first requested,
// counted from start.
func firstContacts(log []fetchtest.Request, start time.Time) map[string]time.Duration {
	m := map[string]time.Duration{}
	for _, r := range log {
		d := r.Start.Sub(start)
		if f, ok := m[r.Host]; !ok || d < f {
			m[r.Host] = d
		}
	}
	return m
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
