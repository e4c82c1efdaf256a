package crawlkit

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func TestHostRulesMatch(t *testing.T) {
	r, err := newHostRules([]HostRule{
		{Match: "docs.example.com", MaxPages: 1},
		{Match: ".example.com", MaxPages: 2},
		{Match: ".a.example.com", MaxPages: 3},
		{Match: ".test", MaxPages: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host string
		want int // MaxPages of the rule, 0 for none
	}{
		{"docs.example.com", 1},
		{"docs.example.com:8080", 1},
		{"www.docs.example.com", 2},
		{"example.com", 2},
		{"b.a.example.com", 3},
		{"a.example.com", 3},
		{"x.test", 4},
		{"example.org", 0},
		{"notexample.com", 0},
		{"[::1]:8080", 0},
	} {
		got := 0
		if h := r.of(tc.host); h != nil {
			got = h.MaxPages
		}
		if got != tc.want {
			t.Errorf("rule of %s: MaxPages %d, want %d", tc.host, got, tc.want)
		}
	}
	for _, bad := range [][]HostRule{
		{{Match: ""}},
		{{Match: "."}},
		{{Match: "Example.com"}},
		{{Match: "http://example.com"}},
		{{Match: "example.com:80"}},
		{{Match: "example.com."}},
		{{Match: "a..b"}},
		{{Match: "example.com", MaxDomainPages: 5}},
		{{Match: "a.test"}, {Match: "a.test"}},
	} {
		if _, err := newHostRules(bad); err == nil {
			t.Errorf("newHostRules(%+v) accepted", bad)
		}
		if _, err := New(Config{Seeds: []string{"http://a.test/"}, HostRules: bad}); err == nil {
			t.Errorf("New accepted HostRules %+v", bad)
		}
	}
}

// TestHostRules: on the simulated web, one host is crawled with a longer
// gap than the others, one with none at all, one has a page budget of
// its own and one domain a domain budget.
func TestHostRules(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 12, MeanPages: 6, MaxPages: 10, ChangePeriods: []time.Duration{0}, CrawlDelay: time.Millisecond})
	defer web.Close()
	const slow, fast = 120 * time.Millisecond, 30 * time.Millisecond
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.DelayFactor, cfg.MinDelay = -1, fast
		cfg.MaxRetries = -1
		cfg.HostRules = []HostRule{
			{Match: "h001.sim.test", MinDelay: slow},
			{Match: "h002.sim.test", MinDelay: -1},
			{Match: "h010.sim.test", MaxPages: 2},
			{Match: ".h007.sim.test", MaxDomainPages: 3},
		}
	})
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byHost := map[string][]fetchtest.Request{}
	for _, r := range web.Log() {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	minGap := func(host string) (time.Duration, int) {
		rs := byHost[host]
		sort.Slice(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
		least := time.Hour
		for i := 1; i < len(rs); i++ {
			least = min(least, rs[i].Start.Sub(rs[i-1].End))
		}
		return least, len(rs)
	}
	if g, n := minGap("h001.sim.test"); n < 3 || g < slow-2*time.Millisecond {
		t.Errorf("h001, MinDelay %v: least gap %v over %d requests", slow, g, n)
	}
	if g, n := minGap("h002.sim.test"); n < 3 || g >= fast {
		t.Errorf("h002, no MinDelay: least gap %v over %d requests, want one under the crawl's %v", g, n, fast)
	}
	if g, n := minGap("h005.sim.test"); n < 3 || g < fast-2*time.Millisecond {
		t.Errorf("h005, the crawl's MinDelay %v: least gap %v over %d requests", fast, g, n)
	}
	pages := func(host string) int {
		n := 0
		for _, r := range byHost[host] {
			if !strings.Contains(r.Path, "robots") && !strings.Contains(r.Path, "sitemap") {
				n++
			}
		}
		return n
	}
	if n := pages("h010.sim.test"); n == 0 || n > 2 {
		t.Errorf("h010 (9 pages), MaxPages 2: %d URLs fetched", n)
	}
	if n := pages("h007.sim.test"); n == 0 || n > 3 {
		t.Errorf("h007 (5 pages), its domain MaxDomainPages 3: %d URLs fetched", n)
	}
	if s.FilteredBy["host budget"] == 0 || s.FilteredBy["domain budget"] == 0 {
		t.Errorf("budgets: filtered by %v", s.FilteredBy)
	}
}
