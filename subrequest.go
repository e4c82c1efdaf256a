package crawlkit

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

// SubrequestOptions governs the requests a fetcher makes on its own on
// the way to a page (a fetch.Gated fetcher, such as a rendering fetcher's
// scripts, styles and data requests). Every one obeys robots.txt, as a
// page fetch does.
//
// A subrequest to the page's own host (its politeness key) is made while
// the crawl holds that host's turn for the page, so it needs no turn of
// its own; the fetcher makes them one at a time. A subrequest to another
// host is a request to that host like any other: it is refused unless
// ThirdParty is set, and then it waits for the host as a page fetch
// would (no other request in flight to it, its gap since the last one),
// and the host's next page waits a gap after it.
type SubrequestOptions struct {
	// ThirdParty lets subrequests go to hosts other than the page's.
	// Default false: they are refused (a page whose scripts live on a
	// CDN then renders without them).
	ThirdParty bool
	// MaxWait bounds a third-party subrequest's wait for its host's
	// turn; past it the subrequest is refused, so two pages whose
	// scripts need each other's hosts cannot hold each other. Default
	// 2 s.
	MaxWait time.Duration
}

// ErrSubrequestRefused is wrapped by the errors a crawl's fetch.Gate
// returns for the subrequests it refuses.
var ErrSubrequestRefused = errors.New("crawlkit: subrequest refused")

// gate is the crawl's fetch.Gate.
type gate struct {
	c       *Crawler
	third   bool
	maxWait time.Duration

	mu    sync.Mutex
	slots map[string]*slot // politeness key → its turn (third-party mode)

	admitted, refused atomic.Uint64
}

// slot is one host's turn: a token whoever contacts the host holds (a
// worker for a lease, the gate for a third-party subrequest), and when
// the host may next be contacted.
type slot struct {
	token chan struct{}
	next  time.Time // guarded by holding token
}

func newGate(c *Crawler, o SubrequestOptions) *gate {
	if o.MaxWait <= 0 {
		o.MaxWait = 2 * time.Second
	}
	return &gate{c: c, third: o.ThirdParty, maxWait: o.MaxWait, slots: map[string]*slot{}}
}

func (g *gate) slot(key string) *slot {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.slots[key]
	if s == nil {
		s = &slot{token: make(chan struct{}, 1)}
		g.slots[key] = s
	}
	return s
}

// enter takes key's turn for a worker's lease or a third-party
// subrequest: it waits for whoever holds it and the gap after their
// request. The returned leave records when the host may next be
// contacted (a zero time changes nothing) and gives the turn back.
func (g *gate) enter(ctx context.Context, key string) (leave func(next time.Time), err error) {
	s := g.slot(key)
	select {
	case s.token <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if d := time.Until(s.next); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			<-s.token
			return nil, ctx.Err()
		}
	}
	return func(next time.Time) {
		if next.After(s.next) {
			s.next = next
		}
		<-s.token
	}, nil
}

// Admit implements fetch.Gate.
func (g *gate) Admit(ctx context.Context, page, sub *url.URL) (func(), error) {
	release, err := g.admit(ctx, page, sub)
	if err != nil {
		g.refused.Add(1)
		return nil, err
	}
	g.admitted.Add(1)
	return release, nil
}

func (g *gate) admit(ctx context.Context, page, sub *url.URL) (func(), error) {
	if sub.Scheme != "http" && sub.Scheme != "https" || sub.Host == "" {
		return nil, fmt.Errorf("%w: %s: not an http(s) URL", ErrSubrequestRefused, sub.Redacted())
	}
	c := g.c
	host := frontier.HostKey(sub.String())
	key := c.keyOf(ctx, host)
	if key == c.keyOf(ctx, frontier.HostKey(page.String())) {
		// The page's own host, whose turn the crawl holds for the page.
		return func() {}, g.allowed(ctx, sub)
	}
	if !g.third {
		return nil, fmt.Errorf("%w: %s: another host than the page's (SubrequestOptions.ThirdParty)", ErrSubrequestRefused, sub.Redacted())
	}
	wctx, cancel := context.WithTimeout(ctx, g.maxWait)
	defer cancel()
	leave, err := g.enter(wctx, key)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: its host was busy for %v", ErrSubrequestRefused, sub.Redacted(), g.maxWait)
	}
	v, err := c.robots.Check(wctx, sub)
	if err != nil {
		leave(time.Time{})
		return nil, fmt.Errorf("%w: %s: robots.txt: %w", ErrSubrequestRefused, sub.Redacted(), err)
	}
	if v.Fetched {
		// robots.txt was fetched in this turn, a request to the host:
		// the subrequest waits a gap after it.
		wait := c.pol.Gap(frontier.Result{Duration: v.FetchTime, CrawlDelay: v.CrawlDelay})
		if !v.Allowed {
			leave(time.Now().Add(wait))
			return nil, fmt.Errorf("%w: %s: disallowed by robots.txt", ErrSubrequestRefused, sub.Redacted())
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
			leave(time.Now().Add(wait))
			return nil, fmt.Errorf("%w: %s: its host's gap outlasted %v", ErrSubrequestRefused, sub.Redacted(), g.maxWait)
		}
	}
	if !v.Allowed {
		leave(time.Time{})
		return nil, fmt.Errorf("%w: %s: disallowed by robots.txt", ErrSubrequestRefused, sub.Redacted())
	}
	started := time.Now()
	return func() {
		gap := c.pol.Gap(frontier.Result{Duration: time.Since(started), CrawlDelay: v.CrawlDelay})
		next := time.Now().Add(gap)
		if h, ok := c.front.(frontier.Holder); ok {
			h.Hold(key, next)
		}
		leave(next)
	}, nil
}

// allowed checks robots.txt for sub.
func (g *gate) allowed(ctx context.Context, sub *url.URL) error {
	v, err := g.c.robots.Check(ctx, sub)
	if err != nil {
		return fmt.Errorf("%w: %s: robots.txt: %w", ErrSubrequestRefused, sub.Redacted(), err)
	}
	if !v.Allowed {
		return fmt.Errorf("%w: %s: disallowed by robots.txt", ErrSubrequestRefused, sub.Redacted())
	}
	return nil
}

var _ fetch.Gate = (*gate)(nil)

// enterLease takes the turn of the host of w's lease when third-party
// subrequests are on, so that none is made to the host during the
// lease; it returns what to call after the lease's requests.
func (c *Crawler) enterLease(ctx context.Context, w *work) (leave func(), ok bool) {
	if c.gate == nil || !c.gate.third {
		return func() {}, true
	}
	done, err := c.gate.enter(ctx, c.keyOf(ctx, frontier.HostKey(w.l.URL.URL)))
	if err != nil {
		// Stopping: the URL stays pending.
		w.requeue, w.res.Requeue = true, true
		return nil, false
	}
	return func() {
		var next time.Time
		if !w.res.Ended.IsZero() {
			next = w.res.Ended.Add(c.pol.Gap(w.res))
		}
		done(next)
	}, true
}
