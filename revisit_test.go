package crawlkit

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestRevisitsAreConditional: a continuous crawl sends the validators it
// stored with each page (If-None-Match, If-Modified-Since), so the
// revisits of pages that did not change are 304s without a body, counted
// as Unchanged; once the web's clock passes a page's change period, its
// revisit gets the new version in full.
func TestRevisitsAreConditional(t *testing.T) {
	var offset atomic.Int64 // how far the web's clock is ahead of real time
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 5, Hosts: 3, MeanPages: 5, MaxPages: 8,
		Mirrors: -1, NearDuplicates: -1,
		ChangePeriods: []time.Duration{0, time.Hour},
		Clock:         func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }})
	defer web.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Continuous, cfg.MinRevisit, cfg.MaxRevisit = true, 50*time.Millisecond, 100*time.Millisecond
		cfg.DelayFactor, cfg.MinDelay = -1, 5*time.Millisecond
	})
	done := make(chan Stats, 1)
	go func() {
		s, err := c.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()

	pages := map[string]bool{}
	for _, p := range web.Pages() {
		pages[p] = true
	}
	// fetchesOf counts the GETs of each page in the log since index from,
	// and those answered 304 (with no body).
	type count struct{ gets, notModified, full int }
	tally := func(log []fetchtest.Request) map[string]*count {
		m := map[string]*count{}
		for _, r := range log {
			u := web.URL(r.Host, r.Path)
			if !pages[u] || r.Method != "GET" {
				continue
			}
			k := m[u]
			if k == nil {
				k = &count{}
				m[u] = k
			}
			k.gets++
			switch r.Status {
			case 304:
				k.notModified++
				if r.Bytes != 0 {
					t.Errorf("%s: a 304 with %d body bytes", u, r.Bytes)
				}
			case 200:
				k.full++
			}
		}
		return m
	}
	// waitFor polls the log until every page has cond.
	waitFor := func(what string, from int, cond func(u string, k *count) bool) int {
		deadline := time.Now().Add(20 * time.Second)
		for {
			log := web.Log()
			m := tally(log[from:])
			ok := true
			for u := range pages {
				if k := m[u]; k == nil || !cond(u, k) {
					ok = false
					break
				}
			}
			if ok {
				return len(log)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not every page got there in 20 s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Every page fetched in full once, then revisited twice with 304s.
	mark := waitFor("two conditional revisits", 0, func(_ string, k *count) bool { return k.full >= 1 && k.notModified >= 2 })
	for u, k := range tally(web.Log()[:mark]) {
		if k.full != 1 {
			t.Errorf("%s: %d full fetches before any page changed, want 1", u, k.full)
		}
	}
	// The web moves two hours on: pages with a period of an hour change
	// and are fetched in full again; the others stay 304.
	offset.Store(int64(2 * time.Hour))
	waitFor("revisits after the change", mark, func(u string, k *count) bool {
		if web.ChangePeriod(u) == 0 {
			return k.notModified >= 1
		}
		return k.full >= 1
	})
	changing := 0
	for u := range pages {
		if web.ChangePeriod(u) != 0 {
			changing++
		}
	}
	if changing == 0 || changing == len(pages) {
		t.Fatalf("%d of %d pages change: the web does not test both kinds", changing, len(pages))
	}
	cancel()
	s := <-done
	if s.Outcomes[Unchanged] < uint64(2*len(pages)) {
		t.Errorf("Outcomes[Unchanged] = %d, want ≥ %d: %s", s.Outcomes[Unchanged], 2*len(pages), s.String())
	}
}
