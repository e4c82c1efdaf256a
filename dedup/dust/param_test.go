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
