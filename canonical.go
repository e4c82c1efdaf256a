package crawlkit

import (
	"context"
	"fmt"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

// CanonicalPolicy says which canonical URLs a crawl honours: the URL a
// page names in <link rel=canonical> or in an HTTP header
// `Link: <url>; rel="canonical"` (RFC 6596), the only way a PDF can.
//
// A page that names another URL as its canonical, within the policy, is
// an alias of it. The alias is fetched, archived and counted as any page
// (Outcome Fetched), and Page.Canonical says whose alias it is. The
// canonical URL is queued, through the URL filters, at the alias's own
// depth (it is the same page, not a link further). The index sinks leave
// the alias out: the canonical URL, fetched under its own name, is the
// one document. Its content is recorded by the content-seen test under
// the canonical URL, so that the canonical page is not taken for a
// duplicate of its alias when it is fetched after it, while the alias's
// other aliases are duplicates. Every sink that is an AliasSink (the link
// logs) is told, for a page and for a duplicate alike, and
// ReadLinkLogCanonical collapses the alias into the canonical node: the
// links from the alias and to it become links from and to the canonical
// URL.
//
// A canonical URL the URL filters refuse is not honoured (the page would
// fall out of the index), nor is one among several different canonical
// URLs a page names: a page that contradicts itself names none. A
// canonical URL is always a link too, whatever the policy. A canonical
// target that robots.txt forbids, or that fails, leaves its aliases out
// of the index.
//
// The default, CanonicalSameDomain, honours a canonical URL only within
// the page's registrable domain (urlnorm.Domain, Config.PrivateSuffixes):
// the mobile host m.example.com and www.example.com are one owner's
// hosts, while a page that names another site's URL as its canonical
// either syndicates that site's content, or is a spammer's or an
// intruder's way of making the crawl drop a page from the index in
// favour of another site. CanonicalAnyHost trusts it anyway, as a crawl
// of cooperating sites may; CanonicalSameHost trusts less;
// CanonicalOff treats rel=canonical as an ordinary link.
type CanonicalPolicy uint8

// The canonical policies; the zero value is the default.
const (
	CanonicalSameDomain CanonicalPolicy = iota // honoured within the page's registrable domain
	CanonicalSameHost                          // honoured on the page's own host (and port)
	CanonicalAnyHost                           // honoured wherever it points
	CanonicalOff                               // never honoured: an ordinary link
	numCanonicalPolicies
)

var canonicalNames = [numCanonicalPolicies]string{"domain", "host", "any", "off"}

// String returns the policy's name, as ParseCanonicalPolicy reads it:
// "domain", "host", "any" or "off".
func (p CanonicalPolicy) String() string {
	if p < numCanonicalPolicies {
		return canonicalNames[p]
	}
	return fmt.Sprintf("CanonicalPolicy(%d)", uint8(p))
}

// ParseCanonicalPolicy returns the policy String names s, or an error
// wrapping ErrConfig.
func ParseCanonicalPolicy(s string) (CanonicalPolicy, error) {
	for p, n := range canonicalNames {
		if s == n {
			return CanonicalPolicy(p), nil
		}
	}
	return 0, fmt.Errorf("%w: canonical policy %q: want domain, host, any or off", ErrConfig, s)
}

// canonicalOf returns the canonical URL the page at self (its response
// resp, parsed as doc) names and the policy honours, in canonical form,
// or "" when it names none, only itself, several, or one the policy or
// the URL filters refuse.
func (c *Crawler) canonicalOf(self string, resp *fetch.Response, doc *fetch.Document) string {
	if c.cfg.Canonicals == CanonicalOff {
		return ""
	}
	var named string
	ambiguous := false
	consider := func(l fetch.Link) {
		if !l.HasRel("canonical") {
			return
		}
		canon, err := c.cfg.Canonicalizer.Canonical(l.URL.String())
		if err != nil {
			return
		}
		if named != "" && canon != named {
			ambiguous = true
		}
		named = canon
	}
	if vs := resp.Header.Values("Link"); len(vs) > 0 {
		for _, l := range fetch.ParseLinkHeader(vs, resp.URL) {
			consider(l)
		}
	}
	if doc != nil {
		for _, l := range doc.Links {
			if l.Tag == "link" {
				consider(l)
			}
		}
	}
	if named == "" || named == self || ambiguous {
		return ""
	}
	switch c.cfg.Canonicals {
	case CanonicalSameHost:
		if frontier.HostKey(named) != frontier.HostKey(self) {
			return ""
		}
	case CanonicalSameDomain:
		if c.domainOf(frontier.HostKey(named)) != c.domainOf(frontier.HostKey(self)) {
			return ""
		}
	}
	if !c.passes(nil, named) {
		return ""
	}
	return named
}

// queueCanonical puts the canonical URL of w's page, a page or a
// duplicate, first among its candidates, at the page's own depth: the
// canonical URL is the same page under its proper name, not a link
// further, and comes first so that its depth wins over the link's.
func (c *Crawler) queueCanonical(w *work) {
	if w.canon == "" || w.requeue || (w.outcome != Fetched && w.outcome != DuplicateContent) {
		return
	}
	w.t.links++
	u := frontier.URL{URL: w.canon, Depth: w.l.URL.Depth, Source: w.l.URL.URL}
	w.cands = append([]frontier.URL{u}, w.cands...)
}

// aliasTo tells s, if it is an AliasSink, that w's URL is an alias of
// its canonical URL.
func (c *Crawler) aliasTo(ctx context.Context, s Sink, w *work) {
	if w.canon == "" || w.requeue || (w.outcome != Fetched && w.outcome != DuplicateContent) {
		return
	}
	if as, ok := s.(AliasSink); ok {
		c.sinkError(w.l.URL.URL, as.Alias(ctx, w.l.URL.URL, w.canon))
	}
}
