package render

import (
	"bytes"
	"net"
	"regexp"
	"strings"

	"github.com/crawlkit/crawlkit/fetch"
)

// Policy decides which pages a Fetcher renders. It sees the request and
// the page as fetched (a 200 HTML answer: other answers are never
// rendered). Implementations must be safe for concurrent use and cheap:
// Render runs once per page, before a tab is taken.
type Policy interface {
	Render(req *fetch.Request, static *fetch.Response) bool
}

// PolicyFunc adapts a function to the Policy interface.
type PolicyFunc func(req *fetch.Request, static *fetch.Response) bool

// Render calls f(req, static).
func (f PolicyFunc) Render(req *fetch.Request, static *fetch.Response) bool { return f(req, static) }

// Always renders every page: the default (Options.Policy nil).
var Always Policy = constant(true)

// Never renders no page: the Fetcher then returns Options.Static's
// answers unchanged, for a crawl that renders on some runs only.
var Never Policy = constant(false)

// constant is a comparable Policy, so that Always == Always.
type constant bool

func (c constant) Render(*fetch.Request, *fetch.Response) bool { return bool(c) }

// Hosts renders the pages of the named hosts (case and a port are
// ignored); a name starting with a dot, ".example.com", stands for every
// host under it, the domain itself included.
func Hosts(hosts ...string) Policy {
	exact := make(map[string]bool)
	var suffixes []string
	for _, h := range hosts {
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		if s, ok := strings.CutPrefix(h, "."); ok {
			suffixes = append(suffixes, s)
			continue
		}
		exact[h] = true
	}
	return PolicyFunc(func(req *fetch.Request, _ *fetch.Response) bool {
		h := strings.ToLower(strings.TrimSuffix(req.URL.Hostname(), "."))
		if exact[h] {
			return true
		}
		for _, s := range suffixes {
			if h == s || strings.HasSuffix(h, "."+s) {
				return true
			}
		}
		return false
	})
}

// Pattern renders the pages whose URL (as req.URL.String gives it)
// re matches.
func Pattern(re *regexp.Regexp) Policy {
	return PolicyFunc(func(req *fetch.Request, _ *fetch.Response) bool { return re.MatchString(req.URL.String()) })
}

// Adaptive renders the pages that look like an application shell: little
// visible text for some scripts. It parses the static page (fetch.HTML
// with scripting on, as a browser shows the page before its scripts run)
// and counts its <script> tags; the cost is one parse of the page,
// O(len(body)).
type Adaptive struct {
	// MinText is the visible text, in bytes, from which a page counts as
	// having content of its own. Default DefaultMinText.
	MinText int
	// MinScripts is how many <script> elements (inline or external) a
	// page needs to be rendered. Default 1.
	MinScripts int
}

// DefaultMinText is the default of Adaptive.MinText: below it a page
// holds a title, a menu or a "Loading" line, not an article. The pages of
// the simulated web that need scripts show at most 11 bytes of text
// before them run; its ordinary pages, 354 bytes and more
// (TestAdaptiveOnWeb, docs/RENDERING.md).
const DefaultMinText = 200

// Render implements Policy.
func (a Adaptive) Render(_ *fetch.Request, static *fetch.Response) bool {
	minText, minScripts := a.MinText, a.MinScripts
	if minText <= 0 {
		minText = DefaultMinText
	}
	if minScripts <= 0 {
		minScripts = 1
	}
	if CountScripts(static.Body) < minScripts {
		return false
	}
	p := fetch.HTML{Scripting: true, MaxText: minText, MaxLinks: 1}
	return len(p.ParseBytes(static.Body, static.URL).Text) < minText
}

// CountScripts counts the <script> start tags of an HTML body, in any
// case; one inside a comment or a string counts too, which an estimate
// for a Policy can afford. O(len(body)), no allocation.
func CountScripts(body []byte) int {
	n := 0
	for i := 0; ; {
		j := bytes.IndexByte(body[i:], '<')
		if j < 0 {
			return n
		}
		i += j + 1
		if len(body)-i >= 7 && asciiFold(body[i:i+6], "script") {
			switch body[i+6] {
			case '>', ' ', '\t', '\n', '\r', '\f', '/':
				n++
			}
		}
	}
}

func asciiFold(b []byte, lower string) bool {
	for i := range len(lower) {
		if b[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}
