package crawlkit

import (
	"fmt"
	"math"
)

// TrapOptions tunes the trap defence: a per-host budget that adapts to
// what the host has served so far. The fixed budgets (MaxPagesPerHost,
// MaxPagesPerDomain, MaxHostsPerDomain) bound what a trap can cost; this
// rule stops most traps long before.
//
// It reads the content-seen test (IIR §20.2.1): a spider trap mints new
// URLs without end, but what it serves under them is content seen
// before — a calendar's empty months, a session id's copies of the same
// pages, a directory listing repeated at every depth. A host whose pages
// are mostly alike is cut: no new URL of it is admitted (Stats.FilteredBy
// "trap host"), and its queued URLs are abandoned unfetched (Outcome
// Abandoned). A host whose pages are distinct is never cut, however many
// it has. Each cut is logged at Info level. Near-duplicates count as
// alike at the content-seen test's threshold (Jaccard 0.8 by default).
//
// A near-duplicate counts against its host only when the page that found
// it (on the same host) was alike too: a trap's pages lead to more of the
// same — the next month of an empty calendar, one more level of a
// looping directory. The near-duplicates of a template are found by a
// page of new content: the class pages of a javadoc package, which score
// 0.80–0.88 against one another, are all listed by the package's summary,
// and a host of hundreds of them is not cut. The first generation of a
// near-duplicate trap (the pages its one page of new content found)
// therefore goes uncounted, a few requests more. An exact copy under a
// new URL that the learned URL rules do not explain as an alias (a soft
// 404, a session id's copy of a page) counts wherever it was found; with
// the rules off (Config.NoURLRules) a copy may be an alias, and copies
// count only in a chain, as near-duplicates do. A redirect passes on who found
// it, so a trap that sends its links through redirects is a chain all the
// same. Which page found a URL is kept in memory, for up to 262,144 URLs
// at a time (about 6 MB): a resumed crawl starts without it, and beyond
// it every alike page counts until half of those URLs are fetched.
// Duplicates the learned URL rules explain (Config.NoURLRules) never
// count.
//
// The rule reads counts the State keeps (KeyRecord.Pages and Alike), so a
// resumed crawl remembers what it learned: a cut host stays cut. (A
// resumed run learns it from the host's first queued URL: that URL and
// the host's robots.txt are fetched, the rest are abandoned.)
//
// A subdomain explosion serves distinct pages, a few per host, under
// host names without end in one registrable domain (urlnorm.Domain, and
// Config.PrivateSuffixes). The domain rule grows a registrable domain's
// allowance of hosts with the pages its hosts serve: beyond DomainHosts
// hosts, a domain gets one more host for every PagesPerHost pages of new
// content fetched from it, and a link to a further new host of it is
// refused (Stats.FilteredBy "domain trap"). A site whose hosts hold
// PagesPerHost pages or more on average is never held back for long; an
// explosion whose hosts hold fewer dies out: with 3 pages a host, 16 per
// host allowed and 10 to start with, it gets about 12 hosts. Seeds are
// always admitted. MaxHostsPerDomain stays the hard cap.
type TrapOptions struct {
	// AlikePages: a host is cut once it has served more than AlikePages
	// pages whose content had been seen before (exact or near duplicates)
	// and more than AlikeRatio times as many of them as pages of new
	// content. Defaults 16 and 2; a negative AlikePages disables the
	// host rule.
	AlikePages int
	AlikeRatio float64
	// DomainHosts and PagesPerHost tune the domain rule: a registrable
	// domain may have DomainHosts hosts, and one more for every
	// PagesPerHost pages of new content fetched from its hosts. Defaults
	// 10 and 16; a negative DomainHosts disables the domain rule.
	DomainHosts  int
	PagesPerHost int
}

// resolved returns the options with their defaults, or an error naming
// an invalid field.
func (o *TrapOptions) resolved() (TrapOptions, error) {
	var r TrapOptions
	if o != nil {
		r = *o
	}
	if r.AlikeRatio < 0 || math.IsNaN(r.AlikeRatio) || math.IsInf(r.AlikeRatio, 0) {
		return r, fmt.Errorf("Traps.AlikeRatio %v: want a finite number ≥ 0", r.AlikeRatio)
	}
	if r.AlikePages == 0 {
		r.AlikePages = 16
	}
	if r.AlikeRatio == 0 {
		r.AlikeRatio = 2
	}
	if r.PagesPerHost < 0 {
		return r, fmt.Errorf("Traps.PagesPerHost %d: want ≥ 0", r.PagesPerHost)
	}
	if r.DomainHosts == 0 {
		r.DomainHosts = 10
	}
	if r.PagesPerHost == 0 {
		r.PagesPerHost = 16
	}
	return r, nil
}

// domainFull reports whether a registrable domain that has hosts hosts
// and whose hosts served pages pages of new content may admit no further
// host under the domain rule.
func (o *TrapOptions) domainFull(hosts, pages int64) bool {
	return o.DomainHosts >= 0 && hosts >= int64(o.DomainHosts)+pages/int64(o.PagesPerHost)
}

// cut reports whether the host of record r is cut by the host rule.
func (o *TrapOptions) cut(r KeyRecord) bool {
	return o.AlikePages >= 0 && r.Alike > int64(o.AlikePages) && float64(r.Alike) > o.AlikeRatio*float64(r.Pages)
}

// pageDelta returns what a page with outcome out adds to its host's
// record: Pages for new content, Alike for content seen before.
func pageDelta(out Outcome) (pages, alike int64) {
	switch out {
	case Fetched:
		return 1, 0
	case DuplicateContent:
		return 0, 1
	}
	return 0, 0
}
