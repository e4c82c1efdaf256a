package frontier_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// TestPolitenessOnSimulatedWeb crawls 200 hosts of a fetchtest.Web with
// 64 workers through a Mercator frontier and checks the server's request
// log: never two requests to a host at once, and every gap at least K
// times the previous request's time (less scheduler jitter).
func TestPolitenessOnSimulatedWeb(t *testing.T) {
	const (
		workers  = 64
		hosts    = 200
		k        = 3.0
		maxPages = 1500
		perHost  = 8
		jitter   = 500 * time.Microsecond
	)
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: hosts, MeanPages: 6, Latency: 2 * time.Millisecond, Mirrors: -1, NearDuplicates: -1})
	defer w.Close()
	client := w.Client()
	defer client.CloseIdleConnections()

	f, err := frontier.NewMercator(&frontier.Options{Workers: workers, Politeness: frontier.Politeness{K: k}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	ordinary := make(map[string]bool)
	var seeds []frontier.URL
	for _, h := range w.OrdinaryHosts() {
		ordinary[h] = true
		seeds = append(seeds, frontier.URL{URL: w.URL(h, "/")})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	budget := frontier.NewHostBudget(perHost - 1) // the home page is extra
	seen := make(map[string]bool)
	for _, s := range seeds {
		seen[s.URL] = true
	}
	if err := f.Add(ctx, seeds...); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				l, err := f.Next(ctx)
				if err != nil {
					return
				}
				start := time.Now()
				req, _ := http.NewRequestWithContext(ctx, "GET", l.URL.URL, nil)
				resp, err := client.Do(req)
				status := 0
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				d := time.Since(start)
				var kids []frontier.URL
				mu.Lock()
				for _, link := range w.Links(l.URL.URL) {
					if len(seen) >= maxPages || seen[link] || !ordinary[frontier.HostKey(link)] {
						continue
					}
					// A per-host budget keeps the largest (Pareto) host
					// from making the crawl as long as its gaps add up to.
					if u, err := url.Parse(link); err != nil || budget.Filter(u) != nil {
						continue
					}
					seen[link] = true
					kids = append(kids, frontier.URL{URL: link, Depth: l.URL.Depth + 1})
				}
				mu.Unlock()
				if err := f.Add(ctx, kids...); err != nil {
					return
				}
				if err := f.Done(l, frontier.Result{Duration: d, Status: status, Err: err}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
		if f.Stats().Pending() == 0 {
			cancel()
		}
	}
	wg.Wait()
	st := f.Stats()
	if st.Pending() != 0 {
		t.Fatalf("crawl did not finish: %+v", st)
	}
	log := w.Log()
	if len(log) != len(seen) {
		t.Errorf("%d requests for %d URLs", len(log), len(seen))
	}
	for h, c := range fetchtest.MaxConcurrency(log) {
		if c > 1 {
			t.Errorf("host %s had %d concurrent requests", h, c)
		}
	}
	byHost := make(map[string][]fetchtest.Request)
	for _, r := range log {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	checked := 0
	for h, rs := range byHost {
		slices.SortFunc(rs, func(a, b fetchtest.Request) int { return a.Start.Compare(b.Start) })
		for i := 1; i < len(rs); i++ {
			prev, cur := rs[i-1], rs[i]
			want := time.Duration(k * float64(prev.End.Sub(prev.Start)))
			if gap := cur.Start.Sub(prev.End); gap < want-jitter {
				t.Errorf("host %s: gap %v after a %v request, want ≥ %v", h, gap, prev.End.Sub(prev.Start), want)
			}
			checked++
		}
	}
	if len(byHost) < hosts || checked < 500 {
		t.Errorf("crawl too small to say much: %d hosts, %d gaps", len(byHost), checked)
	}
	t.Logf("%d requests, %d hosts, %d gaps checked", len(log), len(byHost), checked)
}
