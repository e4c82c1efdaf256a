package crawlkit

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
)

// SitemapOptions tunes how the crawl reads sitemaps (sitemaps.org 0.9),
// which it does unless Config.NoSitemaps is set.
//
// When the crawl fetches a host's robots.txt, it queues the sitemaps the
// file names in its Sitemap lines; when the file names none (or there is
// no file: a 4xx answer), it queues the host's /sitemap.xml, the
// conventional place, unless NoGuess is set. A host whose robots.txt is
// unreachable gets neither until a later fetch of its robots.txt
// succeeds. A sitemap is a frontier.URL with Sitemap set to its level:
// it waits in its host's queue, is checked against robots.txt and
// fetched like any URL, so it counts for the host's politeness (one
// request in flight per host, the gap after it) and for its budget
// (MaxPagesPerHost counts URLs admitted, sitemaps included); it is
// archived by the ExchangeSinks (WARC) but is not a page: it does not
// count towards MaxPages and the sinks' Write never sees it. A sitemap
// ends as Outcome SitemapRead when read, SitemapFailed when it could not
// be fetched or read, Redirected when redirected (its target is queued
// as a sitemap of the same level).
//
// The entries of a sitemap index are queued as sitemaps one level
// deeper, up to MaxLevel; those of a urlset as pages one link deeper
// than the sitemap, carrying their <lastmod> and <changefreq>
// (frontier.URL.LastMod, ChangeFreq) for the Prioritizer, which may read
// them (the default, breadth first, does not). Both pass the URL filters
// (a ".gz" ending is not held against a sitemap: sitemap.xml.gz is the
// protocol's own form), the URL-seen test and the budgets, as links do;
// they count in Stats.Links. An entry outside the registrable domain of
// its sitemap, and a sitemap outside that of the robots.txt naming it,
// is refused (Stats.FilteredBy "sitemap domain"): a sitemap speaks for
// its own site, and nothing else. The learned URL rules do not rewrite
// them: a sitemap names the URLs its site wants fetched.
//
// In a continuous crawl (Config.Continuous) sitemaps are revisited like
// pages, and what they say steers the revisits: a page's <changefreq>
// is the interval of its first revisit and then bounds the interval the
// change-rate estimate gives (always: MinRevisit; never: MaxRevisit
// while no change has been seen), and a <lastmod> later than a page's
// last fetch makes the page due at once (with a Config.State, whose
// pending records say when the page was fetched last).
type SitemapOptions struct {
	// MaxLevel is the deepest sitemap followed: level 1 is a sitemap
	// robots.txt names (or /sitemap.xml), level 2 one that a sitemap
	// index of level 1 lists, and so on. Default 3: the protocol has no
	// index of indexes, but sites have them.
	MaxLevel int
	// MaxEntries caps the entries read from one sitemap (uncompressed
	// size is capped too: 50 MiB, the protocol's limit, after the
	// fetcher's own cap on the body it receives). Default 50,000, the
	// protocol's limit.
	MaxEntries int
	// MaxIndexEntries caps the sitemaps queued from one sitemap index,
	// so that MaxLevel levels of indexes cannot multiply into millions
	// of fetches. Default 1,000.
	MaxIndexEntries int
	// NoGuess: a host whose robots.txt names no sitemap is not asked for
	// /sitemap.xml.
	NoGuess bool
}

// resolved returns the options with their defaults, or an error naming
// an invalid field.
func (o *SitemapOptions) resolved() (SitemapOptions, error) {
	var r SitemapOptions
	if o != nil {
		r = *o
	}
	switch {
	case r.MaxLevel < 0 || r.MaxLevel > 255:
		return r, fmt.Errorf("Sitemaps.MaxLevel %d: want 0 (the default) to 255", r.MaxLevel)
	case r.MaxEntries < 0 || r.MaxIndexEntries < 0:
		return r, fmt.Errorf("Sitemaps.MaxEntries %d, MaxIndexEntries %d: want ≥ 0", r.MaxEntries, r.MaxIndexEntries)
	}
	if r.MaxLevel == 0 {
		r.MaxLevel = 3
	}
	if r.MaxEntries == 0 {
		r.MaxEntries = 50000
	}
	if r.MaxIndexEntries == 0 {
		r.MaxIndexEntries = 1000
	}
	return r, nil
}

// discoverSitemaps adds to w.cands the sitemaps of u's host, whose
// robots.txt the worker of w has just fetched (Verdict.Fetched): those
// the file names, else the host's /sitemap.xml.
func (c *Crawler) discoverSitemaps(ctx context.Context, w *work, u *url.URL, v robots.Verdict) {
	if c.cfg.NoSitemaps || v.Unreachable {
		return
	}
	rules, err := c.robots.Get(ctx, u) // cached by the fetch just made
	if err != nil {
		return
	}
	names := rules.Sitemaps()
	if len(names) == 0 {
		if c.sitemaps.NoGuess {
			return
		}
		names = []string{u.Scheme + "://" + u.Host + "/sitemap.xml"}
	}
	l := w.l
	domain := c.domainOf(frontier.HostKey(l.URL.URL))
	for _, s := range names {
		w.t.links++
		canon, err := c.cfg.Canonicalizer.Canonical(s)
		if err != nil {
			w.t.filter("malformed")
			continue
		}
		if c.domainOf(frontier.HostKey(canon)) != domain {
			w.t.filter("sitemap domain")
			continue
		}
		if !c.passesSitemap(&w.t, canon) {
			continue
		}
		w.cands = append(w.cands, frontier.URL{URL: canon, Depth: l.URL.Depth, Sitemap: 1, Source: l.URL.URL})
	}
}

// passesSitemap is passes for a sitemap's URL: a ".gz" ending, which the
// default filters refuse as an archive, is taken off first.
func (c *Crawler) passesSitemap(t *tally, canon string) bool {
	if i := strings.IndexAny(canon, "?#"); i < 0 && strings.HasSuffix(canon, ".gz") {
		canon = strings.TrimSuffix(canon, ".gz")
	} else if i >= 0 && strings.HasSuffix(canon[:i], ".gz") {
		canon = canon[:i-3] + canon[i:]
	}
	return c.passes(t, canon)
}

// readSitemap fills in w for the answer resp to its sitemap lease: the
// entries become candidates, and the outcome is SitemapRead, or
// SitemapFailed for an answer that is not a sitemap.
func (c *Crawler) readSitemap(ctx context.Context, w *work, resp *fetch.Response) {
	l := w.l
	w.source = l.URL.URL
	switch {
	case resp.NotModified():
		w.res.Fingerprint = l.URL.Fingerprint
		w.outcome, w.revisit = SitemapRead, true
		return
	case resp.Status >= 300 && resp.Status < 400:
		w.outcome = Redirected
		if resp.Location == nil {
			return
		}
		w.t.links++
		canon, err := c.cfg.Canonicalizer.Canonical(resp.Location.String())
		switch {
		case err != nil:
			w.t.filter("malformed")
		case c.domainOf(frontier.HostKey(canon)) != c.domainOf(frontier.HostKey(l.URL.URL)):
			w.t.filter("sitemap domain")
		case c.passesSitemap(&w.t, canon):
			w.cands = append(w.cands, frontier.URL{URL: canon, Depth: l.URL.Depth, Sitemap: l.URL.Sitemap, Source: l.URL.URL})
		}
		return
	case c.busy(resp.Status):
		if !c.retryBusy(ctx, w, resp) {
			w.outcome = SitemapFailed
		}
		return
	case resp.Status < 200 || resp.Status >= 300:
		w.outcome = SitemapFailed
		return
	}
	p := fetch.Sitemap{MaxEntries: c.sitemaps.MaxEntries}
	sd, err := p.ParseBytes(resp.Body, resp.URL)
	if err != nil {
		c.reportError(l.URL.URL, &fetch.Error{Op: "parse", Kind: fetch.KindProtocol, URL: l.URL.URL, Err: err})
		w.outcome = SitemapFailed
		return
	}
	// The sitemap's own fingerprint: a continuous crawl estimates how
	// often it changes, like a page's.
	w.res.Fingerprint = dedup.TextFingerprint(resp.Body)
	w.outcome, w.revisit = SitemapRead, true
	domain := c.domainOf(frontier.HostKey(l.URL.URL))
	entries := sd.Entries
	if sd.Index && len(entries) > c.sitemaps.MaxIndexEntries {
		w.t.dropped = uint32(len(entries) - c.sitemaps.MaxIndexEntries)
		entries = entries[:c.sitemaps.MaxIndexEntries]
	}
	w.cands = make([]frontier.URL, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		w.t.links++
		canon, err := c.cfg.Canonicalizer.Canonical(e.URL.String())
		if err != nil {
			w.t.filter("malformed")
			continue
		}
		if c.domainOf(frontier.HostKey(canon)) != domain {
			w.t.filter("sitemap domain")
			continue
		}
		if sd.Index {
			switch {
			case l.URL.Sitemap >= c.sitemaps.MaxLevel:
				w.t.filter("sitemap level")
			case c.passesSitemap(&w.t, canon):
				w.cands = append(w.cands, frontier.URL{URL: canon, Depth: l.URL.Depth, Sitemap: l.URL.Sitemap + 1, Source: l.URL.URL})
			}
			continue
		}
		depth := l.URL.Depth + 1
		switch {
		case !c.passes(&w.t, canon):
		case c.cfg.MaxDepth > 0 && depth > c.cfg.MaxDepth:
			w.t.filter("max depth")
		default:
			w.cands = append(w.cands, frontier.URL{URL: canon, Depth: depth, Source: l.URL.URL,
				LastMod: e.LastMod, ChangeFreq: frontier.ParseChangeFreq(e.ChangeFreq)})
		}
	}
}

// sitemapOutcome turns the outcome of a sitemap lease that failed the
// way a page fails (a fetch error, an error status, robots.txt) into
// SitemapFailed: a sitemap is not a page, and is not counted as one.
func sitemapOutcome(w *work) {
	if w.l == nil || w.l.URL.Sitemap == 0 || w.requeue {
		return
	}
	switch w.outcome {
	case FetchError, HTTPError, RobotsDenied, ParseError:
		w.outcome, w.t.errKind = SitemapFailed, ""
	}
}

// hintedInterval is the revisit interval d of u (from its change
// history) as the <changefreq> a sitemap gave u steers it: the named
// period before u has a history of its own, at most that period after;
// always is MinRevisit, and never MaxRevisit while no change was seen.
func (c *Crawler) hintedInterval(u frontier.URL, d time.Duration) time.Duration {
	f := u.ChangeFreq
	if f == frontier.FreqNever {
		if u.History.Changes == 0 {
			return c.cfg.MaxRevisit
		}
		return d
	}
	period, ok := f.Period()
	if !ok {
		return d
	}
	if u.History.Fetches > 0 {
		period = min(period, d)
	}
	return min(max(period, c.cfg.MinRevisit), c.cfg.MaxRevisit)
}

// maxRescheduled bounds the revisits brought forward whose old copy is
// still in the frontier (Crawler.stale): past it, a <lastmod> waits for
// the next one to come out.
const maxRescheduled = 100_000

// changedEntries returns, in a continuous crawl, the pending records of
// the entries of w's sitemap whose <lastmod> is later than their last
// fetch and whose revisit is still ahead: each comes back due now. The
// lookup is made outside the commit lock; a revisit committed meanwhile
// costs one fetch more, no more.
func (c *Crawler) changedEntries(ctx context.Context, w *work) ([]Pending, error) {
	if !c.cfg.Continuous || w.l == nil || w.l.URL.Sitemap == 0 || w.outcome != SitemapRead {
		return nil, nil
	}
	q := &Lookup{}
	var mod []time.Time
	for i := range w.cands {
		if u := &w.cands[i]; !u.LastMod.IsZero() && u.Sitemap == 0 {
			q.Pending = append(q.Pending, u.URL)
			mod = append(mod, u.LastMod)
		}
	}
	if len(q.Pending) == 0 {
		return nil, nil
	}
	if err := c.state.Lookup(ctx, q); err != nil {
		return nil, fmt.Errorf("crawlkit: pending lookup: %w", err)
	}
	now := time.Now()
	var out []Pending
	for i, found := range q.Found {
		p := q.PendingRecords[i]
		if !found || p.Parked != "" || p.URL.History.Fetches == 0 || !mod[i].After(p.URL.History.Last) || !p.URL.Due.After(now) {
			continue
		}
		p.URL.Due = now
		out = append(out, p)
	}
	return out, nil
}

// rescheduled records the revisits changedEntries brought forward, whose
// old copies are still in the frontier, and returns the new copies to
// queue: of the two leases, the one whose Due is not the recorded one is
// dropped unfetched (staleCopy).
func (c *Crawler) rescheduled(ps []Pending) []frontier.URL {
	if len(ps) == 0 {
		return nil
	}
	out := make([]frontier.URL, 0, len(ps))
	c.staleMu.Lock()
	defer c.staleMu.Unlock()
	if c.stale == nil {
		c.stale = make(map[uint64]int64)
	}
	for _, p := range ps {
		fp := dedup.Fingerprint(p.URL.URL)
		if _, ok := c.stale[fp]; ok || len(c.stale) >= maxRescheduled {
			continue
		}
		c.stale[fp] = p.URL.Due.UnixNano()
		out = append(out, p.URL)
	}
	return out
}

// staleCopy reports whether l is the old copy of a revisit a sitemap's
// <lastmod> brought forward: it is dropped, and only the new copy is
// fetched. Cheap when nothing was brought forward.
func (c *Crawler) staleCopy(l *frontier.Lease) bool {
	c.staleMu.Lock()
	defer c.staleMu.Unlock()
	if len(c.stale) == 0 {
		return false
	}
	fp := dedup.Fingerprint(l.URL.URL)
	due, ok := c.stale[fp]
	if !ok || l.URL.Due.UnixNano() == due {
		return false
	}
	delete(c.stale, fp)
	return true
}
