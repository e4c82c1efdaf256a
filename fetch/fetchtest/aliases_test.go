package fetchtest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// aliasWeb is a small web with the Aliases site, and the names its tests
// need: hosts, and the seed-dependent file names read off the ground truth.
type aliasWeb struct {
	*fetchtest.Web
	host, www string
	articles  []string // paths of the articles
	files     []string // paths of the /v3/ chapters (index.html not among them)
	v2own     []string // paths of the /v2/ files that are not /v3/'s
	classes   []string // paths of the class pages
}

func newAliasWeb(t *testing.T, seed int64) *aliasWeb {
	t.Helper()
	w := fetchtest.NewWeb(fetchtest.Config{Seed: seed, Hosts: 3, MeanPages: 4, Aliases: true})
	t.Cleanup(w.Close)
	a := &aliasWeb{Web: w, host: w.Host(fetchtest.Aliases), www: "www." + w.Host(fetchtest.Aliases)}
	for _, u := range w.PagesOf(a.host) {
		p := strings.TrimPrefix(u, w.URL(a.host, ""))
		p = "/" + p
		switch {
		case strings.HasPrefix(p, "/news/") && strings.HasSuffix(p, ".html"):
			a.articles = append(a.articles, p)
		case strings.HasPrefix(p, "/v3/") && p != "/v3/":
			a.files = append(a.files, p)
		case strings.HasPrefix(p, "/v2/"):
			a.v2own = append(a.v2own, p)
		case strings.HasPrefix(p, "/api/") && !strings.HasPrefix(p, "/api/class-use/") && p != "/api/":
			a.classes = append(a.classes, p)
		}
	}
	if len(a.articles) != 25 || len(a.files) != 29 || len(a.v2own) != 5 || len(a.classes) != 12 {
		t.Fatalf("site map: %d articles, %d chapters, %d own v2 files, %d classes; want 25, 29, 5, 12",
			len(a.articles), len(a.files), len(a.v2own), len(a.classes))
	}
	return a
}

// closure returns every URL the ground-truth links lead to from the
// site's entry, in breadth-first order: the URLs a crawl without rewrite
// rules fetches.
func (a *aliasWeb) closure() []string {
	entry := a.URL(a.host, "/")
	seen := map[string]bool{entry: true}
	queue := []string{entry}
	for i := 0; i < len(queue); i++ {
		for _, l := range a.Links(queue[i]) {
			if !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
	}
	return queue
}

// inLinks returns, for each distinct page of the site, the distinct pages
// that link it under any of their URLs.
func (a *aliasWeb) inLinks() map[string]map[string]bool {
	from := map[string]map[string]bool{}
	for _, u := range a.closure() {
		src, _ := a.Canonical(u)
		for _, l := range a.Links(u) {
			dst, _ := a.Canonical(l)
			if from[dst] == nil {
				from[dst] = map[string]bool{}
			}
			from[dst][src] = true
		}
	}
	return from
}

// TestAliasesServed checks each phenomenon of the Aliases site on the
// wire: pairs of URLs that must answer the same bytes, and pairs that look
// alike but must not; and URLs that must answer 404.
func TestAliasesServed(t *testing.T) {
	a := newAliasWeb(t, 1)
	A := func(p string) string { return a.URL(a.host, p) }
	W := func(p string) string { return a.URL(a.www, p) }
	art, file := a.articles[3], a.files[7]
	type pair struct {
		name string
		x, y string
		same bool
	}
	cases := []pair{
		{"www home", A("/"), W("/"), true},
		{"www article", A(art), W(art), true},
		{"www with params", A(art), W(art + "?utm_source=share&utm_medium=x"), true},
		{"www robots.txt", A("/robots.txt"), W("/robots.txt"), true},
		{"www 404", A("/no/such/page"), W("/no/such/page"), true},
		{"www v2 file", A(a.v2own[0]), W(a.v2own[0]), true},
		{"/index.html", A("/"), A("/index.html"), true},
		{"/news/index.html", A("/news/"), A("/news/index.html"), true},
		{"/docs/index.html", A("/docs/"), A("/docs/index.html"), true},
		{"/api/index.html", A("/api/"), A("/api/index.html"), true},
		{"/v3/index.html", A("/v3/"), A("/v3/index.html"), true},
		{"/current/index.html", A("/v3/"), A("/current/index.html"), true},
		{"/v2/ index", A("/v3/"), A("/v2/"), true},
		{"ref", A(art), A(art + "?ref=7"), true},
		{"ref, other value", A(art + "?ref=7"), A(art + "?ref=12"), true},
		{"utm_*", A(art), A(art + "?utm_source=home&utm_campaign=spring&utm_medium=mail"), true},
		{"sessionid", A("/contact.html"), A("/contact.html?sessionid=9f2c"), true},
		{"any parameter on a static file", A(file), A(file + "?x=1&page=2&lang=de"), true},
		{"lang on the listing", A("/news/"), A("/news/?lang=de"), true},
		{"page=1 is the listing", A("/news/"), A("/news/?page=1"), true},
		{"page with neutral params", A("/news/?page=3"), A("/news/index.html?ref=2&page=3&sessionid=1"), true},
		{"lang=en is the default", A("/about.html"), A("/about.html?lang=en"), true},
		{"page=2 is another page", A("/news/"), A("/news/?page=2"), false},
		{"page=2 and page=3", A("/news/?page=2"), A("/news/?page=3"), false},
		{"lang=de is another page", A("/about.html"), A("/about.html?lang=de"), false},
		{"lang=de and lang=fr", A("/about.html?lang=de"), A("/about.html?lang=fr"), false},
		{"two near-duplicate classes", A(a.classes[0]), A(a.classes[1]), false},
		{"two articles", A(a.articles[0]), A(a.articles[1]), false},
	}
	for _, f := range a.files {
		cases = append(cases, pair{"/current/ is /v3/: " + f, A(f), A(strings.Replace(f, "/v3/", "/current/", 1)), true})
		v2 := strings.Replace(f, "/v3/", "/v2/", 1)
		cases = append(cases, pair{"/v2/ against /v3/: " + f, A(f), A(v2), !slices.Contains(a.v2own, v2)})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rx, bx := get(t, a.Web, tc.x)
			ry, by := get(t, a.Web, tc.y)
			if rx.StatusCode != ry.StatusCode || rx.StatusCode != a.Status(tc.x) || ry.StatusCode != a.Status(tc.y) {
				t.Fatalf("status %d and %d (Status %d and %d)", rx.StatusCode, ry.StatusCode, a.Status(tc.x), a.Status(tc.y))
			}
			if got := bytes.Equal(bx, by); got != tc.same {
				t.Errorf("%s and %s: same bytes %v, want %v", tc.x, tc.y, got, tc.same)
			}
			cx, okx := a.Canonical(tc.x)
			cy, oky := a.Canonical(tc.y)
			if rx.StatusCode == 200 && !strings.HasSuffix(tc.x, "/robots.txt") {
				if !okx || !oky || (cx == cy) != tc.same {
					t.Errorf("Canonical: %q %v and %q %v; same page %v, want %v", cx, okx, cy, oky, cx == cy, tc.same)
				}
			} else if okx || oky {
				t.Errorf("Canonical of a non-page: %q %v, %q %v", cx, okx, cy, oky)
			}
		})
	}
	for _, p := range []string{"/news/?page=6", "/news/?page=0", "/news/?page=02", "/news/?page=2&page=3",
		"/news/?page=x", "/about.html?lang=xx", "/about.html?lang=de&lang=fr", "/v3/nope.html", "/current",
		"/v2/index.htm", "/api/class-use/", "/api/Nope.html", "/news/nope.html", "/robots.txt?x=1", "/index.html/"} {
		for _, u := range []string{A(p), W(p)} {
			if resp, _ := get(t, a.Web, u); resp.StatusCode != 404 || a.Status(u) != 404 {
				t.Errorf("%s: %d (Status %d), want 404", u, resp.StatusCode, a.Status(u))
			}
			if c, ok := a.Canonical(u); ok {
				t.Errorf("Canonical(%s) = %s, want none", u, c)
			}
		}
	}
}

// sortQuery puts a URL's query parameters in the order of the ground truth.
func sortQuery(t *testing.T, s string) string {
	t.Helper()
	u := mustParse(t, s)
	if u.RawQuery != "" {
		u.RawQuery = u.Query().Encode()
	}
	return u.String()
}

// TestAliasesClosure follows the links from the site's entry, as a crawl
// without rewrite rules does: every URL met answers a page whose bytes are
// those of its canonical page, the parser finds the links Links reports,
// every distinct page is met and distinct pages differ; and each kind of
// alias is met many times over.
func TestAliasesClosure(t *testing.T) {
	a := newAliasWeb(t, 2)
	pages := a.PagesOf(a.host)
	bodies := map[string][]byte{}
	for _, u := range pages {
		resp, body := get(t, a.Web, u)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("%s: %d %s", u, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if c, ok := a.Canonical(u); !ok || c != u {
			t.Errorf("Canonical(%s) = %q, %v: a page is its own canonical URL", u, c, ok)
		}
		bodies[u] = body
	}
	byBody := map[string]string{}
	for u, b := range bodies {
		if v, dup := byBody[string(b)]; dup {
			t.Errorf("distinct pages %s and %s serve the same bytes", u, v)
		}
		byBody[string(b)] = u
	}

	urls := a.closure()
	met := map[string]bool{}
	count := map[string]int{}
	for _, u := range urls {
		c, ok := a.Canonical(u)
		if !ok {
			t.Errorf("%s, linked from the site, is not a page", u)
			continue
		}
		met[c] = true
		resp, body := get(t, a.Web, u)
		if resp.StatusCode != 200 || !bytes.Equal(body, bodies[c]) {
			t.Errorf("%s: %d, same bytes as %s: %v", u, resp.StatusCode, c, bytes.Equal(body, bodies[c]))
		}
		if a.Title(u) != a.Title(c) || a.Title(u) == "" {
			t.Errorf("%s: title %q, its page %s %q", u, a.Title(u), c, a.Title(c))
		}
		var got []string
		p := fetch.HTML{}
		d := p.ParseBytes(body, mustParse(t, u))
		for _, l := range d.Links {
			if s := sortQuery(t, l.URL.String()); !slices.Contains(got, s) {
				got = append(got, s)
			}
		}
		if !slices.Equal(got, a.Links(u)) {
			t.Errorf("%s: parsed links %v, ground truth %v", u, got, a.Links(u))
		}
		if d.Title != a.Title(u) {
			t.Errorf("%s: parsed title %q, ground truth %q", u, d.Title, a.Title(u))
		}
		pu := mustParse(t, u)
		switch {
		case u == c:
			count["canonical"]++
		case pu.Hostname() == a.www:
			count["www"]++
		}
		if q := pu.Query(); q.Has("ref") || q.Has("utm_source") || q.Has("sessionid") {
			count["neutral parameter"]++
		}
		if strings.HasSuffix(pu.Path, "/index.html") {
			count["index.html"]++
		}
		if strings.HasPrefix(pu.Path, "/current/") {
			count["/current/"]++
		}
	}
	for _, u := range pages {
		if !met[u] {
			t.Errorf("%s: no link leads to it", u)
		}
	}
	for kind, least := range map[string]int{"www": 100, "neutral parameter": 36, "index.html": 10, "/current/": 29} {
		if count[kind] < least {
			t.Errorf("%d URLs of kind %s met, want ≥ %d", count[kind], kind, least)
		}
	}
	t.Logf("%d URLs for %d distinct pages: %v", len(urls), len(pages), count)
}

// TestAliasesGroundTruth checks the ground truth of the site against
// itself and the rest of the web: the entry is linked from h000 and the
// pages are in Pages and Reachable once each, under canonical URLs; both
// hosts answer robots.txt like a permissive site.
func TestAliasesGroundTruth(t *testing.T) {
	a := newAliasWeb(t, 3)
	entry := a.URL(a.host, "/")
	if !slices.Contains(a.Links(a.URL(a.OrdinaryHosts()[0], "/")), entry) {
		t.Errorf("h000's home page does not link %s", entry)
	}
	if !slices.Contains(a.Hosts(), a.host) || !slices.Contains(a.Hosts(), a.www) {
		t.Errorf("Hosts %v lacks %s or %s", a.Hosts(), a.host, a.www)
	}
	pages := a.PagesOf(a.host)
	if len(pages) != 97 || pages[0] != entry {
		t.Errorf("PagesOf(%s): %d pages from %v, want 97 from the home page", a.host, len(pages), pages[:1])
	}
	if p := a.PagesOf(a.www); p != nil {
		t.Errorf("PagesOf(%s) = %d pages, want none", a.www, len(p))
	}
	all := a.Pages()
	reach := a.Reachable("crawlkit")
	fromEntry := a.Reachable("crawlkit", entry)
	if !slices.Equal(fromEntry, slices.Sorted(slices.Values(pages))) {
		t.Errorf("Reachable from the entry: %d pages, want the site's %d", len(fromEntry), len(pages))
	}
	for _, u := range pages {
		_, inAll := slices.BinarySearch(all, u)
		_, inReach := slices.BinarySearch(reach, u)
		if !inAll || !inReach || a.Status(u) != 200 {
			t.Errorf("%s: in Pages %v, in Reachable %v, Status %d", u, inAll, inReach, a.Status(u))
		}
	}
	for _, list := range [][]string{all, reach} {
		for _, u := range list {
			if strings.Contains(u, a.host) {
				if c, _ := a.Canonical(u); c != u {
					t.Errorf("%s listed, but its canonical URL is %s", u, c)
				}
			}
		}
	}
	for _, h := range []string{a.host, a.www} {
		if v := a.RobotsVariant(h); v != "allow-all" {
			t.Errorf("RobotsVariant(%s) = %q", h, v)
		}
		if !a.Allowed("evilbot", a.URL(h, "/api/")) {
			t.Errorf("%s forbids a page", h)
		}
	}
	s1, b1 := a.Robots(a.host)
	s2, b2 := a.Robots(a.www)
	if s1 != 200 || s1 != s2 || b1 != b2 || !strings.Contains(b1, "User-agent: *") {
		t.Errorf("robots.txt: %d %q and %d %q", s1, b1, s2, b2)
	}
	if _, body := get(t, a.Web, a.URL(a.www, "/robots.txt")); string(body) != b1 {
		t.Errorf("served robots.txt %q, Robots %q", body, b1)
	}
	// The class pages are a near-duplicate cluster, and no page is an
	// exact duplicate: aliases are Canonical's business.
	var cluster []string
	for _, p := range a.classes {
		cluster = append(cluster, a.URL(a.host, p))
	}
	slices.Sort(cluster)
	if !slices.ContainsFunc(a.NearDuplicates(), func(c []string) bool { return slices.Equal(c, cluster) }) {
		t.Errorf("NearDuplicates lacks the class pages %v", cluster)
	}
	for _, c := range a.ExactDuplicates() {
		if strings.Contains(c[0], a.host) {
			t.Errorf("ExactDuplicates lists %v", c)
		}
	}
	// Off the site, Canonical is the ground truth's form of the URL.
	h0 := a.OrdinaryHosts()[0]
	for _, tc := range []struct{ in, want string }{
		{"http://" + strings.ToUpper(h0) + ":" + a.Port() + "/#top", a.URL(h0, "/")},
		{a.URL(a.Host(fetchtest.Latin1), "/p/1.html"), a.URL(a.Host(fetchtest.Latin1), "/p/1.html")},
		{a.URL(a.Host(fetchtest.Statuses), "/404/x"), ""},
		{a.URL(a.Host(fetchtest.CalendarTrap), "/calendar/2026/01"), ""},
		{a.URL(h0, "/robots.txt"), ""},
		{"http://elsewhere.test/", ""},
	} {
		if got, ok := a.Canonical(tc.in); got != tc.want || ok != (tc.want != "") {
			t.Errorf("Canonical(%s) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

// TestAliasesCoverage crawls the site by hand under URL rewrite rules,
// right and wrong, and checks what the ground truth makes of the request
// log: Missed names exactly the pages a wrong rule loses (and those only
// lost pages link, such as an article listed only on a lost listing
// page), and AliasFetches counts the distinct pages and identical-content
// fetches.
func TestAliasesCoverage(t *testing.T) {
	www := regexp.MustCompile(`^http://www\.`)
	neutral := regexp.MustCompile(`[?&](ref|utm_[a-z]+|sessionid)=[^&]*`)
	indexHTML := regexp.MustCompile(`/index\.html(\?|$)`)
	current := regexp.MustCompile(`/current/`)
	frames := regexp.MustCompile(`/api/\?.*$`) // after indexHTML
	defaults := regexp.MustCompile(`[?&](page=1|lang=en)(&|$)`)
	pageParam := regexp.MustCompile(`[?&]page=[^&]*(&|$)`)
	langParam := regexp.MustCompile(`[?&]lang=[^&]*(&|$)`)
	fixQuery := func(s string) string { // "/x&a=1" → "/x?a=1", "/x?" → "/x"
		if i := strings.IndexByte(s, '&'); i >= 0 && !strings.Contains(s, "?") {
			s = s[:i] + "?" + s[i+1:]
		}
		return strings.TrimSuffix(s, "?")
	}
	right := func(u string) string {
		u = www.ReplaceAllString(u, "http://")
		u = fixQuery(neutral.ReplaceAllString(u, ""))
		u = fixQuery(defaults.ReplaceAllString(u, "$2"))
		u = indexHTML.ReplaceAllString(u, "/$1")
		u = frames.ReplaceAllString(u, "/api/")
		return current.ReplaceAllString(u, "/v3/")
	}
	type rule struct {
		name     string
		rewrite  func(string) string
		lost     func(path string) bool // canonical pages the rule loses
		identity int                    // identical-content fetches; -1: more than with right
	}
	for _, tc := range []rule{
		{"none", func(u string) string { return u }, nil, -1},
		{"www only", func(u string) string { return www.ReplaceAllString(u, "http://") }, nil, -1},
		// The right rules leave the /v2/ files that are /v3/'s bytes (and
		// /v2/ itself): no rule over URLs tells them from the five that
		// are not.
		{"right", right, nil, 25},
		// Wrong rules, each generalised from aliases a learner does see.
		{"every parameter is neutral", func(u string) string {
			u, _, _ = strings.Cut(right(u), "?")
			return u
		}, func(p string) bool { return strings.Contains(p, "?") }, 25},
		{"page is neutral", func(u string) string { return fixQuery(pageParam.ReplaceAllString(right(u), "$2")) },
			func(p string) bool { return strings.HasPrefix(p, "/news/?page=") }, 25},
		{"lang is neutral", func(u string) string { return fixQuery(langParam.ReplaceAllString(right(u), "$2")) },
			func(p string) bool { return strings.HasPrefix(p, "/about.html?lang=") }, 25},
		{"v2 is v3", func(u string) string { return strings.Replace(right(u), "/v2/", "/v3/", 1) },
			func(p string) bool { return strings.HasPrefix(p, "/v2/") }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAliasWeb(t, 4)
			entry := a.URL(a.host, "/")
			seen := map[string]bool{entry: true}
			queue := []string{entry}
			for i := 0; i < len(queue); i++ {
				resp, body := get(t, a.Web, queue[i])
				if resp.StatusCode != 200 {
					continue
				}
				p := fetch.HTML{}
				for _, l := range p.ParseBytes(body, mustParse(t, queue[i])).Links {
					c := *l.URL
					c.Fragment = ""
					if s := tc.rewrite(c.String()); !seen[s] {
						seen[s] = true
						queue = append(queue, s)
					}
				}
			}
			pages := a.PagesOf(a.host)
			var wantLost []string
			for _, u := range pages {
				if tc.lost != nil && tc.lost(strings.TrimPrefix(u, "http://"+a.host+":"+a.Port())) {
					wantLost = append(wantLost, u)
				}
			}
			slices.Sort(wantLost)
			missed := a.Missed("crawlkit", nil, entry)
			if tc.lost != nil && len(wantLost) == 0 {
				t.Fatal("the rule loses nothing: the case tests nothing")
			}
			from := a.inLinks()
			for _, u := range missed {
				if slices.Contains(wantLost, u) {
					continue
				}
				for src := range from[u] {
					if !slices.Contains(missed, src) {
						t.Errorf("%s missed, but %s, which links it, was not", u, src)
					}
				}
			}
			for _, u := range wantLost {
				if !slices.Contains(missed, u) {
					t.Errorf("%s not missed: Missed = %v", u, missed)
				}
			}
			distinct, identical := a.AliasFetches(a.Log())
			if len(distinct)+len(missed) != len(pages) {
				t.Errorf("AliasFetches: %d distinct pages, %d missed, of %d", len(distinct), len(missed), len(pages))
			}
			switch {
			case tc.identity >= 0 && identical != tc.identity:
				t.Errorf("%d identical-content fetches, want %d", identical, tc.identity)
			case tc.identity < 0 && identical <= 25:
				t.Errorf("%d identical-content fetches, no more than the right rules' 25", identical)
			}
			t.Logf("%d requests, %d distinct pages, %d identical-content fetches, %d missed",
				len(a.Log()), len(distinct), identical, len(missed))
		})
	}
}

// TestAliasFetches checks the counting on a log made by hand: repeats of
// a URL count, robots.txt, 404s, HEAD requests and other hosts do not.
func TestAliasFetches(t *testing.T) {
	a := newAliasWeb(t, 5)
	A := func(p string) string { return a.URL(a.host, p) }
	for _, u := range []string{A("/robots.txt"), A("/"), A("/index.html"), a.URL(a.www, "/"), A("/"),
		A("/nope"), A("/news/?page=2"), A("/news/index.html?page=2&ref=1"), A("/news/"),
		a.URL(a.OrdinaryHosts()[0], "/")} {
		get(t, a.Web, u)
	}
	if _, err := a.Client().Head(A("/docs/")); err != nil {
		t.Fatal(err)
	}
	distinct, identical := a.AliasFetches(a.Log())
	want := []string{A("/"), A("/news/"), A("/news/?page=2")}
	if !slices.Equal(distinct, want) || identical != 4 {
		t.Errorf("AliasFetches = %v, %d; want %v, 4", distinct, identical, want)
	}
}

// TestAliasesNearDuplicates checks the class pages: each pair shares at
// least 80% of its word 4-grams, no two are the same bytes, and each holds
// the only link to its class-use page.
func TestAliasesNearDuplicates(t *testing.T) {
	a := newAliasWeb(t, 6)
	var sets []map[string]bool
	var bodies [][]byte
	for _, p := range a.classes {
		_, b := get(t, a.Web, a.URL(a.host, p))
		bodies = append(bodies, b)
		sets = append(sets, shingles(b))
	}
	lo := 1.0
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			if bytes.Equal(bodies[i], bodies[j]) {
				t.Errorf("%s and %s: the same bytes", a.classes[i], a.classes[j])
			}
			lo = min(lo, jaccard(sets[i], sets[j]))
		}
	}
	if lo < 0.8 {
		t.Errorf("class pages: least Jaccard %.2f, want ≥ 0.8", lo)
	}
	t.Logf("class pages: least Jaccard %.2f", lo)
	from := a.inLinks()
	for _, p := range a.classes {
		use := a.URL(a.host, strings.Replace(p, "/api/", "/api/class-use/", 1))
		if a.Status(use) != 200 {
			t.Fatalf("%s: %d", use, a.Status(use))
		}
		if got := from[use]; len(got) != 1 || !got[a.URL(a.host, p)] {
			t.Errorf("%s linked from %v, want only %s", use, got, p)
		}
	}
}

// TestAliasesDNS resolves both host names through a DNS server that
// knows only the wildcard for Config.Domain, and fetches a page through
// each: nothing more is needed.
func TestAliasesDNS(t *testing.T) {
	a := newAliasWeb(t, 7)
	srv := dnstest.Start(t, dnstest.Config{})
	srv.AddWildcard(a.Domain(), 60, netip.MustParseAddr("127.0.0.1"))
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Addr())
	}}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, err := r.LookupNetIP(ctx, "ip4", host)
		if err != nil {
			return nil, err
		}
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(ips[0].String(), port))
	}}
	defer tr.CloseIdleConnections()
	var first []byte
	for _, h := range []string{a.host, a.www} {
		resp, err := (&http.Client{Transport: tr}).Get(a.URL(h, "/"))
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || first != nil && !bytes.Equal(body, first) {
			t.Errorf("%s: %d, same bytes as %s: %v", h, resp.StatusCode, a.host, bytes.Equal(body, first))
		}
		first = body
	}
}

// TestAliasesOff checks that without Config.Aliases neither host exists
// and nothing links them.
func TestAliasesOff(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 4, MeanPages: 8})
	defer w.Close()
	for _, host := range []string{w.Host(fetchtest.Aliases), "www." + w.Host(fetchtest.Aliases)} {
		u := w.URL(host, "/")
		if slices.Contains(w.Hosts(), host) || w.Status(u) != 0 || w.PagesOf(host) != nil {
			t.Errorf("%s exists without Config.Aliases", host)
		}
		if c, ok := w.Canonical(u); ok {
			t.Errorf("Canonical(%s) = %s", u, c)
		}
		_, err := w.DialContext(context.Background(), "tcp", host+":"+w.Port())
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("dial %s: %v, want not found", host, err)
		}
		for _, l := range w.Links(w.URL(w.OrdinaryHosts()[0], "/")) {
			if strings.Contains(l, host) {
				t.Errorf("h000 links %s", l)
			}
		}
	}
	if d, n := w.AliasFetches(w.Log()); d != nil || n != 0 {
		t.Errorf("AliasFetches = %v, %d", d, n)
	}
}

// TestAliasesDeterministic checks that the seed alone makes the site:
// two webs of one seed serve the same bytes, another seed other names.
func TestAliasesDeterministic(t *testing.T) {
	a, b, c := newAliasWeb(t, 8), newAliasWeb(t, 8), newAliasWeb(t, 9)
	norm := func(x *aliasWeb, s string) string { return strings.ReplaceAll(s, ":"+x.Port(), ":PORT") }
	pa, pb := a.PagesOf(a.host), b.PagesOf(b.host)
	for i := range pa {
		if norm(a, pa[i]) != norm(b, pb[i]) {
			t.Fatalf("page %d: %s and %s", i, pa[i], pb[i])
		}
		_, ba := get(t, a.Web, pa[i])
		_, bb := get(t, b.Web, pb[i])
		if norm(a, string(ba)) != norm(b, string(bb)) {
			t.Errorf("%s: bytes differ between two webs of one seed", pa[i])
		}
	}
	if slices.Equal(a.articles, c.articles) || slices.Equal(a.v2own, c.v2own) && slices.Equal(a.files, c.files) {
		t.Errorf("seeds 8 and 9 make the same site")
	}
}

// TestAliasScale checks Config.AliasScale: articles, listing pages,
// classes and their class-use pages grow with it, the manuals do not; a
// class page's frameset variant is the package summary; a scale outside
// 0..MaxAliasScale is refused.
func TestAliasScale(t *testing.T) {
	for _, tc := range []struct{ scale, pages int }{
		{0, 97}, {1, 97}, {3, 97 + 2*(25+5+2*12)}, {10, 583},
	} {
		w := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 3, MeanPages: 4, Aliases: true, AliasScale: tc.scale})
		host := w.Host(fetchtest.Aliases)
		pages := w.PagesOf(host)
		if len(pages) != tc.pages {
			t.Errorf("AliasScale %d: %d distinct pages, want %d", tc.scale, len(pages), tc.pages)
		}
		v3 := 0
		for _, p := range pages {
			if strings.Contains(p, "/v3/") {
				v3++
			}
		}
		if v3 != 30 {
			t.Errorf("AliasScale %d: %d /v3/ files, want 30", tc.scale, v3)
		}
		for _, p := range pages {
			if cls, ok := strings.CutPrefix(p, w.URL(host, "/api/")); ok && !strings.Contains(cls, "/") && cls != "" {
				if got, _ := w.Canonical(w.URL(host, "/api/index.html?"+cls)); got != w.URL(host, "/api/") {
					t.Errorf("the frameset variant of %s is %q, want the package summary", cls, got)
				}
				break
			}
		}
		w.Close()
	}
	for _, bad := range []int{-1, fetchtest.MaxAliasScale + 1} {
		if err := (fetchtest.Config{Aliases: true, AliasScale: bad}).Validate(); err == nil {
			t.Errorf("AliasScale %d accepted", bad)
		}
	}
}
