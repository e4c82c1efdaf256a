package frontier

import (
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Prioritizer assigns a URL one of levels priorities, 0 (lowest) to
// levels-1 (highest): the front queue it joins (IIR §20.2.3). Values out
// of range are clamped by the frontier. Implementations must be safe for
// concurrent use and fast: they run under the frontier's lock on every Add.
type Prioritizer interface {
	Priority(u *URL, levels int) int
}

// FetchObserver is implemented by prioritizers that learn from fetched
// pages (OPIC does): the crawler calls Fetched with a page's canonical
// URL and its out-links after the page was fetched and before the links
// are prioritized, so that they can be scored by what their source said.
// Safe for concurrent use.
type FetchObserver interface {
	Fetched(page string, links []string)
}

var _ FetchObserver = (*OPIC)(nil)

// PrioritizerFunc adapts a function to Prioritizer.
type PrioritizerFunc func(u *URL, levels int) int

// Priority calls f(u, levels).
func (f PrioritizerFunc) Priority(u *URL, levels int) int { return f(u, levels) }

var (
	_ Prioritizer = PrioritizerFunc(nil)
	_ Prioritizer = Depth{}
	_ Prioritizer = ChangeRate{}
	_ Prioritizer = (*Rules)(nil)
	_ Prioritizer = (*OPIC)(nil)
)

// Depth is the breadth-first prioritizer: the fewer links from a seed, the
// higher the priority. Step is the number of depth levels sharing one
// priority (default 1). O(1).
type Depth struct {
	Step int
}

// Priority implements Prioritizer.
func (d Depth) Priority(u *URL, levels int) int {
	step := max(d.Step, 1)
	return levels - 1 - min(max(u.Depth, 0)/step, levels-1)
}

// ChangeRate prioritizes revisits by how often the page changes, weighted
// by its quality, as IIR §20.2.3 asks ("a function of both its change
// rate and its quality"): the change rate, estimated from the fetch
// history with EstimateChangeRate, is placed on a log scale between Min
// and Max and multiplied by Quality. O(1).
type ChangeRate struct {
	// Min is the rate (changes per second) mapped to the lowest priority.
	// Default once in 30 days.
	Min float64
	// Max is the rate mapped to the highest priority. Default once an
	// hour.
	Max float64
	// Unknown is the score in [0, 1] of a URL with fewer than two fetches.
	// Default 0.5.
	Unknown float64
	// Quality returns a score in [0, 1] for u (PageRank, OPIC importance,
	// spam score...). Default: 1 for every URL. Pages that change on every
	// fetch but have low quality (spam) stay low.
	Quality func(u *URL) float64
}

// Priority implements Prioritizer.
func (c ChangeRate) Priority(u *URL, levels int) int {
	lo, hi := c.Min, c.Max
	if lo <= 0 {
		lo = 1 / (30 * 24 * time.Hour).Seconds()
	}
	if hi <= lo {
		hi = max(1/time.Hour.Seconds(), 2*lo)
	}
	score := c.Unknown
	if score <= 0 || score > 1 {
		score = 0.5
	}
	if r, ok := u.History.ChangeRate(); ok {
		if r <= lo {
			score = 0
		} else {
			score = min((math.Log(r)-math.Log(lo))/(math.Log(hi)-math.Log(lo)), 1)
		}
	}
	if c.Quality != nil {
		q := c.Quality(u)
		if math.IsNaN(q) {
			q = 0
		}
		score *= min(max(q, 0), 1)
	}
	return int(math.Round(score * float64(levels-1)))
}

// EstimateChangeRate estimates how often a page changes (changes per
// second) from n visits at regular intervals spanning total, in x of which
// the page was found changed. It is the bias-reduced estimator of Cho and
// Garcia-Molina ("Estimating frequency of change", 2003):
//
//	r = -log((n - x + 0.5) / (n + 0.5)) / I,  I = total / n
//
// which, unlike x / total, stays finite when every visit saw a change and
// accounts for changes missed between visits. It returns 0 for n ≤ 0 or
// total ≤ 0.
func EstimateChangeRate(n, x int, total time.Duration) float64 {
	if n <= 0 || total <= 0 {
		return 0
	}
	x = min(max(x, 0), n)
	interval := total.Seconds() / float64(n)
	return -math.Log((float64(n-x)+0.5)/(float64(n)+0.5)) / interval
}

// Rule is one rule of Rules: a URL matches when its Key equals HostSuffix
// or ends with "."+HostSuffix (when HostSuffix is set) and Pattern matches
// its URL (when Pattern is set).
type Rule struct {
	HostSuffix string
	Pattern    *regexp.Regexp
	// Priority is the level given; negative counts from the top (-1 is the
	// highest level).
	Priority int
}

// Rules is the rule-based prioritizer of IIR §20.2.3 ("URLs from news
// services may always be assigned the highest priority"): the first
// matching rule decides; URLs no rule matches go to Default (Depth{} when
// nil). O(rules).
type Rules struct {
	Rules   []Rule
	Default Prioritizer
}

// Priority implements Prioritizer.
func (r *Rules) Priority(u *URL, levels int) int {
	key := u.Key
	if key == "" {
		key = HostKey(u.URL)
	}
	for i := range r.Rules {
		ru := &r.Rules[i]
		if ru.HostSuffix == "" && ru.Pattern == nil {
			continue
		}
		if ru.HostSuffix != "" && !hasDomainSuffix(key, ru.HostSuffix) {
			continue
		}
		if ru.Pattern != nil && !ru.Pattern.MatchString(u.URL) {
			continue
		}
		p := ru.Priority
		if p < 0 {
			p += levels
		}
		return min(max(p, 0), levels-1)
	}
	if r.Default != nil {
		return r.Default.Priority(u, levels)
	}
	return Depth{}.Priority(u, levels)
}

// hasDomainSuffix reports whether host is suffix or a subdomain of it.
func hasDomainSuffix(host, suffix string) bool {
	suffix = strings.TrimPrefix(suffix, ".")
	if len(host) < len(suffix) || !strings.EqualFold(host[len(host)-len(suffix):], suffix) {
		return false
	}
	return len(host) == len(suffix) || host[len(host)-len(suffix)-1] == '.'
}

// OPIC is the On-line Page Importance Computation of Abiteboul, Preda and
// Cobena (WWW 2003) as a prioritizer. Every page holds cash; seeds start
// with Initial each. When a page is fetched the crawler calls Fetched with
// its out-links: the page's cash is added to its history and split equally
// among the links (a page without links gives its cash to a virtual page
// that pays it out with the next fetched page's links). Priority is by
// cash, on a log2 scale below the top level: the policy the paper shows
// converges fastest. Importance estimates the page's importance.
//
// Call Fetched before Add-ing the page's links, so that they are
// prioritized with their new cash. Priorities are fixed when a URL is
// added. OPIC keeps 16 bytes per known URL plus map overhead, keyed by a
// 64-bit hash of the URL. Safe for concurrent use; Fetched costs
// O(links), Priority O(1).
type OPIC struct {
	// Initial is the cash of a seed (a URL at depth 0 first seen by
	// Priority). Default 1.
	Initial float64

	mu      sync.Mutex
	pages   map[uint64]*opicPage
	virtual float64
	history float64 // total history G
}

type opicPage struct{ cash, hist float64 }

// NewOPIC returns an OPIC prioritizer with no known pages.
func NewOPIC() *OPIC { return &OPIC{} }

func (o *OPIC) initial() float64 {
	if o.Initial > 0 {
		return o.Initial
	}
	return 1
}

func (o *OPIC) page(url string, create bool) *opicPage {
	if o.pages == nil {
		o.pages = make(map[uint64]*opicPage)
	}
	h := xxhash.Sum64String(url)
	p := o.pages[h]
	if p == nil && create {
		p = &opicPage{}
		o.pages[h] = p
	}
	return p
}

// Fetched records the fetch of page with the given out-links and
// distributes its cash.
func (o *OPIC) Fetched(page string, links []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.page(page, true)
	c := p.cash
	p.hist += c
	o.history += c
	p.cash = 0
	if len(links) == 0 {
		o.virtual += c
		return
	}
	c += o.virtual
	o.virtual = 0
	share := c / float64(len(links))
	for _, l := range links {
		o.page(l, true).cash += share
	}
}

// Cash returns the current cash of url.
func (o *OPIC) Cash(url string) float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p := o.page(url, false); p != nil {
		return p.cash
	}
	return 0
}

// Importance returns the OPIC estimate of url's importance,
// (history + cash) / (total history + 1) as in the paper, in [0, 1] once
// enough pages were fetched.
func (o *OPIC) Importance(url string) float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.page(url, false)
	if p == nil {
		return 0
	}
	return (p.hist + p.cash) / (o.history + o.initial())
}

// Priority implements Prioritizer: cash Initial (or more) is the top
// level, each halving one level lower, no cash the lowest.
func (o *OPIC) Priority(u *URL, levels int) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.page(u.URL, u.Depth == 0)
	if p == nil {
		return 0
	}
	if u.Depth == 0 && p.cash == 0 && p.hist == 0 {
		p.cash = o.initial()
	}
	if p.cash <= 0 {
		return 0
	}
	l := levels - 1 + int(math.Floor(math.Log2(p.cash/o.initial())))
	return min(max(l, 0), levels-1)
}
