package fetchtest

import (
	"strconv"
	"strings"
	"time"
)

// The robots.txt variants of the ordinary hosts: host hNNN gets variant
// NNN mod 9; a mirror has its origin's. Only the subset of RFC 9309 the
// variants use is modelled: groups by product token, allow/disallow with
// '*' and a final '$', longest match wins and allow wins ties, 4xx means
// allow all, 5xx means disallow all.
type robotsRule struct {
	allow   bool
	pattern string
}

type robotsGroup struct {
	agents []string
	rules  []robotsRule
}

type robotsVariant struct {
	name       string
	status     int    // status of /robots.txt (200, 404, 500, or a redirect)
	target     string // for redirect: path of the final robots file
	groups     []robotsGroup
	crawlDelay bool
	sitemap    string // path announced in a Sitemap line, or ""
}

func dis(p string) robotsRule { return robotsRule{false, p} }
func alw(p string) robotsRule { return robotsRule{true, p} }

var robotsVariants = []robotsVariant{
	{name: "plain", status: 200, sitemap: "/sitemap.xml",
		groups: []robotsGroup{{agents: []string{"*"}, rules: []robotsRule{dis("")}}}},
	{name: "prefix", status: 200,
		groups: []robotsGroup{{agents: []string{"*"}, rules: []robotsRule{dis("/private/"), dis("/shop/")}}}},
	{name: "allow-override", status: 200,
		groups: []robotsGroup{{agents: []string{"*"}, rules: []robotsRule{dis("/archive/"), alw("/archive/2019/")}}}},
	{name: "wildcard", status: 200,
		groups: []robotsGroup{{agents: []string{"*"}, rules: []robotsRule{
			dis("/*.pdf$"), alw("/docs/*.pdf$"), dis("/search?*sort="), dis("/*/guide/")}}}},
	{name: "crawl-delay", status: 200, crawlDelay: true, sitemap: "/sitemap_index.xml",
		groups: []robotsGroup{{agents: []string{"*"}, rules: []robotsRule{dis("/private/")}}}},
	{name: "404", status: 404},
	{name: "5xx", status: 500},
	{name: "redirect", status: 301, target: "/site/robots.txt",
		groups: []robotsGroup{{agents: []string{"*"}, rules: []robotsRule{dis("/blog/"), dis("/private/")}}}},
	{name: "agents", status: 200, sitemap: "/sitemap_index.xml",
		groups: []robotsGroup{
			{agents: []string{"evilbot"}, rules: []robotsRule{dis("/")}},
			{agents: []string{"crawlkit", "goodbot"}, rules: []robotsRule{dis("/private/")}},
			{agents: []string{"*"}, rules: []robotsRule{dis("/shop/"), dis("/private/")}},
		}},
}

// robotsRedirectStep is the intermediate hop of the "redirect" variant:
// /robots.txt → 301 /robots-moved.txt → 302 /site/robots.txt.
const robotsRedirectStep = "/robots-moved.txt"

// renderRobots writes the body of a robots variant served on host.
func (w *Web) renderRobots(v *robotsVariant, host string) string {
	var b strings.Builder
	b.WriteString("# robots.txt for " + host + " (variant " + v.name + ")\n")
	for gi, g := range v.groups {
		if gi > 0 {
			b.WriteByte('\n')
		}
		for _, a := range g.agents {
			b.WriteString("User-agent: " + a + "\n")
		}
		if v.crawlDelay {
			b.WriteString("Crawl-delay: " + strconv.FormatFloat(w.cfg.CrawlDelay.Seconds(), 'f', -1, 64) + "\n")
		}
		for _, r := range g.rules {
			if r.allow {
				b.WriteString("Allow: " + r.pattern + "\n")
			} else {
				b.WriteString("Disallow: " + r.pattern + "\n")
			}
		}
	}
	if v.sitemap != "" {
		b.WriteString("\nSitemap: " + w.base(host) + v.sitemap + "\n")
	}
	return b.String()
}

// robotsOf returns the robots variant governing h, or nil for hosts without a
// robots.txt (404: everything allowed).
func robotsOf(h *hostInfo) *robotsVariant {
	switch h.kind {
	case kindOrdinary, kindMirror:
		return &robotsVariants[h.variant]
	case kindLatin1, kindCP1252, kindAlias, kindShop:
		return &charsetRobots
	case kindApp:
		return &appRobots
	}
	return nil
}

// robotsHost is the host name h's robots.txt names: its own, but for the
// www alias of the Aliases host, which serves the same bytes as that host.
func (w *Web) robotsHost(h *hostInfo) string {
	if h.kind == kindAlias {
		return w.Host(Aliases)
	}
	return h.name
}

var charsetRobots = robotsVariant{name: "allow-all", status: 200,
	groups: []robotsGroup{{agents: []string{"*"}, rules: []robotsRule{alw("/")}}}}

// isRobotsPath reports whether pathQuery is a robots.txt resource of h
// (including the hops of a redirected robots.txt), which a crawler may always
// fetch.
func isRobotsPath(h *hostInfo, pathQuery string) bool {
	if pathQuery == "/robots.txt" {
		return true
	}
	if v := robotsOf(h); v != nil && v.target != "" {
		return pathQuery == v.target || pathQuery == robotsRedirectStep
	}
	return false
}

// agentToken reduces a User-Agent string to its product token ("crawlkit"
// from "crawlkit/1.0 (+http://...)"), lower-cased.
func agentToken(agent string) string {
	for i := 0; i < len(agent); i++ {
		c := agent[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			agent = agent[:i]
			break
		}
	}
	return strings.ToLower(agent)
}

// allowedBy reports whether the variant v lets agent fetch pathQuery.
func allowedBy(v *robotsVariant, agent, pathQuery string) bool {
	if v == nil || pathQuery == "/robots.txt" {
		return true
	}
	switch {
	case v.status >= 500:
		return false
	case v.status >= 400:
		return true
	}
	token := agentToken(agent)
	var rules []robotsRule
	for _, g := range v.groups {
		for _, a := range g.agents {
			if a != "*" && strings.EqualFold(a, token) {
				rules = append(rules, g.rules...)
			}
		}
	}
	if rules == nil {
		for _, g := range v.groups {
			for _, a := range g.agents {
				if a == "*" {
					rules = append(rules, g.rules...)
				}
			}
		}
	}
	best, allow := -1, true
	for _, r := range rules {
		if r.pattern == "" || !matchRule(r.pattern, pathQuery) {
			continue
		}
		if n := len(r.pattern); n > best || n == best && r.allow {
			best, allow = n, r.allow
		}
	}
	return allow
}

// matchRule reports whether a robots.txt path pattern matches pathQuery:
// '*' matches any sequence of bytes, a final '$' anchors at the end, and
// otherwise the pattern need only match a prefix.
func matchRule(pattern, s string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	pi, si := 0, 0
	star, mark := -1, 0
	for {
		if pi == len(pattern) && (!anchored || si == len(s)) {
			return true
		}
		if pi < len(pattern) && pattern[pi] == '*' {
			star, mark = pi, si
			pi++
			continue
		}
		if pi < len(pattern) && si < len(s) && pattern[pi] == s[si] {
			pi++
			si++
			continue
		}
		if star < 0 || mark >= len(s) {
			return false
		}
		mark++
		pi, si = star+1, mark
	}
}

// crawlDelayOf returns the Crawl-delay v announces, or 0.
func (w *Web) crawlDelayOf(v *robotsVariant) time.Duration {
	if v != nil && v.crawlDelay {
		return w.cfg.CrawlDelay
	}
	return 0
}
