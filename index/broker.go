package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// BrokerOptions configures a Broker.
type BrokerOptions struct {
	// Shards are the document-partitioned shards searched for every query
	// (the high tier when Low is set). Required.
	Shards []Searcher
	// Low is the low tier: shards searched only when Shards return fewer
	// than MinHits hits (the book's §7.2.1 tiered index). nil means none.
	Low []Searcher
	// MinHits is the number of high-tier hits below which the low tier is
	// searched too; 0 means the query's K.
	MinHits int
	// Refresh is the period of the background refresh of global statistics;
	// 0 means one minute, negative disables the background goroutine (call
	// Refresh yourself).
	Refresh time.Duration
	// OnRefreshError, if set, is called (from the background goroutine) when
	// a background refresh fails; the previous statistics stay in use.
	OnRefreshError func(error)
}

// Broker searches a document-partitioned index: it fans every query out to
// all shards, with the same global statistics for all of them, and merges
// their top k. Global statistics (N, total length, df of every term) are
// gathered from the shards by Refresh, which a background goroutine calls
// periodically, as the book's "background processes" do. Because every
// shard scores with the same statistics and the same summation order, a
// document's score does not depend on the partitioning.
//
// A Broker is itself a Searcher, so brokers nest. Safe for concurrent use;
// Close stops the background goroutine.
type Broker struct {
	shards, low []Searcher
	minHits     int

	mu     sync.RWMutex
	global *Stats // snapshot; nil until the first refresh

	refreshMu sync.Mutex // one refresh at a time
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closed    chan struct{}
	closeOnce sync.Once
}

var _ Searcher = (*Broker)(nil)

// NewBroker returns a broker over opts.Shards and starts its background
// refresh (the first refresh happens at once, in the background; a query
// that arrives before it completes refreshes synchronously).
//
// opts may be nil, but Shards is required: nil, like empty Shards, fails
// with an *Error. The options are copied (the Shards and Low slices too),
// so the caller may change or reuse them afterwards.
func NewBroker(opts *BrokerOptions) (*Broker, error) {
	var o BrokerOptions
	if opts != nil {
		o = *opts
	}
	if len(o.Shards) == 0 {
		return nil, &Error{Op: "broker", Err: errors.New("no shards")}
	}
	b := &Broker{shards: slices.Clone(o.Shards), low: slices.Clone(o.Low), minHits: o.MinHits, closed: make(chan struct{})}
	period := o.Refresh
	if period == 0 {
		period = time.Minute
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	if period > 0 {
		b.wg.Add(1)
		go b.loop(ctx, period, o.OnRefreshError)
	}
	return b, nil
}

func (b *Broker) loop(ctx context.Context, period time.Duration, onErr func(error)) {
	defer b.wg.Done()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if err := b.Refresh(ctx); err != nil && onErr != nil && ctx.Err() == nil {
			onErr(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Close stops the background refresh and waits for it to finish. Searches
// after Close fail with ErrClosed.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		close(b.closed)
		b.cancel()
	})
	b.wg.Wait()
	return nil
}

func (b *Broker) all() []Searcher {
	return append(append([]Searcher(nil), b.shards...), b.low...)
}

// Refresh gathers the statistics of every shard (both tiers) and makes
// their sum the global statistics used by later queries. Cost: one Stats
// call per shard carrying its whole dictionary.
func (b *Broker) Refresh(ctx context.Context) error {
	b.refreshMu.Lock()
	defer b.refreshMu.Unlock()
	st, err := b.gather(ctx, nil)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.global = st
	b.mu.Unlock()
	return nil
}

// Stats returns the sum of the shards' current statistics for terms.
func (b *Broker) Stats(ctx context.Context, terms []string) (*Stats, error) {
	return b.gather(ctx, terms)
}

func (b *Broker) gather(ctx context.Context, terms []string) (*Stats, error) {
	shards := b.all()
	parts := make([]*Stats, len(shards))
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	for i, s := range shards {
		wg.Go(func() { parts[i], errs[i] = s.Stats(ctx, terms) })
	}
	wg.Wait()
	sum := &Stats{DF: map[string]int64{}}
	for i := range parts {
		if errs[i] != nil {
			return nil, &Error{Op: "stats", Subject: fmt.Sprintf("shard %d", i), Err: errs[i]}
		}
		sum.Add(parts[i])
	}
	return sum, nil
}

// globalFor returns the query's statistics from the last refresh (refreshing
// first if there was none). Terms unknown at refresh time have df 0.
func (b *Broker) globalFor(ctx context.Context, terms []string) (*Stats, error) {
	b.mu.RLock()
	g := b.global
	b.mu.RUnlock()
	if g == nil {
		if err := b.Refresh(ctx); err != nil {
			return nil, err
		}
		b.mu.RLock()
		g = b.global
		b.mu.RUnlock()
	}
	st := &Stats{Docs: g.Docs, Length: g.Length, DF: make(map[string]int64, len(terms))}
	for _, t := range terms {
		if n, ok := g.DF[t]; ok {
			st.DF[t] = n
		}
	}
	return st, nil
}

// Search fans q out to the high tier (and the low tier when it returns
// fewer than MinHits hits) with global statistics (nil means the broker's
// refreshed ones) and merges the shards' top k.
func (b *Broker) Search(ctx context.Context, q Query, global *Stats) (*Result, error) {
	select {
	case <-b.closed:
		return nil, &Error{Op: "search", Err: ErrClosed}
	default:
	}
	q = q.Normalize()
	if global == nil {
		var err error
		if global, err = b.globalFor(ctx, q.Terms); err != nil {
			return nil, err
		}
	}
	res, err := b.fanOut(ctx, b.shards, q, global)
	if err != nil {
		return nil, err
	}
	min := b.minHits
	if min <= 0 {
		min = q.K
	}
	if len(b.low) > 0 && len(res.Hits) < min {
		lo, err := b.fanOut(ctx, b.low, q, global)
		if err != nil {
			return nil, err
		}
		res.Hits = MergeHits(q.K, res.Hits, lo.Hits)
		res.Postings += lo.Postings
	}
	return res, nil
}

func (b *Broker) fanOut(ctx context.Context, shards []Searcher, q Query, global *Stats) (*Result, error) {
	results := make([]*Result, len(shards))
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	for i, s := range shards {
		wg.Go(func() { results[i], errs[i] = s.Search(ctx, q, global) })
	}
	wg.Wait()
	lists := make([][]Hit, 0, len(shards))
	res := &Result{}
	for i, r := range results {
		if errs[i] != nil {
			return nil, &Error{Op: "search", Subject: fmt.Sprintf("shard %d", i), Err: errs[i]}
		}
		lists = append(lists, r.Hits)
		res.Postings += r.Postings
	}
	res.Hits = MergeHits(q.K, lists...)
	return res, nil
}
