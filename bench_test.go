package crawlkit

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// BenchmarkCrawl measures the whole loop (robots, DNS, HTTP over
// loopback, parsing, duplicate tests, frontier) on a simulated web of 200
// hosts, with and without Mercator's politeness gap (k = 10 × fetch time).
// The figure is pages/s; the simulated web's server runs in the same
// process and takes its share of the CPU.
func BenchmarkCrawl(b *testing.B) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 200, MeanPages: 20, MaxPages: 100,
		ChangePeriods: []time.Duration{0}, CrawlDelay: time.Millisecond, RetryAfter: time.Millisecond})
	defer web.Close()
	for _, bc := range []struct {
		name string
		k    float64
	}{{"k=0", -1}, {"k=10", 10}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var pages uint64
			var elapsed time.Duration
			for b.Loop() {
				c, err := New(Config{
					Seeds: web.Seeds(), Resolver: webResolver(), AllowPrivate: true, PrivateSuffixes: []string{web.Domain()},
					Workers: 64, DelayFactor: bc.k, MaxPagesPerHost: 100, MaxRetries: -1,
					Logger: quietLogger(),
					// The status host's 429 and 503 carry Retry-After,
					// in whole seconds: the host is left alone for 2 s in
					// all, which would be most of the crawl's time and
					// measure the server's word, not the crawl loop.
					ExtraFilters: []frontier.URLFilter{skipHost(web.Host(fetchtest.Statuses))},
				})
				if err != nil {
					b.Fatal(err)
				}
				s, err := c.Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				pages += s.Pages()
				elapsed += s.Elapsed
			}
			b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(pages)/float64(b.N), "pages/crawl")
		})
	}
}

// skipHost is a URL filter that refuses host's URLs.
func skipHost(host string) frontier.FilterFunc {
	return func(u *url.URL) error {
		if u.Hostname() == host {
			return errors.New("skipped host")
		}
		return nil
	}
}
