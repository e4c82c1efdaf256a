package crawlkit

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// BenchmarkScheduleCrawl crawls a power-law web (fetchtest's Pareto host
// sizes: 300 hosts, 30 pages on average, up to 600) under a fixed 20 ms
// gap per host, once per frontier.HostOrder, with 4 workers (12 back
// queues for 300 hosts: the order decides) and with 16 (48 back queues:
// the largest host's pages one gap apart decide). Besides pages/s it
// reports the time to 99% of the pages and makespan/bound, where the
// bound is what politeness alone imposes on the crawl as it went: for
// each host, its requests one gap apart (robots.txt included), the
// largest such span. "contact-p50-s" is the median time from a host's
// first link on a page fetched (OnPage) to its first request: how long
// a host found waits for a back queue.
func BenchmarkScheduleCrawl(b *testing.B) {
	const gap = 20 * time.Millisecond
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 300, MeanPages: 30, MaxPages: 600,
		Latency: time.Millisecond, ChangePeriods: []time.Duration{0}, CrawlDelay: gap, RetryAfter: time.Second})
	defer web.Close()
	var traps []string
	for _, h := range web.Hosts() {
		if strings.HasPrefix(h, "trap-") {
			traps = append(traps, h)
		}
	}
	for _, bc := range []struct {
		workers int
		order   frontier.HostOrder
	}{
		{4, frontier.MostWork}, {4, frontier.EarliestContact},
		{16, frontier.MostWork}, {16, frontier.EarliestContact},
	} {
		workers, order := bc.workers, bc.order
		b.Run(fmt.Sprintf("workers=%d/%v", workers, order), func(b *testing.B) {
			var pages uint64
			var elapsed, t99, makespan, bound, contact time.Duration
			for b.Loop() {
				f, err := frontier.NewMercator(&frontier.Options{Workers: workers, HostOrder: order,
					Politeness: frontier.Politeness{K: -1, MinDelay: gap}})
				if err != nil {
					b.Fatal(err)
				}
				var start time.Time
				found := newFirstLinks()
				c, err := New(Config{
					Seeds: web.Seeds(), Resolver: webResolver(), AllowPrivate: true, PrivateSuffixes: []string{web.Domain()}, Frontier: f,
					Workers: workers, DelayFactor: -1, MinDelay: gap, MaxRetries: -1,
					Filters: append(frontier.DefaultFilters(), frontier.Domains(nil, traps)),
					Logger:  quietLogger(),
					OnPage:  func(p *Page) { found.page(p, time.Since(start)) },
				})
				if err != nil {
					b.Fatal(err)
				}
				web.ResetLog()
				start = time.Now()
				s, err := c.Run(context.Background())
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				pages += s.Pages()
				elapsed += s.Elapsed
				r := scheduleFigures(web.Log(), start, gap)
				t99 += r.t99
				makespan += r.makespan
				bound += r.bound
				contact += found.medianWait(r.first)
			}
			b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(pages)/float64(b.N), "pages/crawl")
			b.ReportMetric(t99.Seconds()/float64(b.N), "t99-s")
			b.ReportMetric(float64(makespan)/float64(bound), "makespan/bound")
			b.ReportMetric(contact.Seconds()/float64(b.N), "contact-p50-s")
		})
	}
}

type scheduleResult struct {
	t99, makespan, bound time.Duration
	first                map[string]time.Duration // each host's first request
}

// scheduleFigures reads a crawl's request log: when 99% of the 2xx page
// fetches (robots.txt aside) had ended, when the last request ended, and
// the politeness bound, the largest of a host's requests × gap, and
// when each host was first requested.
func scheduleFigures(log []fetchtest.Request, start time.Time, gap time.Duration) scheduleResult {
	r := scheduleResult{first: make(map[string]time.Duration)}
	var ends []time.Duration
	requests := make(map[string]int)
	for _, q := range log {
		requests[q.Host]++
		if d, ok := r.first[q.Host]; !ok || q.Start.Sub(start) < d {
			r.first[q.Host] = q.Start.Sub(start)
		}
		end := q.End.Sub(start)
		r.makespan = max(r.makespan, end)
		if q.Status/100 == 2 && q.Path != "/robots.txt" {
			ends = append(ends, end)
		}
	}
	for _, n := range requests {
		r.bound = max(r.bound, time.Duration(n-1)*gap)
	}
	if len(ends) > 0 {
		slices.Sort(ends)
		r.t99 = ends[(len(ends)*99+99)/100-1]
	}
	return r
}

// firstLinks records when each host was first linked from a page.
type firstLinks struct {
	mu sync.Mutex
	at map[string]time.Duration
}

func newFirstLinks() *firstLinks { return &firstLinks{at: map[string]time.Duration{}} }

// page records the hosts p links, at time since.
func (f *firstLinks) page(p *Page, since time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range p.Links {
		if u, err := url.Parse(l); err == nil {
			if _, ok := f.at[u.Hostname()]; !ok {
				f.at[u.Hostname()] = since
			}
		}
	}
}

// medianWait returns the median, over the hosts linked and requested,
// of the time from the first link to the host's first request.
func (f *firstLinks) medianWait(first map[string]time.Duration) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var waits []time.Duration
	for h, linked := range f.at {
		if t, ok := first[h]; ok && t >= linked {
			waits = append(waits, t-linked)
		}
	}
	if len(waits) == 0 {
		return 0
	}
	slices.Sort(waits)
	return waits[len(waits)/2]
}
