package crawlkit

import (
	"context"
	"errors"
	"math"
	"net/url"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

// work is what processing one lease (or admitting a batch of seeds or
// received URLs) produced: commit makes it part of the crawl.
type work struct {
	l        *frontier.Lease   // nil for a batch of seeds or received URLs
	outcome  Outcome           // the lease's final outcome, unless requeued
	requeue  bool              // the lease goes back to its key (robots.txt came first, or a retry)
	retries  int               // with requeue by a retry: the lease's retries so far
	revisit  bool              // continuous crawling: the lease is scheduled again
	res      frontier.Result   // reported to the frontier
	page     *Page             // a page for the sinks, or nil
	archive  *fetch.Response   // a response that is not a page, for the ExchangeSinks
	fetched  time.Time         // when the archived response's fetch started
	subs     []*fetch.Response // the fetcher's own requests for the page (fetch.Response.Subresources), for the ExchangeSinks
	sent     []frontier.URL    // candidates handed to the host splitter (Txn.Sent)
	source   string            // the page whose links cands are
	links    []string          // its out-links, for a FetchObserver
	cands    []frontier.URL    // URLs to admit
	parked   []parked          // URLs to park: a learned rule maps them to a candidate
	released []string          // parked URLs a withdrawn rule gave back, to queue
	rules    bool              // the learned rules changed: save them with this page
	alias    bool              // a duplicate the rules explain: not counted by the trap defence
	copy     bool              // an exact duplicate (not a near one) of a page fetched before
	parkedOn string            // with outcome Parked: the URL the lease's URL is parked on
	signal   signal            // what the fetch says about the host's load, for the back-off
	err      error             // with outcome ParseError: the parser's error
	canon    string            // the canonical URL the page names and the crawl honours, "" if none
	seeds    bool              // cands are the seeds
	received bool              // cands came through Add
	t        tally
}

// parked is a link a learned rewrite rule maps to a URL among the
// candidates: it is parked (in the URL-seen set, pending, in no frontier
// queue) instead of fetched, unless the rule has gone by then.
type parked struct {
	u     frontier.URL
	canon string
}

// process runs one URL through the loop: robots check, fetch, parse,
// content seen?, links through the URL filter, and commits the outcome.
// It reports whether the URL became a page (a 2xx answer).
func (c *Crawler) process(ctx context.Context, l *frontier.Lease) bool {
	w := &work{l: l}
	if c.staleCopy(l) {
		// Brought forward by a sitemap: the new copy is the one fetched.
		if err := c.front.Done(l, frontier.Result{Skipped: true}); err != nil {
			c.cfg.Logger.Error("crawlkit: frontier done", "url", l.URL.URL, "err", err)
		}
		return false
	}
	if g, ok := c.cfg.Splitter.(HostGate); ok {
		leave, ok := g.Enter(l.URL.URL)
		if !ok {
			// Its host's shard moved to another node, which has the URL
			// pending in its own state: drop the lease, change nothing.
			if err := c.front.Done(l, frontier.Result{Skipped: true}); err != nil {
				c.cfg.Logger.Error("crawlkit: frontier done", "url", l.URL.URL, "err", err)
			}
			c.c.handedOver.Add(1)
			return false
		}
		// After the commit: the gate waits for it before the shard may
		// move, so the new owner sees this lease's outcome.
		defer leave()
	}
	if leave, ok := c.enterLease(ctx, w); ok {
		c.run(ctx, w)
		leave()
	}
	sitemapOutcome(w)
	c.queueCanonical(w)
	if !w.requeue {
		c.recordFailure(w)
		c.canonicalFailed(w)
	}
	start := time.Now()
	if err := c.commit(ctx, w); err != nil {
		c.fail(err)
	}
	c.obs.stage(StageCommit, time.Since(start))
	return !w.requeue && (w.outcome == Fetched || w.outcome == DuplicateContent || w.outcome == Unchanged)
}

// fail stops the crawl with err: the State could not be changed, so no
// page may be reported done any more.
func (c *Crawler) fail(err error) {
	c.fatal.CompareAndSwap(nil, &err)
}

// run fills in w for its lease.
func (c *Crawler) run(ctx context.Context, w *work) {
	l := w.l
	u, err := url.Parse(l.URL.URL)
	if err != nil {
		// Only canonical URLs enter the frontier, so this is a bug or a
		// damaged state; count it rather than loop on it.
		w.outcome, w.res.Err, w.res.Skipped = FetchError, err, true
		w.t.fetchError(fetch.KindBadURL.String())
		return
	}

	if _, cut := c.cutHosts.Load(hostKey(l.URL.URL)); cut {
		// The trap defence cut the host after this URL was queued.
		w.outcome, w.res.Skipped = Abandoned, true
		return
	}
	if c.rules != nil && l.URL.Sitemap == 0 {
		// A rule learned after this URL was queued maps it to another:
		// that one is fetched (it goes through the URL-seen test) and
		// this one is parked, unless it is due for a validation.
		if res, ok := c.rules.Rewrite(l.URL.URL); ok && !res.Validate && res.URL != l.URL.URL &&
			c.passes(nil, res.URL) && c.rules.Park(l.URL.URL, res.URL) {
			w.parkedOn, w.outcome, w.res.Skipped = res.URL, Parked, true
			w.cands = []frontier.URL{{URL: res.URL, Depth: l.URL.Depth, Source: l.URL.Source, Anchor: l.URL.Anchor}}
			w.t.links++
			return
		}
		// The other way round: its page was fetched under an alias the
		// rules now rewrite to it (the "?ref=" variant of an article,
		// found before the rule was learned). It is parked on that one.
		if res, ok := c.rules.Served(l.URL.URL); ok && !res.Validate && c.rules.Park(l.URL.URL, res.URL) {
			w.parkedOn, w.outcome, w.res.Skipped = res.URL, Parked, true
			return
		}
	}

	if c.hostRules != nil {
		w.res.MinDelay = c.minDelay(frontier.HostKey(l.URL.URL))
	}
	// Robots.txt immediately before the fetch: rules change while URLs
	// wait in the frontier.
	checked := time.Now()
	v, err := c.robots.Check(ctx, u)
	c.obs.stage(StageRobots, time.Since(checked))
	w.res.CrawlDelay = v.CrawlDelay
	if !v.Fetched {
		// No request to the host unless the fetch below is made: a URL
		// robots.txt denies (or that cannot be decided) must not cost
		// its host a politeness gap. A host whose pages link many
		// disallowed URLs would otherwise wait a gap for each.
		w.res.Skipped = true
	}
	switch {
	case err != nil:
		// The Cache answers a failed robots.txt fetch itself; an error
		// here means it could not decide (closed, or ctx ended).
		w.outcome, w.res.Err = FetchError, err
		w.t.fetchError(fetch.KindOther.String())
		return
	case v.Fetched:
		c.discoverSitemaps(ctx, w, u, v)
		// This worker's robots.txt fetch was a request to the host: it
		// counts for politeness like any fetch, so the URL goes back to
		// its host's queue and comes out after the gap.
		w.res.Duration, w.res.Ended = v.FetchTime, time.Now()
		if v.Allowed {
			w.requeue, w.res.Requeue = true, true
			return
		}
	}
	if !v.Allowed {
		if v.Unreachable {
			// Not a denial: robots.txt could not be fetched, so the host
			// is unreachable (RFC 9309 §2.3.1.4). If it failed as a page
			// is retried for (busy: 429, 503; a timeout, a reset ...)
			// and has failed no more than MaxRetries times in a row, the
			// URL waits for the Cache's next attempt, and the host with
			// it: a server busy for a moment does not lose its URLs.
			// Otherwise count the failure under its kind.
			kind, again := "robots unreachable", v.Err == nil && c.busy(v.Status)
			var fe *fetch.Error
			if errors.As(v.Err, &fe) {
				kind, again = fe.Kind.String(), transient(fe.Kind)
			}
			if again && v.Failures <= c.cfg.MaxRetries && c.retry(ctx, w, max(time.Until(v.RetryAt), 0)) {
				w.res.Skipped = false // the host is held until then
				return
			}
			w.t.fetchError(kind)
			w.outcome, w.res.Err = FetchError, v.Err
			if v.Err != nil {
				c.reportError(l.URL.URL, v.Err)
			}
			return
		}
		w.outcome = RobotsDenied
		return
	}

	w.res.Skipped = false
	start := time.Now()
	// A revisit sends the validators of the last response: a server
	// whose copy has not changed answers 304 with no body.
	resp, err := c.fetcher.Fetch(ctx, &fetch.Request{URL: u, ETag: l.URL.ETag, LastModified: l.URL.LastModified})
	// The host is idle from here: the gap runs from now, not from when
	// the page has been parsed and committed.
	w.res.Ended = time.Now()
	if resp != nil {
		w.subs = resp.Subresources
		w.res.Duration = resp.Timings.Total
		for _, sub := range resp.Subresources {
			if sub.URL != nil && sub.URL.Host == u.Host {
				// The host served those too in this turn: the gap after
				// it grows with all it served.
				w.res.Duration += sub.Timings.Total
			}
		}
		w.res.Status = resp.Status
		w.res.ETag, w.res.LastModified = resp.ETag, resp.LastModified
	}
	if w.res.Duration <= 0 {
		w.res.Duration = time.Since(start)
	}
	c.observeFetch(l.URL.URL, resp, err, w.res)
	if err != nil {
		w.res.Err = err
		kind := fetch.KindOther
		var fe *fetch.Error
		if errors.As(err, &fe) {
			kind = fe.Kind
		}
		w.signal = signalOf(kind)
		if transient(kind) && c.retry(ctx, w, scheduledWait) {
			return
		}
		w.t.fetchError(kind.String())
		c.reportError(l.URL.URL, err)
		w.outcome = FetchError
		return
	}
	w.t.status = resp.Status
	w.t.bytes = int64(len(resp.Body))
	w.signal = signalAnswered // or signalThrottle, below
	// Every response that does not become a page (a redirect, an error
	// status, a 304) still goes to the sinks that archive exchanges, so
	// that a replay of the archive sees what the crawl saw. Duplicates
	// are archived too: their links are followed, so a replay needs them
	// to reach what the crawl reached.
	w.archive, w.fetched = resp, start
	if l.URL.Sitemap > 0 {
		c.readSitemap(ctx, w, resp)
		return
	}

	switch {
	case resp.NotModified():
		w.res.Fingerprint = l.URL.Fingerprint
		w.outcome, w.revisit = Unchanged, true
		return
	case resp.Status >= 300 && resp.Status < 400:
		if resp.Location != nil {
			if c.rules != nil {
				if to, err := c.cfg.Canonicalizer.Canonical(resp.Location.String()); err == nil {
					v := c.rules.Version()
					c.rules.ObserveRedirect(l.URL.URL, to)
					w.rules = c.rules.Version() != v
				}
			}
			_, w.cands = c.filterLinks(w, l.URL.URL, l.URL.Depth, []fetch.Link{{URL: resp.Location, Rel: "redirect"}})
			w.source = l.URL.URL
		}
		w.outcome = Redirected
		return
	case c.busy(resp.Status):
		if c.retryBusy(ctx, w, resp) {
			return
		}
		w.outcome = HTTPError
		return
	case resp.Status < 200 || resp.Status >= 300:
		w.outcome = HTTPError
		return
	}

	parsing := time.Now()
	doc, err := c.parser.Parse(resp)
	c.obs.stage(StageParse, time.Since(parsing))
	if doc != nil && doc.LinksDropped > 0 {
		w.t.dropped = uint32(min(doc.LinksDropped, math.MaxInt32))
	}
	switch {
	case errors.Is(err, fetch.ErrUnsupportedType):
		// A PDF or an image: fetched and archived, but no text or links.
		doc = &fetch.Document{URL: resp.URL}
	case err != nil:
		c.reportError(l.URL.URL, err)
		w.outcome, w.err = ParseError, err
		return
	}
	w.canon = c.canonicalOf(l.URL.URL, resp, doc)
	seeing := time.Now()
	dup, first := c.seenContent(ctx, w, resp, doc)
	c.obs.stage(StageContent, time.Since(seeing))
	w.copy = dup && first != ""
	if c.rules != nil && w.outcome != Unchanged {
		// Every fetch is evidence for the URL rewrite rules: a page whose
		// content was first seen at another URL supports the rules that
		// explain the two URLs' difference, one with new content may
		// refute a rule, whose parked URLs come back to be fetched.
		v := c.rules.Version()
		o := c.rules.ObserveFetch(l.URL.URL, w.res.Fingerprint, first)
		// A duplicate the rules explain or confirm is an alias of a page,
		// not a trap's next page: the trap defence does not count it.
		w.released, w.alias = o.Released, o.Explained || o.Confirmed
		w.rules = c.rules.Version() != v
	}
	if dup {
		// Content seen at another URL: archived and indexed there. Its
		// links still count: a near-duplicate's may differ from those of
		// the page it resembles (the class pages of one javadoc package
		// each hold the only link to their class-use page), and the same
		// text under another base URL resolves its relative links to
		// other URLs. They pass the filters and the URL-seen test as any
		// page's do, which costs little for links already known.
		if !doc.NoFollow {
			_, w.cands = c.filterLinks(w, l.URL.URL, l.URL.Depth+1, doc.Links)
		}
		w.outcome, w.revisit = DuplicateContent, true
		return
	}
	if w.outcome == Unchanged {
		return
	}
	page := &Page{URL: l.URL.URL, Depth: l.URL.Depth, Fetched: start, Response: resp, Document: doc, Fingerprint: w.res.Fingerprint, Canonical: w.canon}
	links := c.runHandlers(ctx, l.URL.URL, resp, doc.Links)
	if !doc.NoFollow {
		page.Links, w.cands = c.filterLinks(w, l.URL.URL, l.URL.Depth+1, links)
	}
	w.page, w.archive = page, nil
	w.source, w.links = l.URL.URL, page.Links
	w.outcome, w.revisit = Fetched, true
}

// seenContent runs the "content seen?" test (IIR §20.2.1) and reports
// whether the page's content was seen at another URL, and that URL when
// the content is the same there, not only alike (a near-duplicate). A revisit first
// retires its own previous fingerprint when the content changed, or stops
// as Unchanged when it did not. It sets w.res.Fingerprint.
func (c *Crawler) seenContent(ctx context.Context, w *work, resp *fetch.Response, doc *fetch.Document) (seen bool, first string) {
	l := w.l
	// An alias's content is recorded as its canonical URL's: fetched
	// later, the canonical page is not a duplicate of its alias.
	self := l.URL.URL
	if w.canon != "" {
		self = w.canon
	}
	fp := dedup.TextFingerprint([]byte(doc.Text))
	w.res.Fingerprint = fp
	if old := l.URL.Fingerprint; old != 0 {
		if old == fp {
			w.outcome, w.revisit = Unchanged, true
			return false, ""
		}
		// The old fingerprint is in one of the two sets, depending on
		// whether the page had text; forgetting an absent one is a no-op.
		if err := c.content.Forget(ctx, old); err != nil {
			c.reportError(l.URL.URL, err)
		}
		if err := c.bodySeen.Forget(ctx, old); err != nil {
			c.reportError(l.URL.URL, err)
		}
	}
	switch {
	case doc.Text == "" && len(resp.Body) > 0:
		// A PDF or an image has no text to shingle: exact duplicates of
		// its bytes are caught by their fingerprint alone.
		fp = dedup.TextFingerprint(resp.Body)
		w.res.Fingerprint = fp
		at, known, err := c.bodySeen.Record(fp, self)
		if err != nil {
			c.reportError(l.URL.URL, err)
		}
		// Known at its own URL: recorded by a run killed before the
		// page was committed, and fetched again on resume.
		if known && at != self {
			return true, at
		}
		return false, ""
	case doc.Text != "":
		// The answer may come from another node (a partitioned test
		// batches its lookups): the worker lends its place meanwhile.
		var m dedup.Match
		err := c.pool.waitErr(func() (err error) {
			m, err = c.content.Seen(ctx, dedup.Doc{URL: self, Text: []byte(doc.Text)})
			return err
		})
		if err != nil {
			c.reportError(l.URL.URL, err)
			return false, ""
		}
		w.res.Fingerprint = m.Fingerprint
		if !m.Seen || m.URL == self {
			return false, ""
		}
		if m.Near {
			return true, ""
		}
		return true, m.URL
	}
	return false, ""
}

// filterLinks canonicalises a page's links and sends them through the URL
// filter and the learned rewrite rules. It returns the canonical URLs that
// passed (the page's out-links in the web graph; a link a rule rewrites
// counts as its canonical form) and, of those, the candidates for the
// frontier (within MaxDepth), at depth; the links a rule rewrites are put
// in w.parked, and their canonical forms among the candidates.
func (c *Crawler) filterLinks(w *work, source string, depth int, links []fetch.Link) (out []string, cands []frontier.URL) {
	t := &w.t
	if len(links) > 0 {
		out, cands = make([]string, 0, len(links)), make([]frontier.URL, 0, len(links))
	}
	for _, ln := range links {
		if ln.HasRel("nofollow") {
			continue
		}
		t.links++
		canon, err := c.cfg.Canonicalizer.Canonical(ln.URL.String())
		if err != nil {
			t.filter("malformed")
			continue
		}
		if !c.passes(t, canon) {
			continue
		}
		var park string
		if c.rules != nil {
			// DUST: a learned rule maps the link to the URL its content
			// is fetched at; that URL passes the filter too, or the link
			// is taken as it is. One link in Options.ValidateEvery is
			// fetched anyway, so that a wrong rule meets its
			// counterexample.
			if res, ok := c.rules.Rewrite(canon); ok && res.URL != canon && c.passes(nil, res.URL) {
				t.links++ // the canonical form is a candidate of its own
				switch {
				case !res.Validate:
					park = canon
				case c.cfg.MaxDepth > 0 && depth > c.cfg.MaxDepth:
					t.filter("max depth")
				default:
					cands = append(cands, frontier.URL{URL: canon, Depth: depth, Source: source, Anchor: ln.Text})
				}
				canon = res.URL
			}
		}
		out = append(out, canon)
		if c.cfg.MaxDepth > 0 && depth > c.cfg.MaxDepth {
			t.filter("max depth")
			if park != "" {
				t.filter("max depth") // the link itself, too deep to park
			}
			continue
		}
		cands = append(cands, frontier.URL{URL: canon, Depth: depth, Source: source, Anchor: ln.Text})
		if park != "" {
			w.parked = append(w.parked, parked{frontier.URL{URL: park, Depth: depth, Source: source, Anchor: ln.Text}, canon})
		}
	}
	return out, cands
}

// passes reports whether the canonical URL canon passes the URL filter,
// counting a refusal under its reason in t unless t is nil.
func (c *Crawler) passes(t *tally, canon string) bool {
	cu, err := url.Parse(canon)
	if err != nil {
		if t != nil {
			t.filter("malformed")
		}
		return false
	}
	if err := c.filters.Filter(cu); err != nil {
		if t != nil {
			reason := "filter"
			if r, ok := frontier.ReasonOf(err); ok {
				reason = r.String()
			}
			t.filter(reason)
		}
		return false
	}
	return true
}

// Add offers URLs to the crawl from outside the loop: the URLs another
// node's host splitter sent to this one (they are counted as Received), or
// URLs a program discovers by other means. Each is canonicalised, checked
// against the URL-seen set and the budgets, and queued if new. The URL
// filters are not applied again: the sender applied them. Add may be
// called before and during Run, from any goroutine; with a Config.State,
// URLs added before Run has loaded it are admitted once it has.
func (c *Crawler) Add(ctx context.Context, urls ...frontier.URL) error {
	w := &work{received: true}
	w.cands = make([]frontier.URL, 0, len(urls))
	for _, u := range urls {
		canon, err := c.cfg.Canonicalizer.Canonical(u.URL)
		if err != nil {
			w.t.filter("malformed")
			continue
		}
		u.URL = canon
		w.cands = append(w.cands, u)
	}
	c.earlyMu.Lock()
	if !c.loaded && c.durable {
		// Run has not loaded the State yet: it will admit these, after
		// the pending URLs Load queues (which may include them).
		c.early = append(c.early, w.cands...)
		c.earlyMu.Unlock()
		return nil
	}
	c.earlyMu.Unlock()
	return c.commit(ctx, w)
}

// retryInterval is the wait before retrying a URL whose server asked for
// none, by the retries it has had: 1 s, 2 s, 4 s ...
func retryInterval(n int) time.Duration { return time.Second << min(n, 16) }

// The waits retry takes that are not durations: the host's back-off
// block, set in commit, decides it (backoffWait), or retryInterval does
// (scheduledWait).
const (
	backoffWait   = -1
	scheduledWait = -2
)

// retry sends a lease back to its key to be fetched again after wait (at
// least the politeness gap, so 0 is at once after it; retryInterval when
// wait is scheduledWait; the back-off block when it is backoffWait), if it
// has retries left, and reports whether it did.
func (c *Crawler) retry(ctx context.Context, w *work, wait time.Duration) bool {
	if c.cfg.MaxRetries < 0 {
		return false
	}
	q := &Lookup{Pending: []string{w.l.URL.URL}}
	if err := c.state.Lookup(ctx, q); err != nil {
		c.reportError(w.l.URL.URL, err)
		return false
	}
	n := q.PendingRecords[0].Retries
	if n >= c.cfg.MaxRetries {
		return false
	}
	if wait == scheduledWait {
		wait = retryInterval(n)
	}
	w.res.RetryAfter = max(w.res.RetryAfter, wait, 0)
	w.requeue, w.res.Requeue, w.retries = true, true, n+1
	w.t.count(Retried)
	return true
}

// revisitInterval is the time until the next visit: the inverse of the
// estimated change rate (Cho and Garcia-Molina), within [MinRevisit,
// MaxRevisit]; a page without history comes back after MinRevisit.
func (c *Crawler) revisitInterval(h frontier.History, changed bool) time.Duration {
	fetches, changes := h.Fetches+1, h.Changes
	if changed {
		changes++
	}
	total := time.Duration(0)
	if !h.First.IsZero() {
		total = time.Since(h.First)
	}
	if fetches < 2 || total <= 0 {
		return c.cfg.MinRevisit
	}
	rate := frontier.EstimateChangeRate(int(fetches-1), int(changes), total)
	if rate <= 0 || math.IsNaN(rate) {
		return c.cfg.MaxRevisit
	}
	d := time.Duration(float64(time.Second) / rate)
	return min(max(d, c.cfg.MinRevisit), c.cfg.MaxRevisit)
}

// observeFetch records a fetch of rawURL for Activity: its time, the
// response's size, its host's figures and the DNS and connect stages.
func (c *Crawler) observeFetch(rawURL string, resp *fetch.Response, err error, res frontier.Result) {
	var size int64
	if resp != nil {
		size = int64(len(resp.Body))
		c.obs.size.observe(size, sizeBoundsIn)
		c.obs.connection(&resp.Timings)
	}
	failed := err != nil || res.Status >= 400
	c.obs.fetched(frontier.HostKey(rawURL), res.Duration, size, failed, res.Ended)
}

// recordFailure puts a lease that ended in failure into Activity's ring of
// recent errors.
func (c *Crawler) recordFailure(w *work) {
	r := ErrorRecord{URL: w.l.URL.URL}
	switch w.outcome {
	case FetchError:
		r.Kind = w.t.errKind
		if w.res.Err != nil {
			r.Err = w.res.Err.Error()
		}
	case HTTPError:
		r.Kind, r.Status = "http", w.res.Status
	case ParseError:
		r.Kind = "parse"
		if w.err != nil {
			r.Err = w.err.Error()
		}
	default:
		return
	}
	r.Time = time.Now()
	c.obs.failed(r)
}

// canonicalFailed tells the URL rules of a fetch that gave no page: the
// URLs parked on it (their rules took it for their canonical form) come
// back to be fetched themselves, with the withdrawn rules' URLs.
func (c *Crawler) canonicalFailed(w *work) {
	if c.rules == nil {
		return
	}
	switch w.outcome {
	case FetchError, HTTPError, RobotsDenied, ParseError:
		v := c.rules.Version()
		w.released = append(w.released, c.rules.Failed(w.l.URL.URL)...)
		w.rules = w.rules || c.rules.Version() != v
	}
}

func (c *Crawler) reportError(u string, err error) {
	if c.cfg.OnError != nil {
		c.cfg.OnError(u, err)
	}
}

// transient reports failures worth another try later.
func transient(k fetch.Kind) bool {
	switch k {
	case fetch.KindTimeout, fetch.KindReset, fetch.KindConnect, fetch.KindDNS,
		fetch.KindProxy: // a proxy down, or refusing for now
		return true
	}
	return false
}
