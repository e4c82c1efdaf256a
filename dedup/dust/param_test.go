package dust_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/dedup/dust"
)

// TestParamEvidence: parameter rules learned from pairs on many paths of
// a host — a set of parameters, two values with one content — and the
// decoys that change the content.
func TestParamEvidence(t *testing.T) {
	const h = "http://s.sim.test"
	type page struct {
		url     string
		content string // "" means the URL's own
	}
	paths := func(n int, f func(i int) []page) []page {
		var out []page
		for i := range n {
			out = append(out, f(i)...)
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		pages   []page // in order of discovery
		active  []string
		none    bool              // no rule active
		rewrite map[string]string // after the crawl; "": no rule applies
		parks   bool              // the rewrite parks (no probation)
	}{{
		name: "set across paths",
		pages: paths(6, func(i int) []page {
			u := fmt.Sprintf("%s/a%d.html", h, i)
			return []page{{u, u}, {fmt.Sprintf("%s?utm_source=share&utm_medium=m%d", u, i), u}, {u + "?utm_source=home&utm_campaign=c", u}}
		}),
		active:  []string{"param utm_medium&utm_source on s.sim.test"},
		rewrite: map[string]string{h + "/new?utm_medium=x&id=1&utm_source=share": h + "/new?id=1"},
		parks:   true,
	}, {
		name: "set with one value never dropped",
		pages: paths(6, func(i int) []page {
			u := fmt.Sprintf("%s/a%d.html", h, i)
			return []page{{u, u}, {fmt.Sprintf("%s?page=1&ref=r%d", u, i), u}}
		}),
		none: true,
	}, {
		name: "values alone, then the canonical form",
		pages: paths(6, func(i int) []page {
			u := h + "/contact.html"
			return []page{{fmt.Sprintf("%s?sid=%x", u, i*7919), u}}
		}),
		active:  []string{"param sid on s.sim.test"},
		rewrite: map[string]string{h + "/contact.html?sid=new": h + "/contact.html"},
		parks:   true, // the validations fetched /contact.html
	}, {
		name: "values alone, the canonical form differs",
		pages: append(paths(6, func(i int) []page {
			u := h + "/item"
			return []page{{fmt.Sprintf("%s?id=%d", u, i), "not found"}}
		}), page{h + "/item?id=77", ""}),
		none: true,
	}, {
		name: "page decoy",
		pages: paths(5, func(i int) []page {
			u := h + "/news/"
			ps := []page{{u, u}, {u + "?page=1", u}}
			if i > 0 {
				ps = append(ps, page{fmt.Sprintf("%s?page=%d&ref=%d", u, i+1, i), fmt.Sprintf("%s?page=%d", u, i+1)},
					page{fmt.Sprintf("%s?page=%d", u, i+1), ""})
			}
			return ps
		}),
		active:  []string{"param ref on s.sim.test"},
		rewrite: map[string]string{h + "/news/?page=3&ref=9": h + "/news/?page=3", h + "/news/?page=7": ""},
		parks:   true,
	}, {
		name:    "known parameter, one pair",
		pages:   []page{{h + "/a.html", ""}, {h + "/a.html?utm_source=feed", h + "/a.html"}},
		active:  []string{"param utm_source on s.sim.test"},
		rewrite: map[string]string{h + "/b.html?utm_source=x&id=2": h + "/b.html?id=2"},
		parks:   true,
	}, {
		name:    "known session parameter, values alone",
		pages:   []page{{h + "/cart?sessionid=a1", h + "/cart"}, {h + "/cart?sessionid=b2", h + "/cart"}},
		active:  []string{"param sessionid on s.sim.test"},
		rewrite: map[string]string{h + "/cart?sessionid=c3": h + "/cart"},
		parks:   true, // no probation: the canonical form's failure would release it
	}, {
		// A prior, not a licence: fetched before the first pair, the
		// path it selects content on refutes the rule at its proposal.
		name: "known parameter that selects the content",
		pages: []page{{h + "/p.html", ""}, {h + "/p.html?utm_source=x", ""},
			{h + "/a.html", ""}, {h + "/a.html?utm_source=feed", h + "/a.html"}},
		none: true,
	}, {
		name: "lang decoy",
		pages: append(paths(4, func(i int) []page {
			u := fmt.Sprintf("%s/d%d/about.html", h, i)
			return []page{{u, u}, {u + "?lang=en", u}}
		}), page{h + "/d0/about.html?lang=de", ""}, page{h + "/d1/about.html?lang=fr", ""}),
		none: true,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			w := web{}
			var links []string
			for _, p := range tt.pages {
				c := p.content
				if c == "" {
					c = p.url
				}
				w[p.url] = fpOf(c)
				links = append(links, p.url)
			}
			// The canonical forms the rules may rewrite to: a 404 unless
			// listed, but /contact.html exists.
			if _, ok := w[h+"/contact.html"]; !ok && strings.Contains(tt.name, "canonical form") {
				w[h+"/contact.html"] = fpOf(h + "/contact.html")
				w[h+"/item"] = fpOf("catalogue")
			}
			c := newCrawl(t, &dust.Options{MinSupport: minSupport, ValidateEvery: -1}, w)
			c.run(links...)
			got := active(c.l)
			if tt.none && len(got) > 0 {
				t.Errorf("active %q", got)
			}
			for _, want := range tt.active {
				if !slices.ContainsFunc(got, func(r string) bool { return strings.HasPrefix(r, want+" ") }) {
					t.Errorf("no active %q in %q", want, rules(c.l))
				}
			}
			for u, want := range tt.rewrite {
				res, ok := c.l.Rewrite(u)
				if want == "" {
					if ok {
						t.Errorf("Rewrite(%q) = %+v", u, res)
					}
					continue
				}
				if !ok || res.URL != want || res.Validate == tt.parks {
					t.Errorf("Rewrite(%q) = %+v, %v; want %q, validate %v", u, res, ok, want, !tt.parks)
				}
			}
			if lost := c.lost(links); len(lost) > 0 {
				t.Errorf("lost %q; rules %q", lost, rules(c.l))
			}
		})
	}
}

// TestDecoyProbation: with the default probation, a prefix learned from
// the files two directories share validates every rewrite long enough to
// meet a distinct file fetched a few files after its activation; it
// parks nothing, and loses nothing.
func TestDecoyProbation(t *testing.T) {
	const n = 30
	w := web{}
	var v3, v2 []string
	for i := range n {
		a := fmt.Sprintf("http://docs.sim.test/v3/f%d.html", i)
		b := fmt.Sprintf("http://docs.sim.test/v2/f%d.html", i)
		w[a], w[b] = fpOf(a), fpOf(a)
		if i%6 == 5 { // the 6th, 12th, ...
			w[b] = fpOf(b)
		}
		v3, v2 = append(v3, a), append(v2, b)
	}
	c := newCrawl(t, &dust.Options{}, w)
	c.run(v3...)
	c.run(v2...)
	st := c.l.Stats()
	if st.Activated != 1 || st.Withdrawn != 1 || st.Released != 0 {
		t.Errorf("stats %+v, want the prefix activated and withdrawn, nothing parked; rules %q", st, rules(c.l))
	}
	if lost := c.lost(v2); len(lost) > 0 {
		t.Errorf("lost %q", lost)
	}
}

// TestKnownParams: a parameter dropped alone on GeneralizeAfter hosts is
// known on the next, where one pair activates its rule; a refutation on
// any host, or KnownParams set empty, keeps the full evidence.
func TestKnownParams(t *testing.T) {
	pair := func(host, param string) []string {
		u := "http://" + host + "/a.html"
		return []string{u, u + "?" + param + "=1"}
	}
	// Full evidence for "ref" on a host: pairs on minSupport paths, two
	// values.
	learn := func(host string) []string {
		var out []string
		for i := range minSupport {
			u := fmt.Sprintf("http://%s/p%d.html", host, i)
			out = append(out, u, fmt.Sprintf("%s?ref=%d", u, i))
		}
		return out
	}
	sameAs := func(w web, links []string) {
		for i := 0; i+1 < len(links); i += 2 {
			w[links[i]], w[links[i+1]] = fpOf(links[i]), fpOf(links[i])
		}
	}
	for _, tt := range []struct {
		name    string
		opts    dust.Options
		refute  bool // a fourth host refutes "ref" first
		learned bool // one pair activates "ref" on the last host
	}{
		{"generalized", dust.Options{}, false, true},
		{"refuted on a host", dust.Options{}, true, false},
		{"never", dust.Options{GeneralizeAfter: -1}, false, false},
		{"three hosts are not enough for four", dust.Options{GeneralizeAfter: 4}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := web{}
			var links []string
			for _, h := range []string{"h1.sim.test", "h2.sim.test", "h3.sim.test"} {
				l := learn(h)
				sameAs(w, l)
				links = append(links, l...)
			}
			if tt.refute {
				u := "http://h4.sim.test/list.html"
				w[u], w[u+"?ref=2"] = fpOf(u), fpOf(u+"?ref=2")
				w["http://h4.sim.test/a.html"], w["http://h4.sim.test/a.html?ref=1"] = fpOf("a"), fpOf("a")
				links = append(links, u, u+"?ref=2", "http://h4.sim.test/a.html", "http://h4.sim.test/a.html?ref=1")
			}
			last := pair("h5.sim.test", "ref")
			sameAs(w, last)
			opts := tt.opts
			opts.MinSupport, opts.ValidateEvery = minSupport, -1
			c := newCrawl(t, &opts, w)
			c.run(links...)
			c.run(last...)
			got := slices.ContainsFunc(active(c.l), func(r string) bool { return strings.HasPrefix(r, "param ref on h5.sim.test ") })
			if got != tt.learned {
				t.Errorf("one pair on h5 activated its rule: %v, want %v; rules %q", got, tt.learned, rules(c.l))
			}
			if lost := c.lost(append(links, last...)); len(lost) > 0 {
				t.Errorf("lost %q", lost)
			}
		})
	}
	// KnownParams empty: utm_source needs the full evidence.
	w := web{}
	l := pair("s.sim.test", "utm_source")
	sameAs(w, l)
	c := newCrawl(t, &dust.Options{MinSupport: minSupport, ValidateEvery: -1, KnownParams: []string{}}, w)
	c.run(l...)
	if a := active(c.l); len(a) > 0 {
		t.Errorf("with no known parameters, one pair activated %q", a)
	}
}
