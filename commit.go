package crawlkit

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

// commit makes w part of the crawl. Outside the commit lock: links already
// in the URL-seen set are dropped (the set only grows), links of other
// nodes' hosts go to the host splitter, the prioritizer learns from the
// page, and the sinks that keep nothing across a crash get it. Under the
// lock, one Txn: the new links pass the URL-seen test and the budgets and
// become pending, the durable sinks write the page and report their
// positions, the lease's URL is done (or requeued, or scheduled again),
// its host's next contact and the counters are saved. After the lock the
// frontier learns the same: the new URLs are added, then the lease is
// done, in that order, so that the crawl never looks empty in between.
func (c *Crawler) commit(ctx context.Context, w *work) error {
	ctx = context.WithoutCancel(ctx) // a page fetched is committed, stop or not
	cands, err := c.unseen(ctx, w)
	if err != nil {
		return err
	}
	fresh, err := c.changedEntries(ctx, w)
	if err != nil {
		return err
	}
	sooner := c.rescheduled(fresh)
	if len(w.parked) > 0 && c.cfg.Splitter != nil && !w.received {
		// A link of another node's host is that node's to park or fetch.
		keep := w.parked[:0]
		for _, p := range w.parked {
			if c.cfg.Splitter.Local(frontier.HostKey(p.u.URL)) {
				keep = append(keep, p)
			} else {
				cands = append(cands, p.u)
			}
		}
		w.parked = keep
	}
	cands = c.split(ctx, w, cands)
	if w.page != nil {
		if obs, ok := c.cfg.Prioritizer.(frontier.FetchObserver); ok {
			// OPIC: the page's cash goes to its links before they are
			// prioritized.
			obs.Fetched(w.source, w.links)
		}
		// Sinks and OnPage see the page before its links are
		// prioritized, so a prioritizer that scores links by their
		// source page (a focused crawler) can learn from it.
		for _, s := range c.plainSinks {
			c.sinkError(w.page.URL, s.Write(ctx, w.page))
		}
		if c.cfg.OnPage != nil {
			c.cfg.OnPage(w.page)
		}
	}
	// The durable sinks' costly part (compression, encoding) is done
	// here, in parallel; under the lock they only append.
	var prepared []Prepared
	if w.page != nil {
		for _, s := range c.durableSinks {
			var pr Prepared
			if ps, ok := s.(PreparingSink); ok {
				var err error
				if pr, err = ps.Prepare(ctx, w.page); err != nil {
					c.sinkError(w.page.URL, err)
				}
			}
			prepared = append(prepared, pr)
		}
	}
	if w.archive != nil {
		for _, s := range c.plainSinks {
			c.exchangeTo(ctx, s, w.archive, w.fetched)
		}
	}
	for _, sub := range w.subs {
		for _, s := range c.plainSinks {
			c.exchangeTo(ctx, s, sub, sub.Timings.Start)
		}
	}
	for _, s := range c.plainSinks {
		c.aliasTo(ctx, s, w)
	}

	var cut string // a host the trap defence cut with this page
	c.commitMu.Lock()
	admitted, holds, pageRec, err := c.admitLocked(ctx, w, cands)
	if err != nil {
		c.txn.Reset()
		c.commitMu.Unlock()
		return err
	}
	c.txn.Sent = append(c.txn.Sent, w.sent...)
	for _, u := range sooner {
		// A sitemap's <lastmod> brought the revisit forward.
		c.txn.Put = append(c.txn.Put, Pending{URL: u})
	}
	if w.rules && c.keepRules {
		// The rules moved with this page's fetch: saved in its Txn, so
		// that the parked URLs of a resumed crawl find their rules.
		c.rulesBuf, err = c.rules.AppendRules(c.rulesBuf[:0])
		if err == nil {
			c.txn.Rules = c.rulesBuf
		}
	}
	if w.page != nil {
		for i, s := range c.durableSinks {
			if pr := prepared[i]; pr != nil {
				c.sinkError(w.page.URL, pr.Write())
			} else if _, ok := s.(PreparingSink); !ok {
				c.sinkError(w.page.URL, s.Write(ctx, w.page))
			}
		}
	}
	if w.archive != nil {
		for _, s := range c.durableSinks {
			c.exchangeTo(ctx, s, w.archive, w.fetched)
		}
	}
	for _, sub := range w.subs {
		// What the page needed (a rendering fetcher's scripts and
		// data), so that a replay renders it as the crawl did.
		for _, s := range c.durableSinks {
			c.exchangeTo(ctx, s, sub, sub.Timings.Start)
		}
	}
	for _, s := range c.durableSinks {
		c.aliasTo(ctx, s, w)
	}
	if l := w.l; l != nil {
		now := time.Now()
		switch {
		case w.requeue:
			if w.retries > 0 {
				c.txn.Put = append(c.txn.Put, Pending{URL: l.URL, Retries: w.retries})
			}
		case w.outcome == Parked:
			// Pending still, and in no frontier queue: a resumed crawl
			// parks it again.
			c.txn.Put = append(c.txn.Put, Pending{URL: l.URL, Parked: w.parkedOn})
			w.t.count(Parked)
		case c.cfg.Continuous && w.revisit:
			changed := w.res.Fingerprint != l.URL.Fingerprint && l.URL.Fingerprint != 0
			w.res.Revisit = now.Add(c.hintedInterval(l.URL, c.revisitInterval(l.URL.History, changed)))
			c.txn.Put = append(c.txn.Put, Pending{URL: frontier.Revisit(l.URL, w.res, now)})
			w.t.count(w.outcome)
		default:
			c.txn.Done = append(c.txn.Done, l.URL.URL)
			w.t.count(w.outcome)
		}
		kd := KeyDelta{Key: hostKey(l.URL.URL)}
		if !w.res.Skipped {
			gap := c.pol.Gap(w.res)
			kd.Next, kd.Gap = now.Add(gap), gap
		}
		block, bo, err := c.backoffLocked(ctx, w, kd.Key, now)
		if err != nil {
			c.txn.Reset()
			c.commitMu.Unlock()
			return err
		}
		kd.Backoff = bo
		if block > 0 {
			// The block outlasts the gap: saved as the host's next
			// contact (a resumed crawl keeps it), held in the frontier
			// past MaxDelay, and the lease's own retry waits for it.
			until := now.Add(block)
			kd.Next = until
			holds = append(holds, hold{frontier.HostKey(l.URL.URL), until})
			w.res.RetryAfter = max(w.res.RetryAfter, block)
		}
		if !w.requeue {
			if !w.alias {
				// A duplicate the URL rules explain is an alias of a
				// page, not a trap's next page.
				kd.Pages, kd.Alike = pageDelta(w.outcome)
			}
			if !c.alike.take(l.URL.URL) && !(w.copy && c.rules != nil) {
				// A near-duplicate found by a page of new content: a
				// template's page (a javadoc package's classes), not a
				// trap's next. An exact copy under a new URL that the
				// URL rules do not explain as an alias (a soft 404, a
				// session id's copy) counts wherever it was found;
				// without the rules a copy may be an alias, and only a
				// chain of them counts.
				kd.Alike = 0
			}
			if kd.Pages > 0 {
				// New content grows its domain's allowance of hosts.
				c.txn.Keys = append(c.txn.Keys, KeyDelta{Key: domainKey(c.domainOf(frontier.HostKey(l.URL.URL))), Pages: kd.Pages})
			}
			pageRec.Apply(kd)
			if c.traps.cut(pageRec) {
				cut = kd.Key
			}
		}
		c.txn.Keys = append(c.txn.Keys, kd)
	}
	if n := uint32(len(w.released)); n > 0 {
		// Released URLs (queued after the commit, below) are queued
		// again, each counted as a link again (Stats.Links); counted
		// here, with the rest of the page's counters.
		w.t.outcomes[Queued] += n
		w.t.links += n
	}
	c.c.apply(&w.t)
	if c.durable {
		if err := c.saveProgress(); err != nil {
			c.txn.Reset()
			c.commitMu.Unlock()
			return err
		}
	}
	err = c.commitLocked(ctx, w.l != nil)
	if err != nil {
		return &Error{Op: "committing to the state", Err: err}
	}
	if cut != "" {
		if _, was := c.cutHosts.LoadOrStore(cut, struct{}{}); !was {
			c.cfg.Logger.Info("crawlkit: host cut as a spider trap: its queued URLs are abandoned",
				"host", strings.TrimPrefix(cut, "h:"), "alike pages", pageRec.Alike, "new pages", pageRec.Pages)
		}
	}

	if h, ok := c.front.(frontier.Holder); ok {
		for _, hd := range holds {
			h.Hold(c.keyOf(ctx, hd.key), hd.until)
		}
	}
	if len(w.released) > 0 {
		// A withdrawn rule gave back its parked URLs: pending in the
		// State since they were parked, they are queued now.
		depth := 0
		if w.l != nil {
			depth = w.l.URL.Depth + 1
		}
		back := make([]frontier.URL, len(w.released))
		for i, u := range w.released {
			back[i] = frontier.URL{URL: u, Depth: depth}
		}
		admitted = append(admitted, back...)
	}
	admitted = append(admitted, sooner...)
	if len(admitted) > 0 {
		c.setKeys(ctx, admitted)
		if err := c.front.Add(ctx, admitted...); err != nil {
			// The URLs are pending in the State: a later Run queues them.
			c.cfg.Logger.Error("crawlkit: frontier add", "err", err)
		} else {
			c.prefetch(admitted)
		}
	}
	if w.l != nil {
		if err := c.front.Done(w.l, w.res); err != nil {
			c.cfg.Logger.Error("crawlkit: frontier done", "url", w.l.URL.URL, "err", err)
		}
	}
	return nil
}

// commitLocked commits c.txn and releases commitMu. A Stager stages it
// under the lock and the wait for it to be durable happens after, so that
// the pages committed meanwhile can share its write; a worker (worker:
// the commit of a fetched page) lends its place for that wait.
func (c *Crawler) commitLocked(ctx context.Context, worker bool) error {
	st, ok := c.state.(Stager)
	if !ok {
		err := c.state.Commit(ctx, &c.txn)
		c.txn.Reset()
		c.commitMu.Unlock()
		return err
	}
	wait, err := st.Stage(ctx, &c.txn)
	c.txn.Reset()
	c.commitMu.Unlock()
	if err != nil || wait == nil {
		return err
	}
	if worker {
		return c.pool.waitErr(func() error { return wait(ctx) })
	}
	return wait(ctx)
}

// commitProgress commits the counters and the sinks' positions alone.
func (c *Crawler) commitProgress(ctx context.Context) error {
	c.commitMu.Lock()
	if err := c.saveProgress(); err != nil {
		c.txn.Reset()
		c.commitMu.Unlock()
		return &Error{Op: "committing to the state", Err: err}
	}
	if err := c.commitLocked(ctx, false); err != nil {
		return &Error{Op: "committing to the state", Err: err}
	}
	return nil
}

// saveProgress puts the counters, the crawl time and the durable sinks'
// positions into c.txn. Called with commitMu held.
func (c *Crawler) saveProgress() error {
	p := progress{stats: c.c.snapshot(), positions: c.positions[:0]}
	p.stats.Elapsed = c.elapsed()
	for i, s := range c.durableSinks {
		pos, err := s.Position()
		if err != nil {
			return &Error{Op: fmt.Sprintf("position of sink %d (%T)", i, s), Err: err}
		}
		p.positions = append(p.positions, pos)
	}
	c.positions = p.positions
	c.progBuf = appendProgress(c.progBuf[:0], &p)
	c.txn.Progress = c.progBuf
	return nil
}

// unseen returns the candidates of w not yet in the URL-seen set. A URL
// found there now is there for good, so this lookup is made outside the
// commit lock; admitLocked looks again at those that passed.
func (c *Crawler) unseen(ctx context.Context, w *work) ([]frontier.URL, error) {
	if len(w.cands) == 0 {
		return nil, nil
	}
	q := &Lookup{URLs: make([]uint64, len(w.cands))}
	for i := range w.cands {
		q.URLs[i] = dedup.Fingerprint(w.cands[i].URL)
	}
	if err := c.state.Lookup(ctx, q); err != nil {
		return nil, &Error{Op: "URL-seen lookup", Err: err}
	}
	out := w.cands[:0:0]
	for i := range w.cands {
		if q.Seen[i] {
			w.t.count(DuplicateURL)
			continue
		}
		out = append(out, w.cands[i])
	}
	return out, nil
}

// split sends the candidates whose hosts other nodes own to the host
// splitter (Figure 20.2: after the URL filter, before duplicate
// elimination, which the owner's URL-seen set does) and returns the local
// ones.
func (c *Crawler) split(ctx context.Context, w *work, cands []frontier.URL) []frontier.URL {
	sp := c.cfg.Splitter
	if sp == nil || len(cands) == 0 || w.received {
		return cands
	}
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
				w.t.filter("splitter error")
			}
		} else {
			w.t.outcomes[Sent] += uint32(len(remote))
			w.sent = remote
		}
	}
	return local
}

// admitLocked runs candidates through the URL-seen test and the budgets
// (per host, per registrable domain, hosts per registrable domain, and
// the trap defence's) and puts the new ones into c.txn. It returns them,
// the holds the frontier must know of first, and the record of the
// lease's host when its page counts for the trap defence (w.alike). Called
// with commitMu held, so the counts it reads are not changed by anyone
// else meanwhile.
func (c *Crawler) admitLocked(ctx context.Context, w *work, cands []frontier.URL) ([]frontier.URL, []hold, KeyRecord, error) {
	var page string // the lease's host key, when its page counts
	if w.l != nil && !w.requeue && (w.outcome == Fetched || w.outcome == DuplicateContent) {
		page = hostKey(w.l.URL.URL)
	}
	cands, err := c.parkLocked(ctx, w, cands)
	if err != nil {
		return nil, nil, KeyRecord{}, err
	}
	if len(cands) == 0 && page == "" {
		return nil, nil, KeyRecord{}, nil
	}
	q := &c.look
	q.URLs, q.Keys, q.Pending = q.URLs[:0], q.Keys[:0], nil
	type hostInfo struct {
		key, dkey, nkey string
	}
	hosts := make(map[string]hostInfo, 4)
	recs := make(map[string]KeyRecord, 8)
	addKey := func(k string) {
		if _, ok := recs[k]; !ok {
			recs[k] = KeyRecord{}
			q.Keys = append(q.Keys, k)
		}
	}
	if page != "" {
		addKey(page)
	}
	for i := range cands {
		q.URLs = append(q.URLs, dedup.Fingerprint(cands[i].URL))
		h := frontier.HostKey(cands[i].URL)
		if _, ok := hosts[h]; ok {
			continue
		}
		d := c.domainOf(h)
		hi := hostInfo{hostKey(cands[i].URL), domainKey(d), domainHosts(d)}
		hosts[h] = hi
		for _, k := range []string{hi.key, hi.dkey, hi.nkey} {
			addKey(k)
		}
	}
	if err := c.state.Lookup(ctx, q); err != nil {
		return nil, nil, KeyRecord{}, &Error{Op: "state lookup", Err: err}
	}
	var holds []hold
	now := time.Now()
	for i, k := range q.Keys {
		recs[k] = q.Records[i]
		if strings.HasPrefix(k, "h:") {
			// A host contacted by an earlier run may still be owed its
			// gap: the frontier is told before it gets the URLs.
			if until := c.resumeUntil(q.Records[i]); until.After(now) {
				holds = append(holds, hold{strings.TrimPrefix(k, "h:"), until})
			}
		}
	}
	counts := make(map[string]int64, len(recs))
	for k, r := range recs {
		counts[k] = r.Admitted
	}
	start := maps.Clone(counts)
	admitted := make([]frontier.URL, 0, len(cands))
	batch := make(map[uint64]struct{}, len(cands))
	for i := range cands {
		fp := q.URLs[i]
		if _, dup := batch[fp]; dup || q.Seen[i] {
			w.t.count(DuplicateURL)
			continue
		}
		host := frontier.HostKey(cands[i].URL)
		hi := hosts[host]
		newHost := counts[hi.key] == 0
		hostMax, domainMax := c.cfg.MaxPagesPerHost, c.cfg.MaxPagesPerDomain
		if c.hostRules != nil {
			hostMax, domainMax = c.hostBudget(host), c.domainBudget(host)
		}
		switch {
		case hostMax > 0 && counts[hi.key] >= int64(hostMax):
			w.t.filter("host budget")
			continue
		case domainMax > 0 && counts[hi.dkey] >= int64(domainMax):
			w.t.filter("domain budget")
			continue
		case newHost && c.cfg.MaxHostsPerDomain > 0 && counts[hi.nkey] >= int64(c.cfg.MaxHostsPerDomain):
			w.t.filter("domain hosts")
			continue
		case newHost && !w.seeds && c.traps.domainFull(counts[hi.nkey], recs[hi.dkey].Pages):
			w.t.filter("domain trap")
			continue
		case c.traps.cut(recs[hi.key]):
			w.t.filter("trap host")
			continue
		}
		if newHost {
			counts[hi.nkey]++
			w.t.hosts++
		}
		counts[hi.key]++
		counts[hi.dkey]++
		batch[fp] = struct{}{}
		u := cands[i]
		admitted = append(admitted, u)
		c.txn.Add = append(c.txn.Add, Pending{URL: frontier.URL{URL: u.URL, Depth: u.Depth, Priority: u.Priority, Due: u.Due,
			Sitemap: u.Sitemap, ChangeFreq: u.ChangeFreq}})
	}
	for _, k := range q.Keys {
		if d := counts[k] - start[k]; d != 0 {
			c.txn.Keys = append(c.txn.Keys, KeyDelta{Key: k, Admitted: d})
		}
	}
	switch {
	case page != "" && w.outcome == DuplicateContent:
		c.alike.add(w.l.URL.URL, admitted)
	case w.l != nil && !w.requeue && w.outcome == Redirected && c.alike.has(w.l.URL.URL):
		// A redirect passes on who found it: a trap that sends its
		// links through redirects is still a chain of alike pages.
		c.alike.add(w.l.URL.URL, admitted)
	}
	w.t.outcomes[Queued] += uint32(len(admitted))
	if w.seeds {
		w.t.seeds += uint32(len(admitted))
	}
	return admitted, holds, recs[page], nil
}

// parkLocked parks the links of w that a learned rule rewrote (w.parked)
// and that are not in the URL-seen set: each becomes pending with the URL
// it is parked on, in the URL-seen set, in no frontier queue, counted
// under "url rule". A link whose rule is gone by now joins cands, which
// parkLocked returns. Called with commitMu held.
func (c *Crawler) parkLocked(ctx context.Context, w *work, cands []frontier.URL) ([]frontier.URL, error) {
	if len(w.parked) == 0 {
		return cands, nil
	}
	q := &Lookup{URLs: make([]uint64, len(w.parked))}
	for i := range w.parked {
		q.URLs[i] = dedup.Fingerprint(w.parked[i].u.URL)
	}
	if err := c.state.Lookup(ctx, q); err != nil {
		return nil, &Error{Op: "URL-seen lookup", Err: err}
	}
	batch := make(map[uint64]struct{}, len(w.parked))
	for i, p := range w.parked {
		if _, dup := batch[q.URLs[i]]; dup || q.Seen[i] {
			w.t.count(DuplicateURL)
			continue
		}
		batch[q.URLs[i]] = struct{}{}
		if !c.rules.Park(p.u.URL, p.canon) {
			cands = append(cands, p.u)
			continue
		}
		w.t.filter("url rule")
		c.txn.Add = append(c.txn.Add, Pending{URL: frontier.URL{URL: p.u.URL, Depth: p.u.Depth}, Parked: p.canon})
	}
	return cands, nil
}

// hold is a frontier key and the time before which it must not be
// contacted.
type hold struct {
	key   string
	until time.Time
}

// prefetch asks the resolver to resolve new hosts in the background, so
// that the name is known by the time the host's turn comes (§20.2.2).
func (c *Crawler) prefetch(batch []frontier.URL) {
	p, ok := c.resolver.(dns.Prefetcher)
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

// exchange hands a response that is not a page to every sink that
// archives exchanges (ExchangeSink). robots.txt answers come this way, as
// the robots.Cache fetches them, outside any commit: an archive may hold
// a robots.txt exchange of a page a crash undid, which a replay reads like
// any other.
func (c *Crawler) exchange(ctx context.Context, resp *fetch.Response, start time.Time) {
	for _, s := range c.cfg.Sinks {
		c.exchangeTo(ctx, s, resp, start)
	}
}

func (c *Crawler) exchangeTo(ctx context.Context, s Sink, resp *fetch.Response, start time.Time) {
	if es, ok := s.(ExchangeSink); ok {
		c.sinkError(resp.URL.String(), es.Exchange(ctx, resp, start))
	}
}

func (c *Crawler) sinkError(u string, err error) {
	if err != nil {
		c.sinkErrors.Add(1)
		c.cfg.Logger.Error("crawlkit: sink", "url", u, "err", err)
	}
}
