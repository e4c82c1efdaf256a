package crawlkit

import (
	"context"
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

// process runs one URL through the loop: robots check, fetch, parse,
// content seen?, links through filter and URL seen? into the frontier,
// sinks, and Done with the fetch time for the politeness gap.
func (c *Crawler) process(ctx context.Context, l *frontier.Lease) {
	u, err := url.Parse(l.URL.URL)
	if err != nil {
		// Only canonical URLs enter the frontier, so this is a bug or a
		// damaged checkpoint; count it rather than loop on it.
		c.finish(l, FetchError, frontier.Result{Err: err})
		c.c.fetchError(fetch.KindBadURL)
		return
	}
	host := strings.ToLower(u.Hostname())

	// Robots.txt immediately before the fetch: rules change while URLs
	// wait in the frontier.
	allowed, rerr := c.robots.Allowed(ctx, u)
	if d, ok := c.robotsFetched.LoadAndDelete(host); ok {
		// The robots.txt request was a request to this host: wait the
		// politeness gap after it before the page itself.
		if !c.politeWait(ctx, d.(time.Duration)) {
			c.requeue(l, frontier.Result{Duration: d.(time.Duration)})
			return
		}
	}
	crawlDelay, _ := c.robots.Delay(u.Host)
	if rerr != nil {
		if ctx.Err() != nil {
			c.requeue(l, frontier.Result{})
			return
		}
		// The Cache answers a failed robots.txt fetch itself (disallow
		// on 5xx and network errors); an error here means it could not
		// decide, so the URL is not fetched.
		allowed = false
	}
	if !allowed {
		if e, ok := c.robotsErr.Load(host); ok {
			// Not a denial: robots.txt could not be fetched at all, so
			// the host is unreachable. Count the failure under its kind.
			err := e.(error)
			kind := fetch.KindOther
			var fe *fetch.Error
			if errors.As(err, &fe) {
				kind = fe.Kind
			}
			c.c.fetchError(kind)
			c.reportError(l.URL.URL, err)
			c.finish(l, FetchError, frontier.Result{Err: err, CrawlDelay: crawlDelay})
			return
		}
		c.finish(l, RobotsDenied, frontier.Result{CrawlDelay: crawlDelay})
		return
	}

	req := &fetch.Request{URL: u}
	start := time.Now()
	resp, err := c.fetcher.Fetch(ctx, req)
	res := frontier.Result{CrawlDelay: crawlDelay}
	if resp != nil {
		res.Duration = resp.Timings.Total
		res.Status = resp.Status
	}
	if res.Duration <= 0 {
		res.Duration = time.Since(start)
	}
	if err != nil {
		res.Err = err
		if ctx.Err() != nil {
			c.requeue(l, res)
			return
		}
		kind := fetch.KindOther
		var fe *fetch.Error
		if errors.As(err, &fe) {
			kind = fe.Kind
		}
		if transient(kind) && c.retry(l, &res, 0) {
			return
		}
		c.c.fetchError(kind)
		c.reportError(l.URL.URL, err)
		c.finish(l, FetchError, res)
		return
	}
	c.c.statusCode(resp.Status)
	c.c.bytes.Add(int64(len(resp.Body)))
	// Every response that does not become a page (a redirect, an error
	// status, a 304) still goes to the sinks that archive exchanges, so
	// that a replay of the archive sees what the crawl saw. Duplicates are
	// left out: their content is archived under the URL it was first seen
	// at, and a replay must not find a second copy to keep instead.
	kept := false
	defer func() {
		if !kept {
			c.exchange(ctx, resp, start)
		}
	}()

	switch {
	case resp.NotModified():
		res.Fingerprint = l.URL.Fingerprint
		c.finishRevisit(l, Unchanged, res)
		return
	case resp.Status >= 300 && resp.Status < 400:
		if resp.Location != nil {
			out, cands := c.filterLinks(l.URL.URL, l.URL.Depth, []fetch.Link{{URL: resp.Location, Rel: "redirect"}})
			c.enqueue(ctx, l.URL.URL, out, cands, true)
		}
		c.finish(l, Redirected, res)
		return
	case resp.Status == 429 || resp.Status == 503:
		res.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
		if c.retry(l, &res, res.RetryAfter) {
			return
		}
		c.finish(l, HTTPError, res)
		return
	case resp.Status < 200 || resp.Status >= 300:
		c.finish(l, HTTPError, res)
		return
	}

	doc, err := c.parser.Parse(resp)
	switch {
	case errors.Is(err, fetch.ErrUnsupportedType):
		// A PDF or an image: fetched and archived, but no text or links.
		doc = &fetch.Document{URL: resp.URL}
	case err != nil:
		c.reportError(l.URL.URL, err)
		c.finish(l, ParseError, res)
		return
	}

	// Content seen? A revisit first retires its own previous fingerprint
	// when the content changed, or stops here when it did not.
	fp := dedup.TextFingerprint([]byte(doc.Text))
	res.Fingerprint = fp
	if old := l.URL.Fingerprint; old != 0 {
		if old == fp {
			c.finishRevisit(l, Unchanged, res)
			return
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
	if doc.Text == "" && len(resp.Body) > 0 {
		// A PDF or an image has no text to shingle: exact duplicates of
		// its bytes are caught by their fingerprint alone.
		fp = dedup.TextFingerprint(resp.Body)
		res.Fingerprint = fp
		first, known, err := c.bodySeen.Record(fp, l.URL.URL)
		if err != nil {
			c.reportError(l.URL.URL, err)
		}
		// Known at its own URL: recorded by a run killed before the
		// page's outcome was journaled, and fetched again on resume.
		if known && first != l.URL.URL {
			kept = true // its content is archived at the URL first seen with it
			c.finishRevisit(l, DuplicateContent, res)
			return
		}
	} else if doc.Text != "" {
		m, err := c.content.Seen(ctx, dedup.Doc{URL: l.URL.URL, Text: []byte(doc.Text)})
		if err != nil {
			c.reportError(l.URL.URL, err)
		} else {
			res.Fingerprint = m.Fingerprint
			// Seen at its own URL: recorded by a run killed before the
			// page's outcome was journaled, and fetched again on resume.
			if m.Seen && m.URL != l.URL.URL {
				kept = true // its content is archived at the URL first seen with it
				c.finishRevisit(l, DuplicateContent, res)
				return
			}
		}
	}

	page := &Page{URL: l.URL.URL, Depth: l.URL.Depth, Fetched: start, Response: resp, Document: doc, Fingerprint: res.Fingerprint}
	var cands []frontier.URL
	if !doc.NoFollow {
		page.Links, cands = c.filterLinks(l.URL.URL, l.URL.Depth+1, doc.Links)
	}
	// Sinks and OnPage see the page before its links are prioritized, so
	// a prioritizer that scores links by their source page (a focused
	// crawler) can learn from it.
	kept = true
	for _, s := range c.cfg.Sinks {
		if err := s.Write(ctx, page); err != nil {
			c.sinkErrors.Add(1)
			c.cfg.Logger.Error("crawlkit: sink", "url", page.URL, "err", err)
		}
	}
	if c.cfg.OnPage != nil {
		c.cfg.OnPage(page)
	}
	c.enqueue(ctx, l.URL.URL, page.Links, cands, false)
	c.finishRevisit(l, Fetched, res)
}

// filterLinks canonicalises a page's links and sends them through the URL
// filter. It returns the canonical URLs that passed (the page's out-links
// in the web graph) and, of those, the candidates for the frontier (within
// MaxDepth), at depth.
func (c *Crawler) filterLinks(source string, depth int, links []fetch.Link) (out []string, cands []frontier.URL) {
	if len(links) > 0 {
		out, cands = make([]string, 0, len(links)), make([]frontier.URL, 0, len(links))
	}
	for _, ln := range links {
		if ln.HasRel("nofollow") {
			continue
		}
		c.c.links.Add(1)
		canon, err := c.cfg.Canonicalizer.Canonical(ln.URL.String())
		if err != nil {
			c.c.filtered("malformed")
			continue
		}
		cu, err := url.Parse(canon)
		if err != nil {
			c.c.filtered("malformed")
			continue
		}
		if err := c.filters.Filter(cu); err != nil {
			reason := "filter"
			if r, ok := frontier.ReasonOf(err); ok {
				reason = r.String()
			}
			c.c.filtered(reason)
			continue
		}
		out = append(out, canon)
		if c.cfg.MaxDepth > 0 && depth > c.cfg.MaxDepth {
			c.c.filtered("max depth")
			continue
		}
		cands = append(cands, frontier.URL{URL: canon, Depth: depth, Source: source, Anchor: ln.Text})
	}
	return out, cands
}

// enqueue hands a fetched page's out-links to an OPIC prioritizer, sends
// those of other nodes' hosts to the host splitter, and admits the rest to
// the frontier.
func (c *Crawler) enqueue(ctx context.Context, source string, out []string, cands []frontier.URL, redirect bool) {
	// Once a page was fetched its links must be queued even if the crawl
	// is stopping: they are about to be marked seen and journaled, and a
	// frontier Add cut short by the cancelled context would lose them for
	// good (the resumed crawl would take them for duplicates).
	ctx = context.WithoutCancel(ctx)
	if f, ok := c.cfg.Prioritizer.(interface {
		Fetched(page string, links []string)
	}); ok && !redirect {
		// OPIC: the page's cash goes to its links before they are
		// prioritized.
		f.Fetched(source, out)
	}
	if sp := c.cfg.Splitter; sp != nil && len(cands) > 0 {
		// The host splitter of Figure 20.2: after the URL filter, URLs of
		// hosts other nodes own go to them, before duplicate elimination
		// (the owner's URL-seen set decides).
		local, remote := cands[:0:0], cands[:0:0]
		for _, u := range cands {
			if sp.Local(frontier.HostKey(u.URL)) {
				local = append(local, u)
			} else {
				remote = append(remote, u)
			}
		}
		if len(remote) > 0 {
			if err := sp.Send(ctx, remote); err != nil {
				c.cfg.Logger.Error("crawlkit: host splitter", "err", err)
				for range remote {
					c.c.filtered("splitter error")
				}
			} else {
				c.c.outcomes[Sent].Add(uint64(len(remote)))
			}
		}
		cands = local
	}
	c.admit(ctx, cands)
}

// admit runs URLs through the URL-seen test and the host budget and
// queues the new ones, journaled first.
func (c *Crawler) admit(ctx context.Context, cands []frontier.URL) (queued int, err error) {
	if len(cands) == 0 {
		return 0, nil
	}
	fps := make([]uint64, len(cands))
	for i := range cands {
		fps[i] = dedup.Fingerprint(cands[i].URL)
	}
	seen, err := c.urlSeen.TestAndAddBatch(ctx, nil, fps)
	if err != nil {
		c.cfg.Logger.Error("crawlkit: url seen", "err", err)
		for range cands {
			c.c.filtered("url seen error")
		}
		return 0, err
	}
	batch := cands[:0]
	for i := range cands {
		if seen[i] {
			c.c.count(DuplicateURL)
			continue
		}
		if !c.noteHost(frontier.HostKey(cands[i].URL)) {
			c.c.filtered("host budget")
			continue
		}
		batch = append(batch, cands[i])
	}
	if len(batch) == 0 {
		return 0, nil
	}
	c.pause.RLock()
	err = c.journal.added(batch)
	if err == nil {
		err = c.front.Add(ctx, batch...)
	}
	c.pause.RUnlock()
	if err != nil {
		if ctx.Err() == nil {
			c.cfg.Logger.Error("crawlkit: frontier add", "err", err)
		}
		return 0, err
	}
	c.c.outcomes[Queued].Add(uint64(len(batch)))
	c.prefetch(batch)
	return len(batch), nil
}

// Add offers URLs to the crawl from outside the loop: the URLs another
// node's host splitter sent to this one (they are counted as Received), or
// URLs a program discovers by other means. Each is canonicalised, checked
// against the URL-seen set and the host budget, and queued if new. The URL
// filters are not applied again: the sender applied them. Add may be
// called before and during Run, from any goroutine. With a CheckpointDir,
// URLs added before Run has opened the checkpoint are held and queued,
// journaled, once it has.
func (c *Crawler) Add(ctx context.Context, urls ...frontier.URL) error {
	batch := make([]frontier.URL, 0, len(urls))
	for _, u := range urls {
		canon, err := c.cfg.Canonicalizer.Canonical(u.URL)
		if err != nil {
			c.c.filtered("malformed")
			continue
		}
		u.URL = canon
		batch = append(batch, u)
	}
	c.c.received.Add(uint64(len(urls)))
	if c.cfg.CheckpointDir != "" {
		c.earlyMu.Lock()
		if !c.journaled {
			// Run has not opened the journal yet: it will admit these.
			c.early = append(c.early, batch...)
			c.earlyMu.Unlock()
			return nil
		}
		c.earlyMu.Unlock()
	}
	_, err := c.admit(ctx, batch)
	return err
}

// exchange hands a response that is not a page to the sinks that archive
// every exchange (ExchangeSink).
func (c *Crawler) exchange(ctx context.Context, resp *fetch.Response, start time.Time) {
	for _, s := range c.cfg.Sinks {
		es, ok := s.(ExchangeSink)
		if !ok {
			continue
		}
		if err := es.Exchange(ctx, resp, start); err != nil {
			c.sinkErrors.Add(1)
			c.cfg.Logger.Error("crawlkit: sink", "url", resp.URL.String(), "err", err)
		}
	}
}

// finish reports a lease done with its final outcome.
func (c *Crawler) finish(l *frontier.Lease, o Outcome, res frontier.Result) {
	c.c.count(o)
	c.pause.RLock()
	defer c.pause.RUnlock()
	if err := c.journal.done(l.URL.URL, o); err != nil {
		c.cfg.Logger.Error("crawlkit: journal", "err", err)
	}
	if err := c.front.Done(l, res); err != nil && !errors.Is(err, frontier.ErrClosed) {
		c.cfg.Logger.Error("crawlkit: frontier done", "err", err)
	}
}

// finishRevisit is finish for a page that was fetched: in continuous mode
// it schedules the next visit by the page's estimated change rate.
func (c *Crawler) finishRevisit(l *frontier.Lease, o Outcome, res frontier.Result) {
	if c.cfg.Continuous {
		res.Revisit = time.Now().Add(c.revisitInterval(l.URL.History, res.Fingerprint != l.URL.Fingerprint && l.URL.Fingerprint != 0))
	}
	c.finish(l, o, res)
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

// requeue leaves a lease outstanding because the crawl is stopping: a
// checkpoint writes leased URLs as queued, so the next run fetches it.
func (c *Crawler) requeue(*frontier.Lease, frontier.Result) {}

// retry sends a lease back to the frontier to be fetched again after
// wait (at least the politeness gap), if it has retries left.
func (c *Crawler) retry(l *frontier.Lease, res *frontier.Result, wait time.Duration) bool {
	if c.cfg.MaxRetries < 0 {
		return false
	}
	c.retryMu.Lock()
	n := c.retries[l.URL.URL]
	ok := n < c.cfg.MaxRetries
	if ok {
		c.retries[l.URL.URL] = n + 1
	} else {
		delete(c.retries, l.URL.URL)
	}
	c.retryMu.Unlock()
	if !ok {
		return false
	}
	c.c.count(Retried)
	u := l.URL
	if wait <= 0 {
		wait = time.Second << n
	}
	u.Due = time.Now().Add(wait)
	c.pause.RLock()
	defer c.pause.RUnlock()
	_ = c.front.Done(l, *res)
	if err := c.front.Add(context.Background(), u); err != nil {
		c.cfg.Logger.Error("crawlkit: retry", "url", u.URL, "err", err)
	}
	return true
}

// politeWait sleeps k × d (capped by MaxDelay) unless ctx ends first.
func (c *Crawler) politeWait(ctx context.Context, d time.Duration) bool {
	gap := max(time.Duration(c.cfg.DelayFactor*float64(d)), c.cfg.MinDelay)
	gap = min(gap, c.cfg.MaxDelay)
	if gap <= 0 {
		return true
	}
	t := time.NewTimer(gap)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
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
	case fetch.KindTimeout, fetch.KindReset, fetch.KindConnect, fetch.KindDNS:
		return true
	}
	return false
}

// retryAfter parses a Retry-After header (seconds or an HTTP date);
// 0 when absent or malformed.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	// delay-seconds of any size is a delay: ParseUint saturates a number
	// too large for 64 bits (ErrRange) rather than failing it, whatever
	// the size of int.
	if n, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return time.Duration(min(n, 86400)) * time.Second
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil && t.After(now) {
		return min(t.Sub(now), 24*time.Hour)
	}
	return 0
}
