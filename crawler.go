package crawlkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
)

// Crawler runs the crawl loop of IIR Figure 20.1 over the modules its
// Config names. Create one with New and call Run once.
type Crawler struct {
	cfg Config

	fetcher  fetch.Fetcher
	parser   fetch.Parser
	resolver dns.Resolver
	robots   *robots.Cache
	front    frontier.Frontier
	urlSeen  dedup.URLSeen
	content  dedup.ContentSeen
	bodySeen *dedup.ExactContent // exact duplicates of bodies without text
	filters  frontier.URLFilter
	closers  []io.Closer // what New created, closed by Run in reverse order

	c       counters
	start   atomic.Pointer[time.Time] // set by Run; Stats reads it from any goroutine
	journal *journal                  // nil without CheckpointDir

	hostMu sync.Mutex
	hosts  map[string]int // host → URLs queued, for MaxPagesPerHost and Stats.Hosts

	// robotsFetched holds, per host, how long a robots.txt fetch made on
	// behalf of a worker took, so the worker waits k × that before
	// fetching the page: the robots.txt request counts for politeness.
	robotsFetched sync.Map // host → time.Duration
	// robotsErr holds, per host, the error of its last robots.txt fetch
	// if that failed to get an answer (DNS, refused address, timeout).
	robotsErr sync.Map // host → error

	retryMu sync.Mutex
	retries map[string]int // URL → retries so far (429/503, transient errors)

	// pause is held for reading by workers while they change the frontier
	// and the journal, and for writing by a checkpoint, which needs both
	// to agree.
	pause sync.RWMutex

	// early holds the URLs Add received, with a CheckpointDir, before Run
	// had opened the journal: Run journals and queues them then, so that
	// none is queued unjournaled (and lost to a crash) or raced with the
	// restore. journaled is set, under earlyMu, once c.journal is open.
	earlyMu   sync.Mutex
	early     []frontier.URL
	journaled bool

	sinkErrors atomic.Uint64
	stopReason atomic.Value // string
	ran        atomic.Bool
}

// New returns a Crawler for cfg, creating the default for every nil module.
// It does not touch the network.
func New(cfg Config) (*Crawler, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.ensureDefaults()
	c := &Crawler{cfg: cfg, hosts: map[string]int{}, retries: map[string]int{}}
	if err := c.assemble(); err != nil {
		c.closeAll()
		return nil, err
	}
	return c, nil
}

func (c *Crawler) assemble() error {
	cfg := &c.cfg
	c.resolver = cfg.Resolver
	if c.resolver == nil && cfg.Fetcher == nil {
		r, err := dns.New(nil)
		if err != nil {
			c.resolver = dns.System{}
		} else {
			c.resolver = r
			c.closers = append(c.closers, r)
		}
	}
	c.fetcher = cfg.Fetcher
	if c.fetcher == nil {
		keep := false
		for _, s := range cfg.Sinks {
			if w, ok := s.(WireSink); ok && w.WantsWire() {
				keep = true
			}
		}
		h := fetch.NewHTTP(fetch.Options{Resolver: c.resolver, UserAgent: cfg.UserAgent, AllowPrivate: cfg.AllowPrivate, KeepWire: keep})
		c.fetcher = h
		c.closers = append(c.closers, h)
	}
	c.parser = cfg.Parser
	if c.parser == nil {
		c.parser = &fetch.Registry{}
	}
	c.robots = cfg.Robots
	if c.robots == nil {
		c.robots = robots.NewCache(&robots.Options{Agent: cfg.Agent, Fetch: c.robotsFetch})
		c.closers = append(c.closers, c.robots)
	}
	c.front = cfg.Frontier
	if c.front == nil {
		f, err := frontier.NewMercator(frontier.Options{
			Workers:     cfg.Workers,
			Prioritizer: cfg.Prioritizer,
			Politeness:  frontier.Politeness{K: frontierK(cfg.DelayFactor), MinDelay: cfg.MinDelay, MaxDelay: cfg.MaxDelay},
		})
		if err != nil {
			return err
		}
		c.front = f
		c.closers = append(c.closers, f)
	}
	c.urlSeen = cfg.URLSeen
	if c.urlSeen == nil {
		c.urlSeen = dedup.NewSet(1 << 16)
	}
	c.content = cfg.ContentSeen
	if c.content == nil {
		cs, err := dedup.NewContent(nil)
		if err != nil {
			return err
		}
		c.content = cs
	}
	c.bodySeen = new(dedup.ExactContent)
	c.filters = cfg.Filters
	if c.filters == nil {
		c.filters = frontier.DefaultFilters()
	}
	return nil
}

// frontierK translates the crawler's k (already defaulted; 0 means no
// gap) into frontier.Politeness.K, where 0 means the default.
func frontierK(k float64) float64 {
	if k == 0 {
		return -1
	}
	return k
}

func (c *Crawler) closeAll() {
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i].Close()
	}
	c.closers = nil
}

// robotsFetch is the robots.Cache's FetchFunc: robots.txt goes through the
// crawler's own fetcher (same address guard, same limits), and its
// duration is noted for the politeness gap.
func (c *Crawler) robotsFetch(ctx context.Context, rawURL string) (*robots.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if d, ok := c.robotsFetched.Load(strings.ToLower(u.Hostname())); ok {
		// A redirect hop of the same robots.txt fetch (the page's
		// worker has not taken the entry yet): the host gets the
		// politeness gap after the previous hop, as after any request.
		if !c.politeWait(ctx, d.(time.Duration)) {
			return nil, ctx.Err()
		}
	}
	start := time.Now()
	resp, err := c.fetcher.Fetch(ctx, &fetch.Request{URL: u})
	if resp != nil {
		// A Fetcher need not fill in Timings (fetch.Static does not):
		// the call's own duration stands in.
		d := resp.Timings.Total
		if d <= 0 {
			d = time.Since(start)
		}
		c.robotsFetched.Store(strings.ToLower(u.Hostname()), d)
	}
	host := strings.ToLower(u.Hostname())
	if err != nil {
		// The Cache will answer "disallow all" for this host (RFC 9309
		// §2.3.1.4) until the next attempt; the URLs it turns away are
		// counted as failures of this kind, not as robots denials.
		c.robotsErr.Store(host, err)
		return nil, err
	}
	c.robotsErr.Delete(host)
	c.exchange(ctx, resp, start)
	rr := &robots.Response{Status: resp.Status, Body: resp.Body}
	if resp.Location != nil {
		rr.Location = resp.Location.String()
	}
	return rr, nil
}

// Stats returns a snapshot of the crawl's counters; safe to call at any
// time from any goroutine.
func (c *Crawler) Stats() Stats {
	s := c.c.snapshot()
	if st, ok := c.front.(frontier.Stater); ok {
		s.Frontier = st.Stats()
	}
	c.hostMu.Lock()
	s.Hosts = len(c.hosts)
	c.hostMu.Unlock()
	if start := c.start.Load(); start != nil {
		s.Elapsed = time.Since(*start)
	}
	return s
}

// ErrAlreadyRan is returned by a second call of Run.
var ErrAlreadyRan = errors.New("crawlkit: Run called twice")

// Run crawls until the frontier is empty (unless Continuous), a limit is
// reached, or ctx is done, and returns the final statistics. Cancelling
// ctx is a clean stop: workers finish their current page, a last
// checkpoint is written, the sinks are closed. Run returns a non-nil error
// only when the crawl could not start or its state could not be saved;
// an error of a single page is counted, not returned.
func (c *Crawler) Run(ctx context.Context) (Stats, error) {
	if !c.ran.CompareAndSwap(false, true) {
		return Stats{}, ErrAlreadyRan
	}
	defer c.closeAll()
	defer c.closeSinks()
	start := time.Now()
	c.start.Store(&start)

	resumed := 0
	if c.cfg.CheckpointDir != "" {
		j, n, err := openJournal(ctx, c)
		if err != nil {
			return c.Stats(), err
		}
		c.earlyMu.Lock()
		c.journal, c.journaled, resumed = j, true, n
		early := c.early
		c.early = nil
		c.earlyMu.Unlock()
		defer j.Close()
		if _, err := c.admit(ctx, early); err != nil {
			return c.Stats(), err
		}
	}
	if err := c.addSeeds(ctx); err != nil {
		return c.Stats(), err
	}
	if resumed == 0 && c.c.seeds.Load() == 0 && c.cfg.Splitter == nil {
		if st, ok := c.front.(frontier.Stater); !ok || st.Stats().Pending() == 0 {
			return c.Stats(), ErrNoSeeds
		}
	}
	if resumed > 0 {
		c.cfg.Logger.Info("crawlkit: resumed", "dir", c.cfg.CheckpointDir, "urls", resumed)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.worker(runCtx)
		}()
	}
	hkDone := make(chan error, 1)
	go func() { hkDone <- c.housekeeping(runCtx, stop) }()
	wg.Wait()
	stop()
	err := <-hkDone

	s := c.Stats()
	reason, _ := c.stopReason.Load().(string)
	if reason == "" && ctx.Err() != nil {
		reason = "cancelled"
	}
	c.cfg.Logger.Info("crawlkit: stopped", "reason", reason, "stats", s.String())
	if c.journal != nil {
		if cerr := c.checkpoint(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return s, err
}

func (c *Crawler) closeSinks() {
	for _, s := range c.cfg.Sinks {
		if err := s.Close(); err != nil {
			c.cfg.Logger.Error("crawlkit: closing sink", "err", err)
		}
	}
}

// addSeeds canonicalises the seeds and queues those not seen before (a
// resumed crawl has seen them). In a distributed crawl every node is given
// every seed and queues those of its own hosts.
func (c *Crawler) addSeeds(ctx context.Context) error {
	var batch []frontier.URL
	for _, s := range c.cfg.Seeds {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		canon, err := c.cfg.Canonicalizer.Canonical(s)
		if err != nil {
			return fmt.Errorf("crawlkit: seed %q: %w", s, err)
		}
		u, err := url.Parse(canon)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("crawlkit: seed %q is not an absolute http(s) URL", s)
		}
		if c.cfg.Splitter != nil && !c.cfg.Splitter.Local(frontier.HostKey(canon)) {
			continue
		}
		batch = append(batch, frontier.URL{URL: canon})
	}
	n, err := c.admit(ctx, batch)
	c.c.seeds.Add(uint64(n))
	return err
}

// noteHost counts a URL queued for host and reports whether the host is
// still within MaxPagesPerHost.
func (c *Crawler) noteHost(host string) bool {
	c.hostMu.Lock()
	defer c.hostMu.Unlock()
	n := c.hosts[host]
	if c.cfg.MaxPagesPerHost > 0 && n >= c.cfg.MaxPagesPerHost {
		return false
	}
	c.hosts[host] = n + 1
	return true
}

// prefetch asks the resolver to resolve new hosts in the background, so
// that the name is known by the time the host's turn comes (§20.2.2).
func (c *Crawler) prefetch(batch []frontier.URL) {
	p, ok := c.resolver.(interface{ Prefetch(...string) })
	if !ok || len(batch) == 0 {
		return
	}
	hosts := make([]string, 0, len(batch))
	for i := range batch {
		h := frontier.HostKey(batch[i].URL)
		if len(hosts) == 0 || hosts[len(hosts)-1] != h {
			hosts = append(hosts, h)
		}
	}
	p.Prefetch(hosts...)
}

// worker is one crawl thread: take a URL, process it, report it done.
func (c *Crawler) worker(ctx context.Context) {
	for {
		l, err := c.front.Next(ctx)
		if err != nil {
			return
		}
		c.c.inflight.Add(1)
		c.process(ctx, l)
		c.c.inflight.Add(-1)
	}
}

// housekeeping logs progress, stops the crawl at its limits or when there
// is nothing left to do, and checkpoints.
func (c *Crawler) housekeeping(ctx context.Context, stop context.CancelFunc) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	lastProgress, lastCheckpoint := time.Now(), time.Now()
	idle := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		s := c.Stats()
		if reason := c.limitReached(s); reason != "" {
			c.stopReason.CompareAndSwap(nil, reason)
			stop()
			return nil
		}
		if !c.cfg.Continuous && s.InFlight == 0 && s.Frontier.Pending() == 0 && c.clusterIdle() {
			// Two quiet ticks in a row: a worker between Next and its
			// in-flight count would show as a lease in the frontier.
			if idle++; idle >= 2 {
				c.stopReason.CompareAndSwap(nil, "frontier empty")
				stop()
				return nil
			}
		} else {
			idle = 0
		}
		now := time.Now()
		if now.Sub(lastProgress) >= c.cfg.ProgressInterval {
			lastProgress = now
			c.cfg.Logger.Info("crawlkit: progress", "stats", s.String())
			if c.cfg.Progress != nil {
				c.cfg.Progress(s)
			}
		}
		if c.journal != nil && now.Sub(lastCheckpoint) >= c.cfg.CheckpointInterval {
			lastCheckpoint = now
			if err := c.checkpoint(); err != nil {
				c.cfg.Logger.Error("crawlkit: checkpoint", "err", err)
				c.stopReason.CompareAndSwap(nil, "checkpoint failed")
				stop()
				return err
			}
		}
	}
}

// clusterIdle reports whether no other node can still send work: always
// for a crawl without a Splitter, and for one whose Splitter says so.
func (c *Crawler) clusterIdle() bool {
	if c.cfg.Splitter == nil {
		return true
	}
	i, ok := c.cfg.Splitter.(interface{ Idle() bool })
	return ok && i.Idle()
}

func (c *Crawler) limitReached(s Stats) string {
	switch {
	case c.cfg.MaxPages > 0 && int64(s.Pages()) >= c.cfg.MaxPages:
		return "max pages"
	case c.cfg.MaxBytes > 0 && s.Bytes >= c.cfg.MaxBytes:
		return "max bytes"
	case c.cfg.MaxDuration > 0 && s.Elapsed >= c.cfg.MaxDuration:
		return "max duration"
	}
	return ""
}
