package crawlkit

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestPolitenessKeys: every host of the simulated web resolves to
// 127.0.0.1 and, without Config.PrivateSuffixes, lies in one registrable
// domain (sim.test). Keyed by IP or by domain, the crawl then asks the
// one server one request at a time, each a gap after the one before;
// keyed by host (the default), requests to different hosts overlap.
func TestPolitenessKeys(t *testing.T) {
	const gap = 8 * time.Millisecond
	for _, tc := range []struct {
		key     PolitenessKey
		overlap bool
	}{
		{KeyHost, true},
		{KeyDomain, false},
		{KeyIP, false},
	} {
		t.Run(tc.key.String(), func(t *testing.T) {
			web := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 4, MeanPages: 4, MaxPages: 6, ChangePeriods: []time.Duration{0},
				CrawlDelay: time.Millisecond, Latency: 3 * time.Millisecond, Mirrors: -1, NearDuplicates: -1})
			defer web.Close()
			c := newTestCrawler(t, web, func(cfg *Config) {
				cfg.PrivateSuffixes = nil
				cfg.PolitenessKey = tc.key
				cfg.DelayFactor, cfg.MinDelay, cfg.MaxRetries = -1, gap, -1
				cfg.MaxPages = 40
			})
			s, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			log := web.Log()
			sort.Slice(log, func(i, j int) bool { return log[i].Start.Before(log[j].Start) })
			overlaps, hosts := 0, map[string]bool{}
			for i, r := range log {
				hosts[r.Host] = true
				if i == 0 {
					continue
				}
				prev := log[i-1]
				if r.Start.Before(prev.End) {
					overlaps++
				} else if !tc.overlap && r.Start.Sub(prev.End) < gap-2*time.Millisecond {
					t.Errorf("%s%s started %v after %s%s ended, want ≥ %v", r.Host, r.Path, r.Start.Sub(prev.End), prev.Host, prev.Path, gap)
				}
			}
			if len(hosts) < 3 || s.Pages() < 10 {
				t.Fatalf("%d hosts, %d pages: too small a crawl to tell", len(hosts), s.Pages())
			}
			if tc.overlap && overlaps == 0 {
				t.Errorf("keyed by host, no two requests to different hosts overlapped in %d", len(log))
			}
			if !tc.overlap && overlaps > 0 {
				t.Errorf("keyed by %v, %d requests overlapped another to the same server", tc.key, overlaps)
			}
		})
	}
	if _, err := ParsePolitenessKey("ip"); err != nil {
		t.Error(err)
	}
	if _, err := ParsePolitenessKey("url"); err == nil {
		t.Error(`ParsePolitenessKey("url") accepted`)
	}
}
