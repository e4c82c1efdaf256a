package crawlkit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// gatedContent is a content-seen test whose answers wait until the test
// opens its gate, as a partitioned test's answers wait for another node.
// It counts the callers waiting at once.
type gatedContent struct {
	inner dedup.ContentSeen
	mu    sync.Mutex
	cond  *sync.Cond
	open  bool
	wait  int // callers waiting now
	most  int // most callers waiting at once
}

func newGatedContent() *gatedContent {
	g := &gatedContent{inner: &dedup.ExactContent{}}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *gatedContent) Seen(ctx context.Context, d dedup.Doc) (dedup.Match, error) {
	g.mu.Lock()
	g.wait++
	g.most = max(g.most, g.wait)
	g.cond.Broadcast()
	for !g.open {
		g.cond.Wait()
	}
	g.wait--
	g.mu.Unlock()
	return g.inner.Seen(ctx, d)
}

func (g *gatedContent) Forget(ctx context.Context, fp uint64) error { return g.inner.Forget(ctx, fp) }

// waitFor waits until n callers wait at once, or d passes; it returns the
// most that did.
func (g *gatedContent) waitFor(n int, d time.Duration) int {
	stop := time.AfterFunc(d, func() {
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	})
	defer stop.Stop()
	end := time.Now().Add(d)
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.most < n && time.Now().Before(end) {
		g.cond.Wait()
	}
	return g.most
}

func (g *gatedContent) release() {
	g.mu.Lock()
	g.open = true
	g.cond.Broadcast()
	g.mu.Unlock()
}

// lendWeb is a simulated web with enough seeds for 2 × 4 workers to
// fetch at once, closed by the test's cleanup.
func lendWeb(t *testing.T) *fetchtest.Web {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 100, MeanPages: 5, ChangePeriods: []time.Duration{0},
		CrawlDelay: 20 * time.Millisecond, RetryAfter: 20 * time.Millisecond})
	t.Cleanup(web.Close)
	return web
}

// A worker waiting on the content test lends its place: with every answer
// held back, Workers more workers go on fetching (and then wait too), and
// no more than that; once the answers come, the crawl finishes whole with
// Workers goroutines again.
func TestWorkersLendPlaceWhileWaiting(t *testing.T) {
	web := lendWeb(t)
	const workers = 4
	gate := newGatedContent()
	var pages fetchedPages
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Workers = workers
		cfg.ContentSeen = gate
		cfg.Sinks = []Sink{&pages}
		cfg.MaxPagesPerHost = 60 // bounds the traps
		cfg.DelayFactor = 0.25
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type result struct {
		s   Stats
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := c.Run(ctx)
		done <- result{s, err}
	}()
	// Without lending, the crawl stops fetching once Workers answers
	// are held back.
	if got := gate.waitFor(2*workers, 20*time.Second); got != 2*workers {
		gate.release()
		c.pool.mu.Lock()
		t.Logf("%d seeds; %d workers running, %d places lent", len(web.Seeds()), c.pool.running, c.pool.lent)
		c.pool.mu.Unlock()
		t.Fatalf("%d workers waited on the content test at once, want %d (Workers fetching on)", got, 2*workers)
	}
	// The cap holds: nobody else reaches the test.
	time.Sleep(100 * time.Millisecond)
	gate.mu.Lock()
	most := gate.most
	gate.mu.Unlock()
	if most != 2*workers {
		t.Errorf("%d workers waited at once, want at most %d", most, 2*workers)
	}
	gate.release()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if missing := missingPages(web); len(missing) > 0 {
		// missingPages reads the web's log: every reachable page fetched.
		t.Errorf("%d reachable pages never fetched, first %s", len(missing), missing[0])
	}
	c.pool.mu.Lock()
	defer c.pool.mu.Unlock()
	if c.pool.running != 0 || c.pool.active != 0 {
		t.Errorf("after Run: %d workers running, %d active", c.pool.running, c.pool.active)
	}
	if c.pool.next > 2*workers {
		t.Errorf("%d worker indices used, want at most %d", c.pool.next, 2*workers)
	}
	if c.pool.lent < workers {
		t.Errorf("%d places lent, want at least %d", c.pool.lent, workers)
	}
	for host, n := range fetchtest.MaxConcurrency(web.Log()) {
		if n > 1 {
			t.Errorf("host %s saw %d concurrent requests", host, n)
		}
	}
}

// gatedStager is a State whose commits are staged at once and become
// durable when the test opens its gate, as a cluster member's commits
// wait for their log record.
type gatedStager struct {
	*MemState
	gate *gatedContent // reused for its gate and its count of waiters
}

func (g *gatedStager) Stage(ctx context.Context, t *Txn) (func(context.Context) error, error) {
	page := len(t.Done) > 0 // the seeds' commit goes through
	if err := g.Commit(ctx, t); err != nil {
		return nil, err
	}
	if !page {
		return func(context.Context) error { return nil }, nil
	}
	return func(ctx context.Context) error {
		_, err := g.gate.Seen(ctx, dedup.Doc{Text: []byte("x")})
		return err
	}, nil
}

// A worker waiting for its page's commit to be durable (a Stager) lends
// its place as it does for the content test; the staged Txns are seen
// at once, so no URL is fetched twice while the commits wait.
func TestWorkersLendPlaceWhileCommitting(t *testing.T) {
	web := lendWeb(t)
	const workers = 4
	gate := newGatedContent()
	st := &gatedStager{MemState: NewMemState(), gate: gate}
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Workers = workers
		cfg.State = st
		cfg.MaxPagesPerHost = 60 // bounds the traps
		cfg.DelayFactor = 0.25
		cfg.MaxRetries = -1 // a retry would fetch a URL twice
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx)
		done <- err
	}()
	if got := gate.waitFor(2*workers, 20*time.Second); got != 2*workers {
		gate.release()
		t.Fatalf("%d workers waited on their commits at once, want %d (Workers fetching on)", got, 2*workers)
	}
	gate.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if missing := missingPages(web); len(missing) > 0 {
		t.Errorf("%d reachable pages never fetched, first %s", len(missing), missing[0])
	}
	seen := map[string]int{}
	for _, r := range web.Log() {
		if r.Method == "GET" && r.Path != "/robots.txt" {
			seen[r.Host+r.Path]++
		}
	}
	twice := 0
	for _, n := range seen {
		if n > 1 {
			twice++
		}
	}
	if twice > 0 {
		t.Errorf("%d URLs fetched more than once", twice)
	}
}
