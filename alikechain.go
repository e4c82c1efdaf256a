package crawlkit

import (
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/frontier"
)

// maxAlikeFound bounds the URLs alikeFound remembers (about 6 MB).
const maxAlikeFound = 1 << 18

// alikeFound remembers the URLs that pages of content seen before found
// on their own host, so that the trap defence counts a near-duplicate
// against its host only when the page that found it was content seen
// before too (TrapOptions; with the URL rules on, an exact copy they do
// not explain counts wherever it was found). A spider trap's pages lead
// to more of the same: the next month of an empty calendar, the same page
// under the next session id, one more level of a looping directory. The
// near-duplicate pages of a template — the class pages of a javadoc
// package, which its summary page lists — are found by a page of new
// content, and each leads on to pages of its own.
//
// The set is a hint kept in memory, by fingerprint: a resumed crawl (or a
// cluster node that took a shard over) starts without it, and its first
// generation of alike pages goes uncounted. Past maxAlikeFound URLs it
// stops remembering and every alike page counts, as if each were found by
// one: the defence then errs towards stopping a trap, until the URLs it
// remembers, fetched one by one, are down to half of maxAlikeFound. A
// redirect passes on who found it. Used under commitMu.
type alikeFound struct {
	m        map[uint64]struct{}
	overflow bool
}

// add remembers the URLs of found on the host of page, which found them.
func (a *alikeFound) add(page string, found []frontier.URL) {
	host := frontier.HostKey(page)
	for i := range found {
		u := found[i].URL
		if frontier.HostKey(u) != host {
			continue
		}
		if a.m == nil {
			a.m = make(map[uint64]struct{})
		}
		if len(a.m) >= maxAlikeFound {
			a.overflow = true
			return
		}
		a.m[dedup.Fingerprint(u)] = struct{}{}
	}
}

// has reports whether a page of content seen before found url (or
// everything counts, past maxAlikeFound).
func (a *alikeFound) has(url string) bool {
	if a.overflow {
		return true
	}
	_, ok := a.m[dedup.Fingerprint(url)]
	return ok
}

// take reports whether a page of content seen before found url (or
// everything counts, past maxAlikeFound), and forgets url; an overflow
// ends once the set is down to half its bound.
func (a *alikeFound) take(url string) bool {
	if len(a.m) == 0 && !a.overflow {
		return false
	}
	fp := dedup.Fingerprint(url)
	_, found := a.m[fp]
	delete(a.m, fp)
	counts := found || a.overflow
	if a.overflow && len(a.m) <= maxAlikeFound/2 {
		a.overflow = false
	}
	return counts
}
