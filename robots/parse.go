package robots

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// MaxSize is the number of bytes of a robots.txt file that Parse reads: the
// 500 KiB RFC 9309 §2.5 asks crawlers to parse at least. Anything after it is
// ignored, from the start of the line the limit falls in, so that a rule cut
// in half never applies.
const MaxSize = 500 << 10

// maxCrawlDelay bounds a parsed Crawl-delay so that the conversion to a
// time.Duration cannot overflow; a year is far beyond any sane cap.
const maxCrawlDelay = 365 * 24 * time.Hour

type kind uint8

const (
	parsed      kind = iota // rules from a file
	allowAll                // 4xx, redirect loop, empty file: no restrictions
	disallowAll             // 5xx, 429, network failure: complete disallow
)

// Rules is a parsed robots.txt file: the groups of rules per user agent, the
// Crawl-delay of each group and the Sitemap URLs.
//
// A Rules is immutable and safe for concurrent use by multiple goroutines.
// It holds about 150 bytes per rule of 20 octets, index included.
type Rules struct {
	kind     kind
	groups   map[string]groups // by lower-case product token
	agents   []agentGroups     // the same, as a list, when short
	star     groups            // the "*" groups, nil when absent
	sitemaps []string
}

// groups are the groups that name one agent, in file order; RFC 9309 merges
// them. Each group is compiled once however many agents it names, so a file
// cannot multiply its size by listing many agents.
type groups []*group

// agentGroups pairs a lower-case product token with its groups.
type agentGroups struct {
	token string
	gs    groups
}

// maxAgentList is the number of agents up to which a linear scan with a
// case-insensitive compare beats hashing a lower-cased copy.
const maxAgentList = 8

// group is a group as written, compiled: its rules sorted so that the first
// match is the RFC 9309 winner (longest pattern first, allow before disallow
// on equal length), and indexed when there are many.
type group struct {
	rules      []rule
	index      *node // radix tree over rules, nil for small groups
	crawlDelay time.Duration
}

var (
	allowAllRules    = &Rules{kind: allowAll}
	disallowAllRules = &Rules{kind: disallowAll}
)

// AllowAll returns the Rules of a host without a robots.txt: everything is
// allowed (RFC 9309 §2.3.1.3).
func AllowAll() *Rules { return allowAllRules }

// DisallowAll returns the Rules of a host whose robots.txt is unreachable:
// nothing but /robots.txt is allowed (RFC 9309 §2.3.1.4).
func DisallowAll() *Rules { return disallowAllRules }

// Parse returns the rules of a robots.txt response with the given HTTP status
// code and body. It never fails: a line it cannot understand is skipped and
// the rest of the file still applies.
//
// The status decides first (RFC 9309 §2.3.1): 2xx parses body; 4xx means no
// robots.txt, so everything is allowed; 5xx means the file is unreachable, so
// everything is disallowed. Parse does not follow redirects (Cache does): a
// 3xx handed to Parse is a redirect chain that could not be followed, which
// §2.3.1.2 lets a crawler treat as "unavailable" (allow all). 429 Too Many
// Requests is treated like 5xx, not like the other 4xx: the host is asking us
// to slow down, and reading that as "no restrictions" would be impolite. Any
// other status (1xx, 0 for a network failure, out of range) is unreachable.
//
// Only the first MaxSize bytes are parsed. Parse costs O(len(body)) plus
// O(r log r) for r rules; it copies what it keeps, so body may be reused.
func Parse(status int, body []byte) *Rules {
	switch {
	case status >= 200 && status < 300:
		return parse(body)
	case status >= 300 && status < 400:
		return allowAllRules
	case status == 429:
		return disallowAllRules
	case status >= 400 && status < 500:
		return allowAllRules
	}
	return disallowAllRules
}

// rawGroup is a group as written: its user-agent lines, then its members.
type rawGroup struct {
	agents     []string // product tokens, lower case; "*" for the wildcard
	rules      []rule
	crawlDelay time.Duration
}

func parse(body []byte) *Rules {
	if len(body) > MaxSize {
		next := body[MaxSize]
		body = body[:MaxSize]
		if next != '\n' && next != '\r' {
			// The limit falls inside a line: drop the line.
			if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
				body = body[:i]
			} else {
				body = nil
			}
		}
	}
	body = trimBOM(body)

	var (
		raws     []*rawGroup
		cur      *rawGroup
		inAgents bool // the last group line was a user-agent line
		sitemaps []string
	)
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
			line = body[:i]
			if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
				i++
			}
			body = body[i+1:]
		} else {
			line, body = body, nil
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue // not a record: skipped (RFC 9309 §2.2)
		}
		key := bytes.Trim(line[:colon], " \t\v\f")
		val := bytes.Trim(line[colon+1:], " \t\v\f")
		switch {
		case bytes.EqualFold(key, []byte("user-agent")):
			if cur == nil || !inAgents {
				cur = &rawGroup{}
				raws = append(raws, cur)
				inAgents = true
			}
			cur.agents = append(cur.agents, agentToken(val))
		case bytes.EqualFold(key, []byte("allow")), bytes.EqualFold(key, []byte("disallow")):
			if cur == nil {
				continue // before the first user-agent: belongs to no group
			}
			inAgents = false
			if len(val) == 0 {
				continue // "Disallow:" is a member that matches nothing
			}
			allow := len(key) == len("allow")
			cur.rules = append(cur.rules, compileRule(string(val), allow))
		case bytes.EqualFold(key, []byte("crawl-delay")):
			// Not an RFC 9309 record, and §2.2.4 forbids other records to
			// interfere with the parsing of those it defines: it belongs to
			// the group being read but neither ends nor starts one.
			if cur == nil {
				continue
			}
			if d, ok := parseDelay(val); ok {
				cur.crawlDelay = max(cur.crawlDelay, d)
			}
		case bytes.EqualFold(key, []byte("sitemap")):
			// Not a group member (§2.2.4): it neither ends nor joins a group.
			if len(val) > 0 {
				sitemaps = append(sitemaps, string(val))
			}
		}
		// Unknown keys are skipped without touching the group state, as
		// Google's reference parser does.
	}

	r := &Rules{kind: parsed, sitemaps: sitemaps, groups: make(map[string]groups)}
	for _, rg := range raws {
		g := &group{rules: slices.Clip(rg.rules), crawlDelay: rg.crawlDelay}
		slices.SortStableFunc(g.rules, func(x, y rule) int {
			if x.length != y.length {
				return y.length - x.length
			}
			if x.allow != y.allow {
				if x.allow {
					return -1
				}
				return 1
			}
			return 0
		})
		if len(g.rules) >= indexMin {
			g.index = buildIndex(g.rules)
		}
		for _, a := range rg.agents {
			if a == "" {
				continue // an invalid product token matches no crawler
			}
			gs := r.groups[a]
			if len(gs) > 0 && gs[len(gs)-1] == g {
				continue // the agent is named twice in one group
			}
			r.groups[a] = append(gs, g)
		}
	}
	r.star = r.groups["*"]
	if len(r.groups) <= maxAgentList {
		for a, gs := range r.groups {
			r.agents = append(r.agents, agentGroups{a, gs})
		}
	}
	return r
}

// trimBOM removes a UTF-8 byte order mark, or the first one or two bytes of
// one (a truncated BOM, which Google's parser also tolerates).
func trimBOM(b []byte) []byte {
	const bom = "\xEF\xBB\xBF"
	for n := len(bom); n > 0; n-- {
		if len(b) >= n && string(b[:n]) == bom[:n] {
			return b[n:]
		}
	}
	return b
}

// isTokenChar reports whether c may appear in an RFC 9309 product token:
// letters, '-' and '_'.
func isTokenChar(c byte) bool { return tokenChars[c] }

var tokenChars = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_'
	}
	return t
}()

// agentToken returns the product token of a user-agent line's value, lower
// case: "*" for the wildcard, the leading run of token characters otherwise
// ("Googlebot/2.1" is "googlebot"), "" when there is none.
func agentToken(val []byte) string {
	if len(val) > 0 && val[0] == '*' {
		if len(val) == 1 || val[1] == ' ' || val[1] == '\t' {
			return "*"
		}
		return ""
	}
	n := 0
	for n < len(val) && isTokenChar(val[n]) {
		n++
	}
	return strings.ToLower(string(val[:n]))
}

// parseDelay parses a Crawl-delay value in seconds; fractions are allowed,
// negative, infinite and non-numeric values are not.
func parseDelay(val []byte) (time.Duration, bool) {
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(val), len(val)), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	if f >= maxCrawlDelay.Seconds() {
		return maxCrawlDelay, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// group returns the groups that apply to the crawler named agent: those of
// its product token if there are any (even empty ones), else the "*" groups,
// else nil. It does not allocate for tokens up to 64 bytes.
func (r *Rules) group(agent string) groups {
	for agent != "" && (agent[0] == ' ' || agent[0] == '\t') {
		agent = agent[1:]
	}
	if agent == "*" {
		return r.star
	}
	n := 0
	upper := false
	for n < len(agent) && isTokenChar(agent[n]) {
		upper = upper || 'A' <= agent[n] && agent[n] <= 'Z'
		n++
	}
	if n == 0 {
		return r.star
	}
	tok := agent[:n]
	var g groups
	switch {
	case len(r.groups) <= maxAgentList:
		for _, ag := range r.agents {
			if len(ag.token) == n && asciiEqualFold(ag.token, tok) {
				g = ag.gs
				break
			}
		}
	case !upper:
		g = r.groups[tok]
	case n <= 64:
		var buf [64]byte
		for i := 0; i < n; i++ {
			c := tok[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		g = r.groups[string(buf[:n])]
	default:
		g = r.groups[strings.ToLower(tok)]
	}
	if g == nil {
		return r.star
	}
	return g
}

// Allowed reports whether the crawler agent may fetch target, a full URL
// ("https://example.com/a?b") or a path with its query ("/a?b"); a fragment
// is ignored.
//
// agent is the crawler's product token ("ExampleBot"); a string that goes on
// after the token ("ExampleBot/1.2 (+https://example.com/bot)") is cut at the
// first character a token cannot hold. The token is compared
// case-insensitively with the file's user-agent lines, exactly, never by
// prefix. When no group names the agent, the "*" group applies; when there
// is none either, everything is allowed. Within the group, the rule with the
// longest pattern that matches wins and allow wins a tie; "/robots.txt" is
// always allowed.
//
// Allowed does not allocate for paths up to 512 bytes; it costs one pass over
// the path plus, per rule tried in order of length, a prefix compare (and a
// substring search per '*').
func (r *Rules) Allowed(agent, target string) bool {
	if r == nil || r.kind == allowAll {
		return true
	}
	var buf [512]byte
	p := canonPath(buf[:], target)
	if r.kind == disallowAll {
		return isRobotsPath(p)
	}
	var best *rule
	for _, g := range r.group(agent) {
		if i := g.first(p); i >= 0 {
			ru := &g.rules[i]
			if best == nil || ru.length > best.length || ru.length == best.length && ru.allow {
				best = ru
			}
		}
	}
	return best == nil || best.allow || isRobotsPath(p)
}

// first returns the index of the first rule that matches p, the group's
// winner, or -1.
func (g *group) first(p string) int {
	if g.index != nil {
		return g.lookup(p)
	}
	for i := range g.rules {
		if g.rules[i].match(p) {
			return i
		}
	}
	return -1
}

// isRobotsPath reports whether the canonical request path p is /robots.txt,
// which RFC 9309 §2.2.2 always allows.
func isRobotsPath(p string) bool {
	const robots = "/robots.txt"
	return strings.HasPrefix(p, robots) && (len(p) == len(robots) || p[len(robots)] == '?')
}

// asciiEqualFold reports whether lower (lower case) equals s ignoring ASCII
// case; both have the same length.
func asciiEqualFold(lower, s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// CrawlDelay returns the Crawl-delay of the group that applies to agent, 0
// when it has none. Crawl-delay is not part of RFC 9309; it is read as a
// number of seconds (fractions allowed), and a malformed value is skipped.
// Several values (in one group or in merged groups) give the largest. A
// Crawl-delay line neither starts nor ends a group (§2.2.4: records outside
// the RFC must not interfere with its parsing), so in
//
//	User-agent: *
//	Crawl-delay: 10
//
//	User-agent: foobot
//	Disallow: /x
//
// "*" and foobot form one group, as in Google's reference parser. Safe for
// concurrent use.
func (r *Rules) CrawlDelay(agent string) time.Duration {
	if r == nil || r.kind != parsed {
		return 0
	}
	var d time.Duration
	for _, g := range r.group(agent) {
		d = max(d, g.crawlDelay)
	}
	return d
}

// Sitemaps returns the Sitemap URLs of the file in the order written. The
// slice is shared: callers must not modify it. Safe for concurrent use.
func (r *Rules) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return r.sitemaps
}

// String returns a short description for logs: "allow all", "disallow all"
// or the number of groups and sitemaps.
func (r *Rules) String() string {
	switch {
	case r == nil || r.kind == allowAll:
		return "robots: allow all"
	case r.kind == disallowAll:
		return "robots: disallow all"
	}
	return "robots: " + strconv.Itoa(len(r.groups)) + " agents, " + strconv.Itoa(len(r.sitemaps)) + " sitemaps"
}
