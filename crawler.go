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

	"github.com/crawlkit/crawlkit/dedup/dust"
	"github.com/crawlkit/crawlkit/urlnorm"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/internal/retryafter"
	"github.com/crawlkit/crawlkit/robots"
)

// Crawler runs the crawl loop of IIR Figure 20.1 over the modules its
// Config names. Create one with New and call Run once.
type Crawler struct {
	cfg Config

	fetcher   fetch.Fetcher
	parser    fetch.Parser
	handlers  []htmlHandler // Config.OnHTML, compiled
	resolver  dns.Resolver
	robots    *robots.Cache
	front     frontier.Frontier
	state     State
	durable   bool // cfg.State was given: progress and sink positions are saved
	content   dedup.ContentSeen
	bodySeen  BodySeen // exact duplicates of bodies without text
	filters   frontier.URLFilter
	pol       frontier.Politeness
	traps     TrapOptions
	alike     alikeFound // under commitMu
	backoff   BackoffOptions
	bo        map[string]Backoff // host key → back-off state of hosts in trouble; commitMu
	rules     *dust.Learner      // nil with Config.NoURLRules
	rulesBuf  []byte             // Txn.Rules, reused
	keepRules bool               // the State is a RuleStorer: Txn.Rules is saved
	cutHosts  sync.Map           // host key → struct{}: hosts the trap defence cut, as seen by this run
	closers   []io.Closer        // what New created, closed by Run in reverse order
	gate      *gate              // admits a Gated fetcher's own requests
	sitemaps  SitemapOptions
	hostRules *hostRules // Config.HostRules, nil when none
	keys      keys       // politeness keys of hosts (Config.PolitenessKey)

	// stale maps the URL fingerprint of a revisit a sitemap's <lastmod>
	// brought forward to the Due of its new copy (see staleCopy).
	staleMu sync.Mutex
	stale   map[uint64]int64

	// durableSinks are the Config.Sinks that implement DurableSink, in
	// order; plainSinks the others.
	durableSinks []DurableSink
	plainSinks   []Sink

	c     counters
	obs   observer                  // Activity's figures
	start atomic.Pointer[time.Time] // set by Run; Stats reads it from any goroutine
	prior atomic.Int64              // crawl time of earlier runs, in ns
	pages pageGate
	pool  workerPool

	// commitMu serializes commits: the State sees one Txn at a time, and
	// the durable sinks' records and positions stay in step with it.
	// txn, look and the buffers below are reused under it.
	commitMu  sync.Mutex
	txn       Txn
	look      Lookup
	positions [][]byte
	progBuf   []byte

	// early holds the URLs Add received before Run loaded the State: Run
	// admits them once it has, so none is raced with the restore. loaded
	// is set, under earlyMu, once it has.
	earlyMu sync.Mutex
	early   []frontier.URL
	loaded  bool

	fatal      atomic.Pointer[error] // a commit failed: the crawl stops with it
	sinkErrors atomic.Uint64
	stopReason atomic.Value // string
	ran        atomic.Bool

	// pauseMu guards resumed, which Pause makes and Resume closes.
	pauseMu sync.Mutex
	resumed chan struct{}

	// drained is signalled when a worker finishes the last page in
	// flight, so that housekeeping sees the end of the crawl at once
	// rather than at its next tick. tick is housekeeping's period.
	drained chan struct{}
	tick    time.Duration
}

// New returns a Crawler for cfg, creating the default for every nil module.
// It does not touch the network. A crawl with a State opens the State's
// queue store and content sets here.
func New(cfg Config) (*Crawler, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.ensureDefaults()
	c := &Crawler{cfg: cfg, drained: make(chan struct{}, 1), tick: 50 * time.Millisecond}
	c.pages.max = cfg.MaxPages
	c.traps, _ = cfg.Traps.resolved()     // validated above
	c.backoff, _ = cfg.Backoff.resolved() // validated above
	c.bo = make(map[string]Backoff)
	c.sitemaps, _ = cfg.Sitemaps.resolved()
	c.hostRules, _ = newHostRules(cfg.HostRules) // validated above
	if !cfg.NoURLRules {
		c.rules, _ = dust.New(cfg.URLRules) // validated above
	}
	if err := c.assemble(); err != nil {
		c.closeAll()
		return nil, err
	}
	return c, nil
}

func (c *Crawler) assemble() error {
	cfg := &c.cfg
	c.pol = frontier.Politeness{K: frontierK(cfg.DelayFactor), MinDelay: cfg.MinDelay, MaxDelay: cfg.MaxDelay}
	c.state, c.durable = cfg.State, cfg.State != nil
	if c.state == nil {
		c.state = newEphemeral()
	}
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
		h := fetch.NewHTTP(&fetch.Options{Resolver: c.resolver, UserAgent: cfg.UserAgent, AllowPrivate: cfg.AllowPrivate, KeepWire: keep})
		c.fetcher = h
		c.closers = append(c.closers, h)
		if cfg.WrapFetcher != nil {
			f, err := cfg.WrapFetcher(h)
			if err != nil {
				return &Error{Op: "wrapping the fetcher", Err: err}
			}
			c.fetcher = f
			if cl, ok := f.(io.Closer); ok {
				c.closers = append(c.closers, cl)
			}
		}
	}
	if g, ok := c.fetcher.(fetch.Gated); ok {
		// Its own requests obey robots.txt and politeness too.
		c.gate = newGate(c, cfg.Subrequests)
		g.SetGate(c.gate)
	}
	c.parser = cfg.Parser
	if c.parser == nil {
		r := &fetch.Registry{}
		if cfg.MaxLinksPerPage > 0 {
			h := &fetch.HTML{MaxLinks: cfg.MaxLinksPerPage}
			r.Register("text/html", h)
			r.Register("application/xhtml+xml", h)
		}
		c.parser = r
	}
	c.handlers, _ = compileHandlers(cfg.OnHTML) // validate checked them
	c.robots = cfg.Robots
	if c.robots == nil {
		c.robots = robots.NewCache(&robots.Options{Agent: cfg.Agent, Fetch: c.robotsFetch,
			HopGap: func(took time.Duration) time.Duration { return c.pol.Gap(frontier.Result{Duration: took}) }})
		c.closers = append(c.closers, c.robots)
	}
	c.front = cfg.Frontier
	if c.front == nil {
		o := frontier.Options{Workers: cfg.Workers, Prioritizer: cfg.Prioritizer, HostOrder: cfg.HostOrder, Politeness: c.pol}
		if qs, ok := cfg.State.(QueueStorer); ok {
			st, err := qs.QueueStore()
			if err != nil {
				return &Error{Op: "state's queue store", Err: err}
			}
			o.Store = st
		}
		f, err := frontier.NewMercator(&o)
		if err != nil {
			if o.Store != nil {
				o.Store.Close()
			}
			return err
		}
		c.front = f
		c.closers = append(c.closers, f)
	}
	cs, _ := cfg.State.(ContentStorer)
	c.content = cfg.ContentSeen
	if c.content == nil && cs != nil {
		var err error
		if c.content, err = cs.ContentSeen(); err != nil {
			return &Error{Op: "state's content set", Err: err}
		}
	}
	if c.content == nil {
		content, err := dedup.NewContent(nil)
		if err != nil {
			return err
		}
		c.content = content
	}
	if cs != nil {
		var err error
		if c.bodySeen, err = cs.BodySeen(); err != nil {
			return &Error{Op: "state's body set", Err: err}
		}
	} else {
		c.bodySeen = new(dedup.ExactContent)
	}
	c.filters = cfg.Filters
	if c.filters == nil {
		c.filters = frontier.DefaultFilters()
	}
	if len(cfg.ExtraFilters) > 0 {
		chain := frontier.Chain{c.filters}
		c.filters = append(chain, cfg.ExtraFilters...)
	}
	for _, s := range cfg.Sinks {
		if d, ok := s.(DurableSink); ok {
			c.durableSinks = append(c.durableSinks, d)
		} else {
			c.plainSinks = append(c.plainSinks, s)
		}
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
// crawler's own fetcher (same address guard, same limits), and every
// answer is archived by the sinks that archive exchanges. The politeness
// gap after it is the frontier's business: the worker that asked reports
// the fetch with Result.Requeue (see process).
func (c *Crawler) robotsFetch(ctx context.Context, rawURL string) (*robots.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := c.fetcher.Fetch(ctx, &fetch.Request{URL: u})
	if err != nil {
		return nil, err
	}
	c.obs.connection(&resp.Timings)
	c.exchange(ctx, resp, start)
	rr := &robots.Response{Status: resp.Status, Body: resp.Body}
	rr.RetryAfter, _ = retryafter.Parse(resp.Header.Get("Retry-After"), time.Now())
	if resp.Location != nil {
		rr.Location = resp.Location.String()
	}
	return rr, nil
}

// URLRules returns the learner of the crawl's URL rewrite rules, nil
// with Config.NoURLRules: its Rules are the rules learned so far (active
// ones rewrite links, withdrawn ones are kept so they are not learned
// again), its Stats count what they saved, and MarshalBinary exports
// them. Safe to call while the crawl runs.
func (c *Crawler) URLRules() *dust.Learner { return c.rules }

// Stats returns a snapshot of the crawl's counters; safe to call at any
// time from any goroutine.
func (c *Crawler) Stats() Stats {
	s := c.c.snapshot()
	if st, ok := c.front.(frontier.Stater); ok {
		s.Frontier = st.Stats()
	}
	s.Elapsed = c.elapsed()
	if c.gate != nil {
		s.Subrequests, s.SubrequestsRefused = c.gate.admitted.Load(), c.gate.refused.Load()
	}
	return s
}

// elapsed is the crawl time of earlier runs plus this one's so far.
func (c *Crawler) elapsed() time.Duration {
	d := time.Duration(c.prior.Load())
	if start := c.start.Load(); start != nil {
		d += time.Since(*start)
	}
	return d
}

// ErrAlreadyRan is returned by a second call of Run.
var ErrAlreadyRan = errors.New("crawlkit: Run called twice")

// Run crawls until the frontier is empty (unless Continuous), a limit is
// reached, or ctx is done, and returns the final statistics.
//
// With a State, Run first loads it: the pending URLs are queued again
// (each host not before its saved next-contact time), the counters and
// crawl time carry on, and every DurableSink is rewound to its position
// at the last committed page. Every page is then committed to the State
// as it finishes, together with its records in the durable sinks, so a
// crawl killed at any instant resumes from its last committed page.
//
// Cancelling ctx is a clean stop: no URL is taken from the frontier any
// more, the pages in flight are finished (each within the fetcher's
// timeouts) and committed, and the sinks are closed. Run returns a
// non-nil error only when the crawl could not start or its state could
// not be saved; an error of a single page is counted, not returned.
func (c *Crawler) Run(ctx context.Context) (Stats, error) {
	if !c.ran.CompareAndSwap(false, true) {
		return Stats{}, ErrAlreadyRan
	}
	defer func() {
		end := time.Now()
		c.obs.ended.Store(&end)
	}()
	defer c.closeAll()
	defer c.closeSinks()
	start := time.Now()
	c.start.Store(&start)

	resumed, err := c.load(ctx)
	if err != nil {
		return c.Stats(), err
	}
	c.earlyMu.Lock()
	early := c.early
	c.early, c.loaded = nil, true
	c.earlyMu.Unlock()
	if err := c.addSeeds(ctx, early); err != nil {
		return c.Stats(), err
	}
	if resumed == 0 && c.c.seeds.Load() == 0 && c.cfg.Splitter == nil {
		if st, ok := c.front.(frontier.Stater); !ok || st.Stats().Pending() == 0 {
			return c.Stats(), ErrNoSeeds
		}
	}
	if resumed > 0 {
		c.cfg.Logger.Info("crawlkit: resumed", "urls", resumed)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	// Pages in flight when the crawl stops are finished, not abandoned:
	// their work context outlives the stop (the fetcher's timeouts bound
	// it).
	workCtx := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	c.pool.init(c.cfg.Workers, func(i int) { wg.Go(func() { c.worker(i, runCtx, workCtx) }) })
	c.pool.startAll()
	hkDone := make(chan error, 1)
	go func() { hkDone <- c.housekeeping(runCtx, stop) }()
	wg.Wait()
	stop()
	err = <-hkDone
	if f := c.fatal.Load(); f != nil && err == nil {
		err = *f
	}

	// The crawl time of this run is saved with a last progress record.
	if c.durable && err == nil {
		err = c.commitProgress(workCtx)
	}
	s := c.Stats()
	reason, _ := c.stopReason.Load().(string)
	if reason == "" && ctx.Err() != nil {
		reason = "cancelled"
		c.stopReason.CompareAndSwap(nil, reason)
	}
	c.cfg.Logger.Info("crawlkit: stopped", "reason", reason, "stats", s.String())
	return s, err
}

// StopReason returns why the last Run stopped ("frontier empty", "max
// pages", "max bytes", "max duration", "cancelled", "commit failed"), or
// "" while it runs.
func (c *Crawler) StopReason() string {
	r, _ := c.stopReason.Load().(string)
	return r
}

func (c *Crawler) closeSinks() {
	for _, s := range c.cfg.Sinks {
		if err := s.Close(); err != nil {
			c.cfg.Logger.Error("crawlkit: closing sink", "err", err)
		}
	}
}

// load restores the State's progress and queues its pending URLs, each
// not before its host's saved next-contact time. It returns the number
// of URLs queued.
func (c *Crawler) load(ctx context.Context) (int, error) {
	// The hosts being contacted when the last run ended.
	var contacts map[string]time.Time
	if rec, ok := c.cfg.State.(ContactRecorder); ok {
		cs, err := rec.Contacts()
		if err == nil {
			contacts, err = c.openContacts(ctx, cs)
		}
		if err != nil {
			return 0, &Error{Op: "loading the state", Err: err}
		}
	}
	if len(contacts) > 0 {
		// The slots are overwritten by this run's workers: what they say
		// goes into the hosts' records first, so that a run killed before
		// contacting those hosts does not forget them.
		if err := c.saveContacts(ctx, contacts); err != nil {
			return 0, &Error{Op: "loading the state", Err: err}
		}
	}
	if rs, ok := c.state.(RuleStorer); ok && c.rules != nil {
		c.keepRules = true
		saved, err := rs.Rules()
		if err != nil {
			return 0, &Error{Op: "loading the URL rules", Err: err}
		}
		if saved != nil {
			if err := c.rules.UnmarshalBinary(saved); err != nil {
				// Nothing is lost: without their rules, the parked URLs
				// are queued below, and the rules are learned again.
				c.cfg.Logger.Error("crawlkit: the saved URL rules are unreadable; learning them again", "err", err)
			}
		}
	}
	var batch []frontier.URL
	n := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		c.setKeys(ctx, batch)
		if err := c.holdBack(ctx, batch, contacts); err != nil {
			return err
		}
		if err := c.front.Add(ctx, batch...); err != nil {
			return err
		}
		n += len(batch)
		batch = batch[:0]
		return nil
	}
	saved, err := c.state.Load(ctx, func(p Pending) error {
		if p.Parked != "" && c.rules != nil && c.rules.Park(p.URL.URL, p.Parked) {
			return nil // still parked: its rule holds
		}
		batch = append(batch, p.URL)
		if len(batch) == 4096 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return 0, &Error{Op: "loading the state", Err: err}
	}
	if h, ok := c.front.(frontier.Holder); ok {
		// Hosts contacted at the end of the last run with nothing left
		// pending: links found later must not reach them early either.
		for k, until := range contacts {
			if until.After(time.Now()) {
				h.Hold(c.keyOf(ctx, strings.TrimPrefix(k, "h:")), until)
			}
		}
	}
	if !c.durable {
		return n, nil
	}
	if saved == nil {
		// A new crawl: the sinks' positions now are where it starts, so
		// a crash before the first page rewinds them to here.
		return n, c.commitProgress(ctx)
	}
	p, err := decodeProgress(saved)
	if err != nil {
		return 0, err
	}
	c.c.restore(p.stats)
	c.prior.Store(int64(p.stats.Elapsed))
	c.pages.restore(int64(p.stats.Pages()))
	if len(p.positions) != len(c.durableSinks) {
		return 0, fmt.Errorf("crawlkit: the state was saved with %d durable sinks, this crawl has %d: resume with the sinks it was started with", len(p.positions), len(c.durableSinks))
	}
	for i, s := range c.durableSinks {
		if err := s.Rewind(p.positions[i]); err != nil {
			return 0, &Error{Op: fmt.Sprintf("rewinding sink %d (%T) to the last committed page", i, s), Err: err}
		}
	}
	return n, nil
}

// holdBack keeps every host of batch from being contacted before its
// saved next-contact time, nor before its last gap has passed since the
// start of this Run (a request may have been in flight when the last run
// ended, and its gap was never saved), nor before the time a contact
// recorded at the end of the last run asks: a resumed crawl keeps the
// politeness gaps of the last one. A frontier that is not a
// frontier.Holder gets the URLs delayed one by one instead.
func (c *Crawler) holdBack(ctx context.Context, batch []frontier.URL, contacts map[string]time.Time) error {
	q := &Lookup{}
	idx := make(map[string]int)
	for i := range batch {
		k := hostKey(batch[i].URL)
		if _, ok := idx[k]; !ok {
			idx[k] = len(q.Keys)
			q.Keys = append(q.Keys, k)
		}
	}
	if err := c.state.Lookup(ctx, q); err != nil {
		return err
	}
	holder, _ := c.front.(frontier.Holder)
	for i, k := range q.Keys {
		until := c.resumeUntil(q.Records[i])
		if t := contacts[k]; t.After(until) {
			until = t
		}
		delete(contacts, k)
		if holder != nil && until.After(time.Now()) {
			holder.Hold(c.keyOf(ctx, strings.TrimPrefix(k, "h:")), until)
		}
		q.Records[i].Next = until
	}
	if holder == nil {
		for i := range batch {
			if until := q.Records[idx[hostKey(batch[i].URL)]].Next; until.After(batch[i].Due) {
				batch[i].Due = until
			}
		}
	}
	return nil
}

// openContacts returns, of the contacts the last run left, those whose
// outcome was never committed (no host record's gap started at or after
// them) and that still hold their host back: the latest time per key.
func (c *Crawler) openContacts(ctx context.Context, cs []Contact) (map[string]time.Time, error) {
	q := &Lookup{}
	for _, ct := range cs {
		q.Keys = append(q.Keys, ct.Key)
	}
	if err := c.state.Lookup(ctx, q); err != nil {
		return nil, err
	}
	now := time.Now()
	open := make(map[string]time.Time)
	for i, ct := range cs {
		r := q.Records[i]
		committed := !r.Next.IsZero() && !r.Next.Add(-r.Gap).Before(ct.At)
		if committed || !ct.Until.After(now) {
			continue
		}
		if ct.Until.After(open[ct.Key]) {
			open[ct.Key] = ct.Until
		}
	}
	return open, nil
}

// saveContacts commits the contacts the last run left as host records:
// each host's next contact becomes the later of its saved one and the
// contact's, and its gap at least the time from now to the latter.
func (c *Crawler) saveContacts(ctx context.Context, contacts map[string]time.Time) error {
	q := &Lookup{}
	for k := range contacts {
		q.Keys = append(q.Keys, k)
	}
	if err := c.state.Lookup(ctx, q); err != nil {
		return err
	}
	now := time.Now()
	txn := &Txn{}
	for i, k := range q.Keys {
		r, until := q.Records[i], contacts[k]
		if !until.After(now) || !until.After(r.Next) {
			continue
		}
		txn.Keys = append(txn.Keys, KeyDelta{Key: k, Next: until, Gap: max(r.Gap, until.Sub(now))})
	}
	if len(txn.Keys) == 0 {
		return nil
	}
	return c.state.Commit(ctx, txn)
}

// resumeUntil is when a host with record r may be contacted in this Run:
// not before its saved next contact, nor before its last gap has passed
// since the Run started.
func (c *Crawler) resumeUntil(r KeyRecord) time.Time {
	until := r.Next
	start := time.Now()
	if s := c.start.Load(); s != nil {
		start = *s
	}
	if t := start.Add(r.Gap); t.After(until) {
		until = t
	}
	return until
}

// The key spaces of KeyRecords: URLs admitted per host and the host's
// next contact, URLs admitted per registrable domain, hosts admitted per
// registrable domain.
func hostKey(u string) string { return "h:" + frontier.HostKey(u) }

// domainOf returns the registrable domain of a frontier host key (a host
// name, with its port when it is not the scheme's): urlnorm.Domain of the
// name without the port, or the label under a Config.PrivateSuffixes
// entry with that entry.
func (c *Crawler) domainOf(host string) string {
	name := host
	if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.HasSuffix(name, "]") && strings.Count(name, ":") == 1 {
		name = name[:i]
	}
	for _, s := range c.cfg.PrivateSuffixes {
		if rest, ok := strings.CutSuffix(name, "."+s); ok {
			if j := strings.LastIndexByte(rest, '.'); j >= 0 {
				rest = rest[j+1:]
			}
			return rest + "." + s
		}
	}
	return urlnorm.Domain(name)
}

func domainKey(domain string) string   { return "d:" + domain }
func domainHosts(domain string) string { return "n:" + domain }

// addSeeds canonicalises the seeds, and queues those not seen before (a
// resumed crawl has seen them) together with the URLs Add received before
// Run. In a distributed crawl every node is given every seed and queues
// those of its own hosts.
func (c *Crawler) addSeeds(ctx context.Context, early []frontier.URL) error {
	var batch []frontier.URL
	for _, s := range c.cfg.Seeds {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		canon, err := c.cfg.Canonicalizer.Canonical(s)
		if err != nil {
			return &Error{Op: fmt.Sprintf("seed %q", s), Err: err}
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
	w := &work{}
	w.cands = batch
	w.seeds = true
	if err := c.commit(ctx, w); err != nil {
		return err
	}
	if len(early) > 0 {
		w = &work{cands: early, received: true}
		return c.commit(ctx, w)
	}
	return nil
}

// worker is one crawl thread: take a URL, process it, report it done.
// stopCtx ends the loop; workCtx is the context of the work on a page.
func (c *Crawler) worker(i int, stopCtx, workCtx context.Context) {
	rec, _ := c.cfg.State.(ContactRecorder)
	retired := false
	defer func() {
		if !retired {
			c.pool.leave(i)
		}
	}()
	for {
		if c.pool.surplus(i) {
			// More than Workers fetch since this one waited.
			retired = true
			return
		}
		if !c.waitResumed(stopCtx.Done()) {
			return
		}
		l, err := c.front.Next(stopCtx)
		if err != nil {
			return
		}
		// In flight from here, so that housekeeping, which cannot see a
		// lease of a frontier that does not report its size, does not
		// take the crawl for finished while this one is being started.
		c.c.inflight.Add(1)
		if !c.pages.acquire(stopCtx) {
			// MaxPages is spent (or the crawl stops): the URL stays
			// pending in the State, for a later Run.
			c.c.inflight.Add(-1)
			return
		}
		if rec != nil {
			now := time.Now()
			if err := rec.Contacting(i, Contact{Key: hostKey(l.URL.URL), At: now, Until: c.contactUntil(l, now)}); err != nil {
				c.fail(&Error{Op: "recording a contact", Err: err})
				c.pages.release(false)
				c.c.inflight.Add(-1)
				return
			}
		}
		page := c.process(workCtx, l)
		c.pages.release(page)
		if c.c.inflight.Add(-1) == 0 {
			select {
			case c.drained <- struct{}{}:
			default:
			}
		}
	}
}

// contactUntil is how long a lease's host must be left alone if the
// process dies during the lease's requests: the host's Crawl-delay when
// its robots.txt is cached, else (robots.txt will be fetched first, its
// Crawl-delay unknown) the most a Crawl-delay can ask, within MaxDelay.
func (c *Crawler) contactUntil(l *frontier.Lease, now time.Time) time.Time {
	gap := min(c.cfg.MaxDelay, maxCrawlDelay)
	if u, err := url.Parse(l.URL.URL); err == nil {
		if v, ok := c.robots.Peek(u); ok {
			gap = v.CrawlDelay
		}
	}
	return now.Add(max(gap, c.cfg.MinDelay))
}

// maxCrawlDelay is the robots.Cache's default cap on Crawl-delay.
const maxCrawlDelay = 60 * time.Second

// housekeeping logs progress and stops the crawl at its limits or when
// there is nothing left to do.
func (c *Crawler) housekeeping(ctx context.Context, stop context.CancelFunc) error {
	tick := time.NewTicker(c.tick)
	defer tick.Stop()
	lastProgress := time.Now()
	idle := 0
	for {
		drained := false
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-c.drained:
			drained = true
		}
		if c.fatal.Load() != nil {
			c.stopReason.CompareAndSwap(nil, "commit failed")
			stop()
			return nil
		}
		s := c.Stats()
		if reason := c.limitReached(s); reason != "" {
			c.stopReason.CompareAndSwap(nil, reason)
			stop()
			return nil
		}
		if c.cfg.Continuous && s.InFlight == 0 && s.Frontier.Queued == 0 && s.Frontier.Leased == 0 {
			// Nothing to fetch until the next revisit is due: the
			// URLs parked under prefix rules, as a crawl's end would.
			c.releaseUnproven(ctx)
		}
		if !c.cfg.Continuous && s.InFlight == 0 && s.Frontier.Pending() == 0 && c.clusterIdle() {
			// Two quiet ticks in a row: a frontier that does not report
			// its size (not a Stater) shows nothing of a worker between
			// Next and its in-flight count. One that does counts that
			// lease until Done, which comes after the Add of the page's
			// links, so when the last page in flight has just finished
			// one look is enough: the crawl ends then, not up to two
			// ticks later.
			_, counted := c.front.(frontier.Stater)
			if !drained {
				idle++
			}
			// A frontier that does not report its size may hold URLs
			// that wait out a gap while every worker waits in Next:
			// the crawl's own count of queued URLs not finished yet says
			// whether it does.
			if !counted && s.Outcomes[Queued] > s.Finished() {
				idle = 0
			} else if (idle >= 2 || drained && counted) && c.releaseUnproven(ctx) {
				// URLs parked under rules whose evidence does not cover
				// them are fetched before the crawl ends.
				idle = 0
			} else if idle >= 2 || drained && counted {
				c.stopReason.CompareAndSwap(nil, "frontier empty")
				stop()
				return nil
			}
		} else {
			idle = 0
		}
		if now := time.Now(); now.Sub(lastProgress) >= c.cfg.ProgressInterval {
			lastProgress = now
			c.cfg.Logger.Info("crawlkit: progress", "stats", s.String())
			if c.cfg.Progress != nil {
				c.cfg.Progress(s)
			}
		}
	}
}

// releaseUnproven queues the URLs parked under learned rules whose
// evidence does not cover them (dust.Learner.ReleaseUnproven: a directory
// that shares most files with another), from their pending records, and
// reports whether it queued any. The crawler calls it when it has
// nothing else to do: without it a file of its own in a decoy directory
// that no validation reached would never be fetched.
func (c *Crawler) releaseUnproven(ctx context.Context) bool {
	if c.rules == nil {
		return false
	}
	back := c.rules.ReleaseUnproven()
	if len(back) == 0 {
		return false
	}
	c.commitMu.Lock()
	q := &Lookup{Pending: back}
	err := c.state.Lookup(ctx, q)
	var us []frontier.URL
	if err == nil {
		_, noRecords := c.state.(*ephemeral)
		for i, ok := range q.Found {
			switch {
			case ok && q.PendingRecords[i].URL.URL == back[i]:
				us = append(us, q.PendingRecords[i].URL)
			case noRecords:
				// A State that keeps no pending records (Config.State
				// nil): the depth is unknown, and the page's links are
				// followed only without a depth limit.
				us = append(us, frontier.URL{URL: back[i], Depth: c.cfg.MaxDepth})
			}
			// Else not pending here: fetched since, or its shard moved
			// to another node, which has it pending.
		}
		var t tally
		t.outcomes[Queued] += uint32(len(us))
		t.links += uint32(len(us))
		c.c.apply(&t)
	}
	c.commitMu.Unlock()
	if err != nil {
		// Still pending and parked in the State: a later run parks them
		// again and gives them back at its end.
		c.reportError(back[0], &Error{Op: "state lookup", Err: err})
		return false
	}
	c.setKeys(ctx, us)
	if err := c.front.Add(ctx, us...); err != nil {
		c.cfg.Logger.Error("crawlkit: frontier add", "err", err)
		return false
	}
	c.prefetch(us)
	return true
}

// IdleReporter is implemented by a HostSplitter that knows when no node
// of the cluster has work left or in transit: a crawl with a Splitter ends
// when its own frontier is empty only if its Splitter reports Idle.
type IdleReporter interface {
	Idle() bool
}

// HostGate is implemented by a HostSplitter whose hosts move between
// nodes while the crawl runs (a cluster with membership): the crawler
// asks it before the requests of every lease (robots.txt included), so
// that a node never contacts a host it no longer owns and the new owner
// never contacts one the old owner is still talking to.
type HostGate interface {
	// Enter reports whether this node may contact the host of url now.
	// If it may, leave must be called once the lease's outcome is
	// committed; if not, the crawler drops the lease without changing
	// its State (the host's new owner has the URL pending) and counts it
	// in Stats.HandedOver.
	Enter(url string) (leave func(), ok bool)
}

// AddPending queues URLs the State already holds as pending, such as the
// queue of a shard a cluster node's State took over from another node:
// unlike Add, no URL-seen test, no budget and no change to the State. Each
// host waits for the next-contact time its State record gives, and at
// least its last gap from now (its previous owner may have just
// contacted it). Call it while Run runs, after the State was loaded: a
// State that takes URLs over before that reports them from Load instead.
// Safe for concurrent use.
func (c *Crawler) AddPending(ctx context.Context, ps []Pending) error {
	if len(ps) == 0 {
		return nil
	}
	batch := make([]frontier.URL, 0, len(ps))
	for _, p := range ps {
		if p.Parked != "" && c.rules != nil && c.rules.Park(p.URL.URL, p.Parked) {
			continue
		}
		batch = append(batch, p.URL)
	}
	q := &Lookup{}
	seen := map[string]bool{}
	for i := range batch {
		if k := hostKey(batch[i].URL); !seen[k] {
			seen[k] = true
			q.Keys = append(q.Keys, k)
		}
	}
	if err := c.state.Lookup(ctx, q); err != nil {
		return &Error{Op: "adding pending URLs", Err: err}
	}
	holder, _ := c.front.(frontier.Holder)
	until := make(map[string]time.Time, len(q.Keys))
	now := time.Now()
	for i, k := range q.Keys {
		t := q.Records[i].Next
		if g := now.Add(q.Records[i].Gap); g.After(t) {
			t = g
		}
		until[k] = t
		if holder != nil && t.After(now) {
			holder.Hold(strings.TrimPrefix(k, "h:"), t)
		}
	}
	if holder == nil {
		for i := range batch {
			if t := until[hostKey(batch[i].URL)]; t.After(batch[i].Due) {
				batch[i].Due = t
			}
		}
	}
	if err := c.front.Add(ctx, batch...); err != nil {
		return &Error{Op: "adding pending URLs", Err: err}
	}
	return nil
}

// clusterIdle reports whether no other node can still send work: always
// for a crawl without a Splitter, and for one whose Splitter says so.
func (c *Crawler) clusterIdle() bool {
	if c.cfg.Splitter == nil {
		return true
	}
	i, ok := c.cfg.Splitter.(IdleReporter)
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

// pageGate makes MaxPages exact: a worker holds a slot from before its
// fetch until its outcome is committed, and no slot is handed out while
// the committed pages and the slots held could reach the limit.
type pageGate struct {
	max int64 // 0: no limit

	mu   sync.Mutex
	done int64         // pages committed
	held int64         // slots held by workers
	wake chan struct{} // closed when a slot is released
}

// acquire waits for a slot; it returns false once the limit is reached
// for good or ctx is done.
func (g *pageGate) acquire(ctx context.Context) bool {
	if g.max <= 0 {
		return true
	}
	for {
		g.mu.Lock()
		if g.done >= g.max {
			g.mu.Unlock()
			return false
		}
		if g.done+g.held < g.max {
			g.held++
			g.mu.Unlock()
			return true
		}
		if g.wake == nil {
			g.wake = make(chan struct{})
		}
		wake := g.wake
		g.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}

// release gives a slot back; page reports that it became a page.
func (g *pageGate) release(page bool) {
	if g.max <= 0 {
		return
	}
	g.mu.Lock()
	g.held--
	if page {
		g.done++
	}
	if g.wake != nil {
		close(g.wake)
		g.wake = nil
	}
	g.mu.Unlock()
}

// restore counts the pages of earlier runs.
func (g *pageGate) restore(pages int64) {
	g.mu.Lock()
	g.done = pages
	g.mu.Unlock()
}
