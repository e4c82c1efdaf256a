package dust_test

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/dedup/dust"
)

// fpOf is a content fingerprint for a test page.
func fpOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// kinds are one case per rule kind: pair(i) returns an alias and the URL
// it duplicates; want is the rule once active; unseen is a URL the rule
// rewrites, and its canonical form.
var kinds = []struct {
	name   string
	pair   func(i int) (alias, canon string)
	want   string
	unseen [2]string
}{{
	name: "host",
	pair: func(i int) (string, string) {
		return fmt.Sprintf("http://www.alias.sim.test/p%d", i), fmt.Sprintf("http://alias.sim.test/p%d", i)
	},
	want:   "host www.alias.sim.test -> alias.sim.test (support 3)",
	unseen: [2]string{"http://www.alias.sim.test/new/page?x=1", "http://alias.sim.test/new/page?x=1"},
}, {
	name: "param",
	pair: func(i int) (string, string) {
		return fmt.Sprintf("http://shop.sim.test/item%d?ref=%s", i, []string{"home", "nav", "feed"}[i%3]), fmt.Sprintf("http://shop.sim.test/item%d", i)
	},
	want:   "param ref on shop.sim.test (support 3)",
	unseen: [2]string{"http://shop.sim.test/other?a=1&ref=x&b=2", "http://shop.sim.test/other?a=1&b=2"},
}, {
	name: "query",
	pair: func(i int) (string, string) {
		return fmt.Sprintf("http://javadoc.sim.test/api/index.html?p/C%d.html", i), "http://javadoc.sim.test/api/index.html"
	},
	want:   "query on javadoc.sim.test/api/index.html (support 3)",
	unseen: [2]string{"http://javadoc.sim.test/api/index.html?q/D.html", "http://javadoc.sim.test/api/index.html"},
}, {
	name: "default",
	pair: func(i int) (string, string) {
		return fmt.Sprintf("http://static.sim.test/d%d/index.html", i), fmt.Sprintf("http://static.sim.test/d%d/", i)
	},
	want:   "default index.html on static.sim.test (support 3)",
	unseen: [2]string{"http://static.sim.test/a/b/index.html", "http://static.sim.test/a/b/"},
}, {
	name: "default-asp",
	pair: func(i int) (string, string) {
		return fmt.Sprintf("http://asp.sim.test/d%d/default.asp", i), fmt.Sprintf("http://asp.sim.test/d%d/", i)
	},
	want:   "default default.asp on asp.sim.test (support 3)",
	unseen: [2]string{"http://asp.sim.test/default.asp?x=1", "http://asp.sim.test/?x=1"},
}, {
	name: "prefix",
	pair: func(i int) (string, string) {
		return fmt.Sprintf("http://docs.sim.test/current/page%d.html", i), fmt.Sprintf("http://docs.sim.test/v3/page%d.html", i)
	},
	want:   "prefix /current/ -> /v3/ on docs.sim.test (support 3)",
	unseen: [2]string{"http://docs.sim.test/current/a/b.html", "http://docs.sim.test/v3/a/b.html"},
}}

const minSupport = 3

// kindWeb builds the web of a kind case: n canonical pages, their
// aliases with the same content except those in differ.
func kindWeb(pair func(int) (string, string), n int, differ ...int) (w web, canon, alias []string) {
	w = web{}
	for i := range n {
		a, c := pair(i)
		w[c] = fpOf(c)
		w[a] = fpOf(c)
		if slices.Contains(differ, i) {
			w[a] = fpOf(a)
		}
		if !slices.Contains(canon, c) {
			canon = append(canon, c)
		}
		alias = append(alias, a)
	}
	return w, canon, alias
}

func TestActivation(t *testing.T) {
	for _, tt := range kinds {
		t.Run(tt.name, func(t *testing.T) {
			w, canon, alias := kindWeb(tt.pair, 10)
			c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1}, w)
			c.run(canon...)
			for i, a := range alias {
				if got := active(c.l); i < minSupport && len(got) > 0 {
					t.Fatalf("after %d supporting pairs: active %q", i, got)
				}
				c.run(a)
				if i == minSupport-1 {
					if got := active(c.l); !slices.Equal(got, []string{tt.want}) {
						t.Fatalf("after %d supporting pairs: active %q, want %q (all %q)", i+1, got, tt.want, rules(c.l))
					}
				}
			}
			if got, want := len(c.parked), len(alias)-minSupport; got != want {
				t.Errorf("parked %d URLs, want %d", got, want)
			}
			if lost := c.lost(alias); len(lost) > 0 {
				t.Errorf("lost %q", lost)
			}
			res, ok := c.l.Rewrite(tt.unseen[0])
			if !ok || res.URL != tt.unseen[1] {
				t.Errorf("Rewrite(%q) = %+v, %v; want %q", tt.unseen[0], res, ok, tt.unseen[1])
			}
			if res2, ok := c.l.Rewrite(res.URL); ok {
				t.Errorf("Rewrite(%q) = %+v, not a fixed point", res.URL, res2)
			}
			st := c.l.Stats()
			if st.Proposed != 1 || st.Activated != 1 || st.Withdrawn != 0 || st.Parked != len(c.parked) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestMixedEvidence: a counterexample among the supporting pairs, before
// the first of them or between them, keeps the rule from activating.
func TestMixedEvidence(t *testing.T) {
	for _, tt := range kinds {
		for _, differ := range []int{0, 1, 2, 6} {
			t.Run(fmt.Sprintf("%s/differ%d", tt.name, differ), func(t *testing.T) {
				w, canon, alias := kindWeb(tt.pair, 8, differ)
				c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1}, w)
				c.run(canon...)
				c.run(alias...)
				if differ < minSupport {
					if got := active(c.l); len(got) > 0 {
						t.Fatalf("active %q on mixed evidence", got)
					}
					rs := c.l.Rules()
					if len(rs) != 1 || rs[0].State != dust.Withdrawn || rs[0].Counterexamples == 0 {
						t.Fatalf("rules %q, want one withdrawn", rules(c.l))
					}
					if st := c.l.Stats(); st.Refuted != 1 || st.Activated != 0 {
						t.Errorf("stats %+v", st)
					}
				}
				if differ >= minSupport {
					// Activated first: the distinct alias is parked, and
					// released when the crawler fetches it (a
					// validation) and finds it differs.
					if !slices.Contains(c.parked, alias[differ]) {
						t.Fatalf("%s not parked; rules %q", alias[differ], rules(c.l))
					}
					c.fetch(alias[differ])
					if len(active(c.l)) > 0 || !slices.Contains(c.released, alias[differ]) {
						t.Fatalf("not withdrawn: rules %q, released %q", rules(c.l), c.released)
					}
					c.run()
				}
				if lost := c.lost(alias); len(lost) > 0 {
					t.Errorf("lost %q (rules %q)", lost, rules(c.l))
				}
			})
		}
	}
}

// TestWithdrawal: a counterexample withdraws an active rule and releases
// the URLs parked under it, which the crawl then fetches.
func TestWithdrawal(t *testing.T) {
	for _, tt := range kinds {
		t.Run(tt.name, func(t *testing.T) {
			w, canon, alias := kindWeb(tt.pair, 12, 11)
			c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1}, w)
			c.run(canon...)
			c.run(alias[:11]...)
			parked := slices.Clone(c.parked)
			if len(parked) != 11-minSupport {
				t.Fatalf("parked %q", parked)
			}
			// The crawler fetches alias 11 (as a validation would): its
			// content differs.
			c.seen[alias[11]] = true
			c.fetch(alias[11])
			if !slices.Equal(c.released, parked) {
				t.Errorf("released %q, want %q", c.released, parked)
			}
			rs := c.l.Rules()
			if len(rs) != 1 || rs[0].State != dust.Withdrawn || rs[0].Released != uint64(len(parked)) || rs[0].Parked != 0 {
				t.Fatalf("rules %+v", rs)
			}
			if _, ok := c.l.Rewrite(tt.unseen[0]); ok {
				t.Errorf("Rewrite(%q) after withdrawal", tt.unseen[0])
			}
			if c.l.Park(alias[5], canon[min(5, len(canon)-1)]) {
				t.Errorf("Park after withdrawal")
			}
			c.run()
			if lost := c.lost(alias); len(lost) > 0 {
				t.Errorf("lost %q", lost)
			}
			for _, u := range parked {
				if !slices.Contains(c.fetched, u) {
					t.Errorf("released %s not fetched", u)
				}
			}
			st := c.l.Stats()
			if st.Withdrawn != 1 || st.Released != uint64(len(parked)) || st.Parked != 0 {
				t.Errorf("stats %+v", st)
			}
			// Withdrawal is final: fresh support does not bring it back.
			w2, _, alias2 := kindWeb(func(i int) (string, string) { return tt.pair(i + 100) }, 6)
			for u, fp := range w2 {
				c.web[u] = fp
			}
			c.run(alias2...)
			if got := active(c.l); len(got) > 0 {
				t.Errorf("active again: %q", got)
			}
		})
	}
}

// TestParamChangesContent: a parameter that selects the content is
// never dropped for good, even when some of its values give one page:
// those values support the rule, which stays on probation (it has not
// seen the URL without the parameter) until the next value refutes it.
func TestParamChangesContent(t *testing.T) {
	w := web{}
	var links []string
	for i := range 20 {
		u := fmt.Sprintf("http://shop.sim.test/item?id=%d", i)
		w[u] = fpOf(u)
		if i < 4 {
			w[u] = fpOf("not found") // a few values give the same error page
		}
		links = append(links, u)
	}
	w["http://shop.sim.test/item"] = fpOf("catalogue")
	links = append(links, "http://shop.sim.test/item")
	c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1}, w)
	c.run(links...)
	if got := active(c.l); len(got) > 0 {
		t.Fatalf("active %q", got)
	}
	for _, u := range links {
		if res, ok := c.l.Rewrite(u); ok {
			t.Errorf("Rewrite(%q) = %q", u, res.URL)
		}
	}
	if lost := c.lost(links); len(lost) > 0 {
		t.Errorf("lost %q", lost)
	}
	if st := c.l.Stats(); st.Parked != 0 || st.Withdrawn+st.Refuted != 1 {
		t.Errorf("stats %+v; rules %q", st, rules(c.l))
	}
	// The bare URL fetched first: the values that give the error page
	// support the rule, the next value refutes it before it activates.
	c = newCrawl(t, &dust.Options{MinSupport: minSupport, ValidateEvery: -1}, w)
	c.run(links[len(links)-1])
	c.run(links...)
	if st := c.l.Stats(); st.Activated != 0 || st.Refuted != 1 {
		t.Errorf("stats %+v; rules %q", st, rules(c.l))
	}
	if lost := c.lost(links); len(lost) > 0 {
		t.Errorf("lost %q", lost)
	}
}

// TestParamDefaultValue: "page=1" is the page without the parameter on
// every listing, "page=2" is not: one value supports nothing about the
// others, so the parameter is never dropped.
func TestParamDefaultValue(t *testing.T) {
	w := web{}
	var bare, one, two []string
	for i := range 10 {
		u := fmt.Sprintf("http://news.sim.test/list%d", i)
		w[u], w[u+"?page=1"], w[u+"?page=2"] = fpOf(u), fpOf(u), fpOf(u+"2")
		bare, one, two = append(bare, u), append(one, u+"?page=1"), append(two, u+"?page=2")
	}
	c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1}, w)
	c.run(bare...)
	c.run(one...)
	if got := active(c.l); len(got) > 0 {
		t.Fatalf("active %q", got)
	}
	c.run(two...)
	if lost := c.lost(two); len(lost) > 0 {
		t.Errorf("lost %q", lost)
	}
	if rs := c.l.Rules(); len(rs) != 1 || rs[0].State != dust.Withdrawn {
		t.Errorf("rules %q, want page withdrawn", rules(c.l))
	}
}

// TestParamErrorPage: a few values of a parameter that selects the page
// give the page without it (an error page), enough to activate the rule;
// the other values are parked until a validation fetches one, which
// withdraws the rule and releases them.
func TestParamErrorPage(t *testing.T) {
	w := web{"http://shop.sim.test/item": fpOf("no such item")}
	links := []string{"http://shop.sim.test/item"}
	for i := range 60 {
		u := fmt.Sprintf("http://shop.sim.test/item?id=%d", i)
		w[u] = fpOf(u)
		if i < minSupport {
			w[u] = fpOf("no such item")
		}
		links = append(links, u)
	}
	c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport}, w)
	c.run(links...)
	st := c.l.Stats()
	if st.Activated != 1 || st.Withdrawn != 1 || st.Parked != 0 {
		t.Errorf("stats %+v", st)
	}
	if lost := c.lost(links); len(lost) > 0 {
		t.Errorf("lost %q", lost)
	}
	t.Logf("fetched %d of %d URLs, released %d", len(c.fetched), len(links), len(c.released))
}

// TestDecoy: /v2/ shares most files with /v3/, some are distinct. If the
// distinct files come first, the prefix rule is never activated; if they
// come after activation, they are parked, and the first of them fetched
// (a validation, here 1 in 4) withdraws the rule and releases them all:
// nothing is lost either way.
func TestDecoy(t *testing.T) {
	const n, distinct = 40, 8
	w := web{}
	var v3, v2 []string
	for i := range n {
		a := fmt.Sprintf("http://docs.sim.test/v3/f%d.html", i)
		b := fmt.Sprintf("http://docs.sim.test/v2/f%d.html", i)
		w[a], w[b] = fpOf(a), fpOf(a)
		if i >= n-distinct {
			w[b] = fpOf(b)
		}
		v3, v2 = append(v3, a), append(v2, b)
	}
	opts := &dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: 4}
	t.Run("distinct first", func(t *testing.T) {
		c := newCrawl(t, opts, w)
		c.run(v3...)
		c.run(v2[n-1])
		c.run(v2...)
		if got := active(c.l); len(got) > 0 {
			t.Errorf("active %q", got)
		}
		if lost := c.lost(v2); len(lost) > 0 {
			t.Errorf("lost %q", lost)
		}
		if len(c.fetched) != 2*n {
			t.Errorf("fetched %d, want %d", len(c.fetched), 2*n)
		}
	})
	t.Run("distinct last", func(t *testing.T) {
		c := newCrawl(t, opts, w)
		c.run(v3...)
		c.run(v2...)
		st := c.l.Stats()
		if st.Activated != 1 || st.Withdrawn != 1 || st.Parked != 0 {
			t.Errorf("stats %+v; rules %q", st, rules(c.l))
		}
		for _, u := range v2[n-distinct:] {
			if !slices.Contains(c.fetched, u) {
				t.Errorf("distinct %s not fetched", u)
			}
		}
		if lost := c.lost(v2); len(lost) > 0 {
			t.Errorf("lost %q", lost)
		}
		t.Logf("fetched %d of %d URLs; rules %q", len(c.fetched), 2*n, rules(c.l))
	})
}

// TestCanonicalIndependent: the canonical form is the same whichever
// alias a URL starts from; hosts map to the host fetched first, prefixes
// to the prefix fetched first.
func TestCanonicalIndependent(t *testing.T) {
	w := web{}
	var first, rest []string
	for i := range 6 {
		content := fmt.Sprintf("page %d", i)
		for _, h := range []string{"x.sim.test", "www.x.sim.test", "mirror.sim.test"} {
			for _, dir := range []string{"current", "v3"} {
				u := fmt.Sprintf("http://%s/%s/p%d.html", h, dir, i)
				ref := u + []string{"?ref=feed", "?ref=mail"}[i%2]
				w[u] = fpOf(content)
				w[ref] = fpOf(content)
				if h == "x.sim.test" && dir == "current" {
					first = append(first, u)
				} else {
					rest = append(rest, u)
				}
				rest = append(rest, ref)
			}
		}
	}
	c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1}, w)
	c.run(first...)
	c.run(rest...)
	want := []string{
		"host www.x.sim.test -> x.sim.test",
		"host mirror.sim.test -> x.sim.test",
		"prefix /v3/ -> /current/ on x.sim.test",
		"param ref on x.sim.test",
	}
	got := active(c.l)
	for _, w := range want {
		if !slices.ContainsFunc(got, func(r string) bool { return strings.HasPrefix(r, w+" ") }) {
			t.Errorf("no active %q in %q", w, got)
		}
	}
	canon := "http://x.sim.test/current/new.html?a=1"
	for _, h := range []string{"x.sim.test", "www.x.sim.test", "mirror.sim.test"} {
		for _, dir := range []string{"current", "v3"} {
			for _, q := range []string{"?a=1", "?ref=1&a=1", "?a=1&ref=2"} {
				u := "http://" + h + "/" + dir + "/new.html" + q
				res, _ := c.l.Rewrite(u)
				if res.URL != canon {
					t.Errorf("Rewrite(%q) = %q, want %q", u, res.URL, canon)
				}
			}
		}
	}
	if lost := c.lost(rest); len(lost) > 0 {
		t.Errorf("lost %q", lost)
	}
}

func TestRedirect(t *testing.T) {
	l, _ := dust.New(&dust.Options{Probation: -1, MinSupport: minSupport})
	for i := range minSupport {
		l.ObserveRedirect(fmt.Sprintf("http://www.r.sim.test/p%d", i), fmt.Sprintf("http://r.sim.test/p%d", i))
		l.ObserveRedirect(fmt.Sprintf("http://r.sim.test/p%d", i), fmt.Sprintf("http://r.sim.test/p%d/", i)) // explains nothing
	}
	if got := active(l); !slices.Equal(got, []string{"host www.r.sim.test -> r.sim.test (support 3)"}) {
		t.Errorf("active %q", got)
	}
}

// TestMaxParked: a rule whose parking lot is full stops rewriting.
func TestMaxParked(t *testing.T) {
	w, canon, alias := kindWeb(kinds[0].pair, 12)
	c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1, MaxParked: 4}, w)
	c.run(canon...)
	c.run(alias...)
	if len(c.parked) != 4 {
		t.Errorf("parked %d, want 4", len(c.parked))
	}
	if got := len(c.fetched); got != len(canon)+len(alias)-4 {
		t.Errorf("fetched %d, want %d", got, len(canon)+len(alias)-4)
	}
	if _, ok := c.l.Rewrite(kinds[0].unseen[0]); ok {
		t.Errorf("a full rule rewrites")
	}
}

// TestMaxParkedTotal: once MaxParkedTotal URLs are parked under all the
// rules together, Park refuses (the crawler fetches the URL), and the
// rules still rewrite.
func TestMaxParkedTotal(t *testing.T) {
	w, canon, alias := kindWeb(kinds[0].pair, 12)
	c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1, MaxParkedTotal: 3}, w)
	c.run(canon...)
	c.run(alias...)
	if len(c.parked) != 3 {
		t.Errorf("parked %d, want 3", len(c.parked))
	}
	if got := len(c.fetched); got != len(canon)+len(alias)-3 {
		t.Errorf("fetched %d, want %d", got, len(canon)+len(alias)-3)
	}
	r, ok := c.l.Rewrite(kinds[0].unseen[0])
	if !ok {
		t.Fatal("the rule stopped rewriting")
	}
	if c.l.Park(kinds[0].unseen[0], r.URL) {
		t.Error("Park beyond MaxParkedTotal reported true")
	}
	if n := c.l.Stats().Parked; n != 3 {
		t.Errorf("Stats.Parked %d, want 3", n)
	}
}

// TestValidate: about 1 in ValidateEvery rewrites is marked, always the
// same URLs.
func TestValidate(t *testing.T) {
	w, canon, alias := kindWeb(kinds[1].pair, 5)
	c := newCrawl(t, &dust.Options{Probation: -1, MinSupport: minSupport}, w)
	c.run(canon...)
	c.run(alias...)
	n := 0
	const tries = 16000
	for i := range tries {
		u := fmt.Sprintf("http://shop.sim.test/x%d?ref=%d", i, i)
		res, ok := c.l.Rewrite(u)
		if !ok {
			t.Fatalf("Rewrite(%q) not ok", u)
		}
		if res.Validate {
			n++
		}
		if again, _ := c.l.Rewrite(u); again.Validate != res.Validate {
			t.Fatalf("Rewrite(%q) validates once only", u)
		}
	}
	if n < tries/16*8/10 || n > tries/16*12/10 {
		t.Errorf("validated %d of %d, want about 1 in 16", n, tries)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []dust.Options{{MinSupport: -1}, {MaxParked: -2}, {MaxParkedTotal: -1}, {HostSample: 10, SampleSize: 5},
		{KnownParams: []string{"utm_*", "*"}}, {KnownParams: []string{""}}, {KnownSupport: -1}} {
		if _, err := dust.New(&o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	var zero dust.Learner
	zero.Observe("http://z.sim.test/", 1, "")
	if st := zero.Stats(); st.Observed != 1 {
		t.Errorf("zero Learner: %+v", st)
	}
}

// TestObserveExplained checks which duplicate fetches the rules account
// for: an alias being learned is explained, content seen before under a
// URL no rule relates (a trap's next page) is not, nor is new content.
func TestObserveExplained(t *testing.T) {
	l, _ := dust.New(&dust.Options{Probation: -1, MinSupport: 2, ValidateEvery: -1})
	for _, tc := range []struct {
		url   string
		fp    uint64
		first string
		want  bool
	}{
		{"http://a.sim.test/p1", 1, "", false},
		{"http://www.a.sim.test/p1", 1, "http://a.sim.test/p1", true},
		{"http://a.sim.test/p2", 2, "", false},
		{"http://www.a.sim.test/p2", 2, "http://a.sim.test/p2", true}, // activates the alias
		{"http://t.sim.test/cal/2026-01.html", 7, "", false},
		{"http://t.sim.test/cal/2026-02.html", 7, "http://t.sim.test/cal/2026-01.html", false},
		{"http://a.sim.test/p3", 3, "", false},
	} {
		if got := l.ObserveFetch(tc.url, tc.fp, tc.first).Explained; got != tc.want {
			t.Errorf("ObserveFetch(%s, first %q).Explained = %v, want %v", tc.url, tc.first, got, tc.want)
		}
	}
	if r, ok := l.Rewrite("http://www.a.sim.test/p9"); !ok || r.URL != "http://a.sim.test/p9" {
		t.Fatalf("the alias is not active: %+v", r)
	}
	// A validation fetch of the active rule is not: validations go on
	// as long as links come.
	if o := l.ObserveFetch("http://www.a.sim.test/p3", 3, "http://a.sim.test/p3"); o.Explained || !o.Confirmed {
		t.Errorf("a validation of an active rule: %+v, want confirmed, not explained", o)
	}
}

// TestObserveExplainedQuery: query variants of one path are learned path
// by path, as a session-id trap makes them; they are not explained.
func TestObserveExplainedQuery(t *testing.T) {
	l, _ := dust.New(&dust.Options{Probation: -1, MinSupport: 4, ValidateEvery: -1})
	l.ObserveFetch("http://s.sim.test/item/1?sid=a", 1, "")
	for _, sid := range []string{"b", "c"} {
		if o := l.ObserveFetch("http://s.sim.test/item/1?sid="+sid, 1, "http://s.sim.test/item/1?sid=a"); o.Explained {
			t.Errorf("sid=%s explained", sid)
		}
	}
}

// TestProbation: an active PathPrefix validates every rewrite until its
// support reaches Options.Probation, and parks URLs only after; an
// alias parks at once.
func TestProbation(t *testing.T) {
	l, _ := dust.New(&dust.Options{MinSupport: 2, Probation: 4, ValidateEvery: -1})
	fetch := func(i int) {
		a := fmt.Sprintf("http://a.sim.test/v3/p%d", i)
		l.ObserveFetch(a, uint64(i), "")
		l.ObserveFetch(fmt.Sprintf("http://a.sim.test/current/p%d", i), uint64(i), a)
		l.ObserveFetch(fmt.Sprintf("http://www.a.sim.test/v3/p%d", i), uint64(i), a)
	}
	fetch(1)
	fetch(2) // support 2: active, the prefix on probation
	if r, ok := l.Rewrite("http://a.sim.test/current/p100"); !ok || !r.Validate {
		t.Fatalf("a prefix on probation: %+v, %v; want a rewrite to validate", r, ok)
	}
	if r, ok := l.Rewrite("http://www.a.sim.test/v3/p100"); !ok || r.Validate {
		t.Fatalf("an alias after activation: %+v, %v; want a rewrite that parks", r, ok)
	}
	fetch(3)
	fetch(4) // support 4: probation over
	for i := 100; i < 140; i++ {
		if r, ok := l.Rewrite(fmt.Sprintf("http://a.sim.test/current/p%d", i)); !ok || r.Validate {
			t.Fatalf("after probation: %+v, %v; want a rewrite that parks", r, ok)
		}
	}
	// A decoded rule keeps its support, and so its probation state.
	b, _ := l.MarshalBinary()
	l2, _ := dust.New(&dust.Options{MinSupport: 2, Probation: 8, ValidateEvery: -1})
	if err := l2.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if r, _ := l2.Rewrite("http://a.sim.test/current/p100"); !r.Validate {
		t.Error("support 4 < Probation 8 after decoding, but the prefix parks")
	}
}

// TestReleaseUnproven: the URLs parked under an active PathPrefix are
// given back, and Park refuses them until they are observed; those
// parked under a host alias stay parked; a file of its own among them
// withdraws the rule when observed.
func TestReleaseUnproven(t *testing.T) {
	l, _ := dust.New(&dust.Options{MinSupport: 2, Probation: 2, ValidateEvery: -1})
	for i := 1; i <= 3; i++ {
		a := fmt.Sprintf("http://a.sim.test/v3/p%d", i)
		l.ObserveFetch(a, uint64(i), "")
		l.ObserveFetch(fmt.Sprintf("http://a.sim.test/v2/p%d", i), uint64(i), a)
		l.ObserveFetch(fmt.Sprintf("http://www.a.sim.test/v3/p%d", i), uint64(i), a)
	}
	if got := l.ReleaseUnproven(); len(got) != 0 {
		t.Fatalf("nothing parked, but %v given back", got)
	}
	var prefixed []string
	for i := 10; i < 14; i++ {
		for _, u := range []string{fmt.Sprintf("http://a.sim.test/v2/p%d", i), fmt.Sprintf("http://www.a.sim.test/v3/p%d", i)} {
			r, ok := l.Rewrite(u)
			if !ok || r.Validate || !l.Park(u, r.URL) {
				t.Fatalf("%s: %+v, %v; want it parked", u, r, ok)
			}
		}
		prefixed = append(prefixed, fmt.Sprintf("http://a.sim.test/v2/p%d", i))
	}
	got := l.ReleaseUnproven()
	slices.Sort(got)
	if !slices.Equal(got, prefixed) {
		t.Fatalf("ReleaseUnproven = %v, want the prefix's %v", got, prefixed)
	}
	if st := l.Stats(); st.Unproven != 4 || st.Parked != 4 || st.Active != 2 || st.Released != 0 {
		t.Errorf("stats %+v: want 4 given back (none released: no rule was withdrawn), the 4 www URLs still parked, both rules active", st)
	}
	for _, r := range l.Rules() {
		if r.Released != 0 {
			t.Errorf("rule %v: Released %d, want 0: it was not withdrawn", r, r.Released)
		}
	}
	if again := l.ReleaseUnproven(); len(again) != 0 {
		t.Errorf("given back twice: %v", again)
	}
	if l.Park(prefixed[0], "http://a.sim.test/v3/p10") {
		t.Error("a URL given back is parked again before it is fetched")
	}
	// Fetched: a copy, then a file of its own, which withdraws the rule.
	l.ObserveFetch("http://a.sim.test/v3/p10", 10, "")
	l.ObserveFetch(prefixed[0], 10, "http://a.sim.test/v3/p10")
	l.ObserveFetch("http://a.sim.test/v3/p11", 11, "")
	l.ObserveFetch(prefixed[1], 999, "")
	if st := l.Stats(); st.Withdrawn != 1 {
		t.Errorf("a file of its own did not withdraw the prefix: %+v", st)
	}
	if r, ok := l.Rewrite("http://a.sim.test/v2/p20"); ok {
		t.Errorf("the withdrawn prefix still rewrites: %+v", r)
	}
}

// TestServed: a page fetched under an alias before the rule that maps the
// alias to its canonical form was learned stands for the canonical form,
// which is parked on it instead of fetched, and released when the rule
// is withdrawn; a PathPrefix rule's files never stand for one another.
func TestServed(t *testing.T) {
	l, _ := dust.New(&dust.Options{MinSupport: 2, Probation: 2, ValidateEvery: -1})
	early := "http://www.a.sim.test/p0"
	l.ObserveFetch(early, 100, "") // before any rule: new content
	l.ObserveFetch("http://a.sim.test/v2/p0", 200, "")
	if r, ok := l.Served("http://a.sim.test/p0"); ok {
		t.Fatalf("no rule yet, but served by %+v", r)
	}
	for i := 1; i <= 3; i++ {
		a := fmt.Sprintf("http://a.sim.test/p%d", i)
		l.ObserveFetch(a, uint64(i), "")
		l.ObserveFetch(fmt.Sprintf("http://www.a.sim.test/p%d", i), uint64(i), a)
		v3 := fmt.Sprintf("http://a.sim.test/v3/p%d", i)
		l.ObserveFetch(v3, uint64(10+i), "")
		l.ObserveFetch(fmt.Sprintf("http://a.sim.test/v2/p%d", i), uint64(10+i), v3)
	}
	if st := l.Stats(); st.Active != 2 {
		t.Fatalf("want the host alias and the prefix active: %+v", st)
	}

	canon := "http://a.sim.test/p0"
	r, ok := l.Served(canon)
	if !ok || r.URL != early || r.Validate {
		t.Fatalf("Served(%s) = %+v, %v; want the alias %s fetched before the rule", canon, r, ok, early)
	}
	if !l.Park(canon, r.URL) {
		t.Fatal("Park refused the served URL")
	}
	if !l.Park(canon, r.URL) {
		t.Error("parking a parked URL again: false")
	}
	if st := l.Stats(); st.Served != 1 || st.Parked != 1 {
		t.Errorf("stats %+v: want 1 served, 1 parked", st)
	}
	if l.Park("http://a.sim.test/p9", early) {
		t.Error("parked on a URL that is not its alias")
	}
	// A fetch after the rule (a validation) serves too.
	late := "http://www.a.sim.test/p7"
	l.ObserveFetch(late, 700, "")
	if r, ok := l.Served("http://a.sim.test/p7"); !ok || r.URL != late {
		t.Errorf("Served after a fetch under the active rule = %+v, %v; want %s", r, ok, late)
	}
	// A prefix's file stands for nothing: only a file tells a symlink
	// from a directory that shares most files with another.
	if r, ok := l.Served("http://a.sim.test/v3/p0"); ok {
		t.Errorf("a /v2/ file serves its /v3/ name: %+v", r)
	}
	if l.Park("http://a.sim.test/v3/p0", "http://a.sim.test/v2/p0") {
		t.Error("Park parked a /v3/ file on its /v2/ name")
	}
	// A counterexample withdraws the host alias: the parked URL comes back.
	l.ObserveFetch("http://a.sim.test/p5", 5, "")
	o := l.ObserveFetch("http://www.a.sim.test/p5", 55, "")
	if !slices.Contains(o.Released, canon) {
		t.Fatalf("withdrawal released %v, want %s", o.Released, canon)
	}
	if r, ok := l.Served(canon); ok {
		t.Errorf("served by %+v after its rule was withdrawn", r)
	}
}
