package fetchtest

import (
	"net/url"
	"strings"
)

// Missed compares a crawl with the ground truth: it returns the pages
// reachable from seeds (Seeds() if none) under agent's robots.txt rules
// (see Reachable) that the request log shows were never requested —
// neither the page itself nor any exact duplicate of it, since a crawler
// that eliminates duplicate content rightly crawls only one copy of a
// mirrored site, nor, for a page of the Aliases site, any URL Canonical
// maps to it. Pages for which skip returns true (nil skips none) are
// not expected, e.g. the URLs a crawler's filters refuse by design, such as
// images. Sorted; empty when the crawl was complete. O(log + pages + links).
func (w *Web) Missed(agent string, skip func(rawURL string) bool, seeds ...string) []string {
	return w.missed(w.Reachable(agent, seeds...), skip)
}

// MissedRendered is Missed for a crawl that renders pages: it expects
// the pages of ReachableRendered, those only scripts link to included.
func (w *Web) MissedRendered(agent string, skip func(rawURL string) bool, seeds ...string) []string {
	return w.missed(w.ReachableRendered(agent, seeds...), skip)
}

func (w *Web) missed(reachable []string, skip func(rawURL string) bool) []string {
	requested := make(map[string]bool)
	for _, r := range w.Log() {
		u := &url.URL{Scheme: "http", Host: r.Host + ":" + w.Port()}
		path, query, _ := strings.Cut(r.Path, "?")
		if p, err := url.PathUnescape(path); err == nil {
			u.Path, u.RawPath = p, path
		} else {
			u.Path = path
		}
		u.RawQuery = query
		s := canonical(u)
		requested[s] = true
		if h := w.byName[r.Host]; h != nil && h.kind == kindAlias {
			if c, ok := w.Canonical(s); ok {
				requested[c] = true
			}
		}
	}
	dupOf := make(map[string][]string)
	for _, cl := range w.ExactDuplicates() {
		for _, u := range cl {
			dupOf[u] = cl
		}
	}
	var missed []string
	for _, u := range reachable {
		if requested[u] || (skip != nil && skip(u)) {
			continue
		}
		found := false
		for _, d := range dupOf[u] {
			if requested[d] {
				found = true
				break
			}
		}
		if !found {
			missed = append(missed, u)
		}
	}
	return missed
}
