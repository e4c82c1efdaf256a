package fetchtest

import (
	"strconv"
	"strings"
)

// routeKind says what a URL of the web is; serving and the ground truth both
// go through route, so they cannot disagree.
type routeKind uint8

const (
	routeNotFound   routeKind = iota
	routePage                 // a page of an ordinary host's model (also on mirrors)
	routeCharset              // a page of the Latin1 or Windows1252 host
	routeRobots               // /robots.txt and the hops of a redirected one
	routeSitemap              // a sitemap file of an ordinary host
	routeRedirect             // a redirect (chains, loops, robots hops)
	routeStatus               // a fixed error status
	routeTrap                 // any page of a trap host (subdomain trap included)
	routeHostile              // any resource of the Hostile host
	routeRetryOK              // a /retry/N/ page of Statuses after its N failures
	routeJavadoc              // a page of the Javadoc host
	routeAlias                // a URL of the Aliases site that answers a page
	routeCanon                // a URL of the Canonicals site
	routeScript               // a page of a script host (Config.Scripts)
	routeScriptFile           // a script, style or data file of a script host
)

type route struct {
	kind     routeKind
	status   int
	page     int    // routePage, routeCharset, routeJavadoc, routeAlias: page index
	location string // routeRedirect: the Location header as served
	name     string // routeSitemap: file name
}

// charsetPages is the number of pages of each legacy-charset host.
const charsetPages = 6

// route classifies path (with query) on host h. Cheap: one map lookup for
// pages of ordinary hosts.
func (w *Web) route(h *hostInfo, path, rawQuery string) route {
	pq := path
	if rawQuery != "" {
		pq += "?" + canonQuery(rawQuery)
	}
	switch h.kind {
	case kindOrdinary, kindMirror:
		v := &robotsVariants[h.variant]
		switch pq {
		case "/robots.txt":
			if v.target != "" {
				return route{kind: routeRedirect, status: 301, location: robotsRedirectStep}
			}
			if key, busy := w.busyRobots(h); busy && w.requests(key) == 0 {
				return route{kind: routeRobots, status: 503, name: key}
			}
			return route{kind: routeRobots, status: v.status}
		case robotsRedirectStep:
			if v.target != "" {
				return route{kind: routeRedirect, status: 302, location: w.base(h.name) + v.target}
			}
		case v.target:
			if v.target != "" {
				return route{kind: routeRobots, status: 200}
			}
		case "/sitemap.xml", "/sitemap_index.xml", "/sitemaps/pages-1.xml", "/sitemaps/pages-2.xml.gz":
			return route{kind: routeSitemap, status: 200, name: pq}
		}
		if j, ok := h.model().byPath[pq]; ok {
			return route{kind: routePage, status: 200, page: int(j)}
		}
	case kindLatin1, kindCP1252:
		if pq == "/robots.txt" {
			return route{kind: routeRobots, status: 200}
		}
		if pq == "/" {
			return route{kind: routeCharset, status: 200, page: 0}
		}
		if s, ok := strings.CutPrefix(pq, "/p/"); ok {
			if n, ok := strings.CutSuffix(s, ".html"); ok {
				if j, err := strconv.Atoi(n); err == nil && j > 0 && j < charsetPages && strconv.Itoa(j) == n {
					return route{kind: routeCharset, status: 200, page: j}
				}
			}
		}
	case kindJavadoc:
		if j := javadocRoute(pq); j >= 0 {
			return route{kind: routeJavadoc, status: 200, page: j}
		}
	case kindAlias:
		if path == "/robots.txt" && rawQuery == "" {
			return route{kind: routeRobots, status: 200}
		}
		if j := w.alias().route(path, rawQuery); j >= 0 {
			return route{kind: routeAlias, status: 200, page: j}
		}
	case kindCanon:
		if j := canonRoute(h.name == w.canonMobileHost(), pq); j >= 0 {
			return route{kind: routeCanon, status: 200, page: j}
		}
	case kindApp, kindShop:
		switch {
		case pq == "/robots.txt":
			return route{kind: routeRobots, status: 200}
		case rawQuery != "":
		case h.kind == kindApp && appPage(path) >= 0, h.kind == kindShop && shopRoute(path) >= 0:
			return route{kind: routeScript, status: 200}
		case scriptFile(h.kind, path):
			return route{kind: routeScriptFile, status: 200}
		}
	case kindRedirect:
		return w.routeRedirect(path, rawQuery)
	case kindHostile:
		for _, p := range hostilePaths {
			if path == p {
				return route{kind: routeHostile, status: 200}
			}
		}
	case kindStatus:
		if n, ok := retryLimit(path); ok && rawQuery == "" {
			if w.requests(path) < n {
				return route{kind: routeStatus, status: 503, name: path}
			}
			return route{kind: routeRetryOK, status: 200, name: path}
		}
		parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2)
		if code, err := strconv.Atoi(parts[0]); err == nil && code >= 400 && code <= 599 && len(parts) == 2 {
			return route{kind: routeStatus, status: code}
		}
	case kindCalendar:
		if path == "/" || validCalendar(path) {
			return route{kind: routeTrap, status: 200}
		}
	case kindSession:
		if path == "/" || validSessionItem(path) {
			return route{kind: routeTrap, status: 200}
		}
	case kindDeep:
		if path == "/" || validDeep(path) {
			return route{kind: routeTrap, status: 200}
		}
	case kindSubdomain:
		if subdomainPage(path) >= 0 {
			return route{kind: routeTrap, status: 200}
		}
	}
	return route{kind: routeNotFound, status: 404}
}

func (w *Web) routeRedirect(path, rawQuery string) route {
	if rawQuery != "" {
		return route{kind: routeNotFound, status: 404}
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) != 3 {
		return route{kind: routeNotFound, status: 404}
	}
	a, err1 := strconv.Atoi(parts[1])
	k, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || a < 0 || k < 0 || strconv.Itoa(a) != parts[1] || strconv.Itoa(k) != parts[2] {
		return route{kind: routeNotFound, status: 404}
	}
	switch parts[0] {
	case "chain":
		if a >= len(w.chains) || k >= w.chains[a].length {
			break
		}
		c := w.chains[a]
		code := redirectCodes[(a+k)%len(redirectCodes)]
		if k+1 < c.length {
			next := "/chain/" + parts[1] + "/" + strconv.Itoa(k+1)
			if k%2 == 1 {
				next = w.URL(w.Host(Redirects), next)
			}
			return route{kind: routeRedirect, status: code, location: next}
		}
		p, _ := w.pageSpec(c.host, c.page)
		return route{kind: routeRedirect, status: code, location: w.URL(w.ordinary[c.host].name, p)}
	case "loop":
		switch {
		case a == 0 && k < 2:
			return route{kind: routeRedirect, status: 302, location: "/loop/0/" + strconv.Itoa(1-k)}
		case a == 1 && k == 0:
			return route{kind: routeRedirect, status: 301, location: "/loop/1/0"}
		}
	}
	return route{kind: routeNotFound, status: 404}
}

// retryLimit parses /retry/N/name (N in 1..9) on the Statuses host.
func retryLimit(path string) (int, bool) {
	s, ok := strings.CutPrefix(path, "/retry/")
	if !ok || len(s) < 3 || s[0] < '1' || s[0] > '9' || s[1] != '/' {
		return 0, false
	}
	return int(s[0] - '0'), true
}

// Calendar trap: /calendar/YYYY/MM and /calendar/YYYY/MM/DD.
func parseCalendar(path string) (y, m, d int, ok bool) {
	s, found := strings.CutPrefix(path, "/calendar/")
	if !found {
		return 0, 0, 0, false
	}
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || len(parts[0]) != 4 || len(parts[1]) != 2 {
		return 0, 0, 0, false
	}
	y, e1 := strconv.Atoi(parts[0])
	m, e2 := strconv.Atoi(parts[1])
	if e1 != nil || e2 != nil || y < 1 || m < 1 || m > 12 {
		return 0, 0, 0, false
	}
	if len(parts) == 3 {
		if len(parts[2]) != 2 {
			return 0, 0, 0, false
		}
		var e3 error
		d, e3 = strconv.Atoi(parts[2])
		if e3 != nil || d < 1 || d > 28 {
			return 0, 0, 0, false
		}
	}
	return y, m, d, true
}

func validCalendar(path string) bool {
	_, _, _, ok := parseCalendar(path)
	return ok
}

// sessionItems is the number of distinct items behind the session-id trap.
const sessionItems = 20

func validSessionItem(path string) bool {
	s, ok := strings.CutPrefix(path, "/item/")
	if !ok {
		return false
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n < sessionItems && strconv.Itoa(n) == s
}

// maxDeepPath bounds the deep trap's paths only to keep them below common
// header limits; a crawler will meet its own limits long before.
const maxDeepPath = 4000

func validDeep(path string) bool {
	s, ok := strings.CutPrefix(path, "/d/")
	if !ok || len(path) > maxDeepPath {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '/' && i > 0 && s[i-1] != '/') {
			return false
		}
	}
	return true
}
