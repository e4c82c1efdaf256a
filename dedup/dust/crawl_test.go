package dust_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/dedup/dust"
)

// web is a simulated web: URL → fingerprint of its content.
type web map[string]uint64

// crawl drives a Learner as the crawler does (see the package
// documentation), over the links of a web discovered in a given order,
// each fetched as soon as it is admitted: link admission (Rewrite, Park,
// URL-seen), fetch, content-seen test, Observe, and the release of
// parked URLs back to the frontier.
type crawl struct {
	l        *dust.Learner
	web      web
	seen     map[string]bool   // the URL-seen set
	content  map[uint64]string // the content-seen set: fingerprint → first URL
	queue    []string          // the frontier
	fetched  []string
	parked   []string // URLs parked, in order
	released []string
}

func newCrawl(t testing.TB, opts *dust.Options, w web) *crawl {
	t.Helper()
	l, err := dust.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &crawl{l: l, web: w, seen: map[string]bool{}, content: map[uint64]string{}}
}

// admit is link admission: the rules first, then the URL-seen test.
func (c *crawl) admit(u string) {
	res, ok := c.l.Rewrite(u)
	switch {
	case ok && !res.Validate:
		if c.seen[u] {
			return
		}
		c.seen[u] = true
		if c.l.Park(u, res.URL) {
			c.parked = append(c.parked, u)
			c.add(res.URL)
			return
		}
		c.queue = append(c.queue, u) // the rewrite no longer holds
	case ok: // validate: fetch u, and admit its canonical form too
		c.add(res.URL)
		c.add(u)
	default:
		c.add(u)
	}
}

func (c *crawl) add(u string) {
	if !c.seen[u] {
		c.seen[u] = true
		c.queue = append(c.queue, u)
	}
}

// readmit takes a released URL back: it passed the URL-seen test when it
// was parked, so only the rules are asked again.
func (c *crawl) readmit(u string) {
	c.released = append(c.released, u)
	if res, ok := c.l.Rewrite(u); ok && !res.Validate && c.l.Park(u, res.URL) {
		c.add(res.URL)
		return
	}
	c.queue = append(c.queue, u)
}

func (c *crawl) fetch(u string) {
	fp, ok := c.web[u]
	if !ok {
		// A canonical form the web does not have: a 404, which gives
		// back the URLs parked on it.
		for _, r := range c.l.Failed(u) {
			c.readmit(r)
		}
		return
	}
	c.fetched = append(c.fetched, u)
	first := c.content[fp]
	if first == "" {
		c.content[fp] = u
	}
	for _, r := range c.l.Observe(u, fp, first) {
		c.readmit(r)
	}
}

// run discovers links in order, fetching the frontier after each.
func (c *crawl) run(links ...string) {
	c.drain()
	for _, u := range links {
		c.admit(u)
		c.drain()
	}
}

func (c *crawl) drain() {
	for len(c.queue) > 0 {
		u := c.queue[0]
		c.queue = c.queue[1:]
		c.fetch(u)
	}
}

// lost returns the contents of links never fetched at any URL.
func (c *crawl) lost(links []string) []string {
	var out []string
	for _, u := range links {
		if fp, ok := c.web[u]; ok && c.content[fp] == "" {
			out = append(out, u)
		}
	}
	return out
}

// rules returns the rules in their readable form.
func rules(l *dust.Learner) []string {
	var out []string
	for _, r := range l.Rules() {
		out = append(out, r.String())
	}
	return out
}

func active(l *dust.Learner) []string {
	var out []string
	for _, r := range l.Rules() {
		if r.State == dust.Active {
			out = append(out, r.String())
		}
	}
	return out
}

// trained returns a crawl whose learner has one rule of every kind
// active, a withdrawn one and parked URLs.
func trained(t testing.TB) *crawl {
	w := web{}
	var canon, alias []string
	for _, k := range kinds {
		kw, c, a := kindWeb(k.pair, 8)
		for u, fp := range kw {
			w[u] = fp
		}
		canon, alias = append(canon, c...), append(alias, a...)
	}
	bw, bc, ba := kindWeb(func(i int) (string, string) {
		return "http://bad.sim.test/x/p" + string(rune('a'+i)), "http://bad.sim.test/p" + string(rune('a'+i))
	}, 8, 6)
	for u, fp := range bw {
		w[u] = fp
	}
	c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1}, w)
	c.run(canon...)
	c.run(alias...)
	c.run(bc...)
	c.run(ba[:6]...)
	c.seen[ba[6]] = true
	c.fetch(ba[6])
	return c
}
