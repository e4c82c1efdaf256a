package dust

import "slices"

// A parked URL's page is served by its canonical form: the crawler fetches
// that one instead. When the canonical form gives no page (an error
// status, a failed fetch, a robots.txt denial), the rule that parked the
// URL was wrong for it, whatever its evidence elsewhere, and the page would
// be lost: Failed releases the URLs parked on it and keeps the URL in a
// bounded set of failed canonical forms, on which Park then refuses to park
// (the set is kept across a resume with the rules).

// maxFailed bounds the failed canonical forms remembered: the most
// recent, oldest forgotten first.
const maxFailed = 1 << 14

// Failed records that the crawler fetched url and got no page from it
// (an error status, a failed fetch, a robots.txt denial). If url is the
// canonical form of parked URLs, they are released and returned, for the
// crawler to queue again (they passed the URL-seen test when they were
// parked); later, Park refuses to park a URL on url. A URL whose host no
// active rule names is not recorded: no rewrite leads to it. Cost: a
// host lookup, and for a recorded URL a hash and a map operation, under
// the mutex.
func (l *Learner) Failed(url string) []string {
	p, ok := split(url)
	if !ok {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	if len(l.unproven) > 0 {
		delete(l.unproven, fnv(url))
	}
	if !slices.ContainsFunc(l.byHost[p.host], func(c *cand) bool { return c.state == Active }) {
		return nil
	}
	h := fnv(url)
	if l.failedAdd(h) {
		l.st.Failed++
	}
	for _, u := range l.parkedOn[h] {
		if chain, ok := l.parkedBy[u]; ok {
			l.unpark(u, chain)
			l.released = append(l.released, u)
			l.st.Released++
		}
	}
	delete(l.parkedOn, h)
	return l.takeReleased()
}

// failedAdd adds h to the failed canonical forms, forgetting the oldest
// beyond maxFailed, and reports whether it was new.
func (l *Learner) failedAdd(h uint64) bool {
	if _, ok := l.failed[h]; ok {
		return false
	}
	if len(l.failedOrder) >= maxFailed {
		delete(l.failed, l.failedOrder[0])
		l.failedOrder = l.failedOrder[1:]
	}
	l.failed[h] = struct{}{}
	l.failedOrder = append(l.failedOrder, h)
	return true
}

// unpark takes url, parked under chain, out of its rules' parking lots.
func (l *Learner) unpark(url string, chain []*cand) {
	delete(l.parkedBy, url)
	for _, o := range chain {
		o.nParked--
		if o.act != nil && o.nParked < l.opts.MaxParked {
			o.act.full.Store(false)
		}
	}
}
