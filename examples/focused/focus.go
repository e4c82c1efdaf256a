package main

import (
	"math"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// vector is a term vector: term → weight (1 + log tf).
type vector map[string]float64

// stopWords are left out of term vectors: they would make every anchor
// look a little relevant.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "in": true, "is": true, "it": true, "of": true, "on": true, "or": true,
	"the": true, "to": true, "with": true, "this": true, "that": true, "was": true, "more": true,
}

// terms returns the term vector of s: lower-case letter and digit runs,
// stop words dropped, weighted 1 + log(tf). O(len(s)).
func terms(s string) vector {
	v := vector{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !stopWords[w] {
			v[w]++
		}
	}
	for t, tf := range v {
		v[t] = 1 + math.Log(tf)
	}
	return v
}

// norm returns the Euclidean length of v.
func (v vector) norm() float64 {
	s := 0.0
	for _, w := range v {
		s += w * w
	}
	return math.Sqrt(s)
}

// cosine returns the cosine similarity of a and b, 0 if either is empty.
// O(min(len(a), len(b))).
func cosine(a, b vector) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	dot := 0.0
	for t, w := range a {
		dot += w * b[t]
	}
	if dot == 0 {
		return 0
	}
	return dot / (a.norm() * b.norm())
}

// Focus is a topic-focused Prioritizer: a URL's priority is the relevance
// to the query of the anchor text that found it and of the page that
// linked to it (IIR §20.2.3: priority by "relevance to a topic").
//
//	score = AnchorWeight × cos(query, anchor) + (1 − AnchorWeight) × relevance(source)
//	level = ⌈√score × (levels − 1)⌉
//
// The square root spreads the small cosines of short anchors over the
// levels; a URL with nothing relevant about it gets the lowest level, a seed
// the highest. Page relevance is recorded by the Parser that Parser returns,
// because the crawler prioritizes a page's links before its sinks and its
// OnPage hook see the page. Safe for concurrent use; Priority costs
// O(anchor words) plus a map lookup under a read lock, and the map holds one
// float per fetched page.
type Focus struct {
	// AnchorWeight is the weight of the anchor text against the linking
	// page's relevance, in [0, 1].
	AnchorWeight float64

	query vector
	qnorm float64
	mu    sync.RWMutex
	rel   map[string]float64 // page URL → cos(query, page)
}

var _ frontier.Prioritizer = (*Focus)(nil)

// NewFocus returns a Focus for query with AnchorWeight 0.7.
func NewFocus(query string) *Focus {
	q := terms(query)
	return &Focus{AnchorWeight: 0.7, query: q, qnorm: q.norm(), rel: map[string]float64{}}
}

// Relevance returns the cosine similarity of text with the query.
func (f *Focus) Relevance(text string) float64 { return cosine(f.query, terms(text)) }

// Record notes the relevance of the page at pageURL (its title counted
// twice, then its text).
func (f *Focus) Record(pageURL, title, text string) {
	r := f.Relevance(title + " " + title + " " + text)
	f.mu.Lock()
	f.rel[pageURL] = r
	f.mu.Unlock()
}

// PageRelevance returns the recorded relevance of pageURL, and false if
// the page was not recorded.
func (f *Focus) PageRelevance(pageURL string) (float64, bool) {
	f.mu.RLock()
	r, ok := f.rel[pageURL]
	f.mu.RUnlock()
	return r, ok
}

// Priority implements frontier.Prioritizer.
func (f *Focus) Priority(u *frontier.URL, levels int) int {
	if levels <= 1 {
		return 0
	}
	if u.Source == "" {
		return levels - 1 // a seed
	}
	src, _ := f.PageRelevance(u.Source)
	score := f.AnchorWeight*f.Relevance(u.Anchor) + (1-f.AnchorWeight)*src
	return min(levels-1, int(math.Ceil(math.Sqrt(score)*float64(levels-1))))
}

// Parser wraps p so that every page it parses has its relevance recorded
// before the crawler prioritizes the page's links.
func (f *Focus) Parser(p fetch.Parser) fetch.Parser {
	return fetch.ParserFunc(func(resp *fetch.Response) (*fetch.Document, error) {
		doc, err := p.Parse(resp)
		if err == nil && doc != nil && resp.URL != nil {
			f.Record(resp.URL.String(), doc.Title, doc.Text)
		}
		return doc, err
	})
}

// Scope is a URLFilter that keeps a crawl within a set of registrable
// domains (eTLD+1, urlnorm.Domain) and away from URLs matching a pattern.
// Safe for concurrent use; Filter costs a public-suffix lookup and the
// pattern match.
type Scope struct {
	// Domains are the registrable domains allowed ("example.co.uk");
	// empty allows every domain.
	Domains []string
	// Skip, if set, refuses URLs whose string form it matches.
	Skip *regexp.Regexp
}

var _ frontier.URLFilter = Scope{}

// Filter implements frontier.URLFilter.
func (s Scope) Filter(u *url.URL) error {
	if len(s.Domains) > 0 {
		d := urlnorm.Domain(strings.ToLower(u.Hostname()))
		ok := false
		for _, want := range s.Domains {
			if strings.EqualFold(d, want) {
				ok = true
				break
			}
		}
		if !ok {
			return &frontier.Rejection{Reason: frontier.ReasonDomain, URL: u.String(), Detail: "registrable domain " + d + " is out of scope"}
		}
	}
	if s.Skip != nil && s.Skip.MatchString(u.String()) {
		return &frontier.Rejection{Reason: frontier.ReasonPattern, URL: u.String(), Detail: "matches " + s.Skip.String()}
	}
	return nil
}

// seedDomains returns the registrable domains of the seeds.
func seedDomains(seeds []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range seeds {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Hostname() == "" {
			continue
		}
		if d := urlnorm.Domain(strings.ToLower(u.Hostname())); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
