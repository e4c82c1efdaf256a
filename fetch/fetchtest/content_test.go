package fetchtest_test

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func TestRobotsServed(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 9, CrawlDelay: 2500 * time.Millisecond})
	defer w.Close()
	for _, tc := range []struct {
		host     string
		variant  string
		status   int      // after redirects
		hops     []int    // redirect statuses on the way
		contains []string // in the body
	}{
		{"h000.sim.test", "plain", 200, nil, []string{"User-agent: *\nDisallow: \n", "Sitemap: http://h000.sim.test:"}},
		{"h001.sim.test", "prefix", 200, nil, []string{"Disallow: /private/\n", "Disallow: /shop/\n"}},
		{"h002.sim.test", "allow-override", 200, nil, []string{"Disallow: /archive/\n", "Allow: /archive/2019/\n"}},
		{"h003.sim.test", "wildcard", 200, nil, []string{"Disallow: /*.pdf$\n", "Allow: /docs/*.pdf$\n", "Disallow: /search?*sort=\n"}},
		{"h004.sim.test", "crawl-delay", 200, nil, []string{"Crawl-delay: 2.5\n", "/sitemap_index.xml\n"}},
		{"h005.sim.test", "404", 404, nil, nil},
		{"h006.sim.test", "5xx", 500, nil, nil},
		{"h007.sim.test", "redirect", 200, []int{301, 302}, []string{"Disallow: /blog/\n"}},
		{"h008.sim.test", "agents", 200, nil, []string{"User-agent: evilbot\nDisallow: /\n", "User-agent: crawlkit\nUser-agent: goodbot\n"}},
		{w.Host(fetchtest.CalendarTrap), "none", 404, nil, nil},
		{w.Host(fetchtest.Latin1), "allow-all", 200, nil, []string{"Allow: /\n"}},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			if v := w.RobotsVariant(tc.host); v != tc.variant {
				t.Fatalf("variant %q, want %q", v, tc.variant)
			}
			u := w.URL(tc.host, "/robots.txt")
			var hops []int
			for {
				resp, _ := raw(t, w, u)
				if resp.StatusCode < 300 || resp.StatusCode > 399 {
					break
				}
				hops = append(hops, resp.StatusCode)
				loc, _ := resp.Location()
				u = loc.String()
			}
			if !slices.Equal(hops, tc.hops) {
				t.Errorf("redirects %v, want %v", hops, tc.hops)
			}
			resp, body := get(t, w, w.URL(tc.host, "/robots.txt"))
			status, want := w.Robots(tc.host)
			if resp.StatusCode != tc.status || status != tc.status {
				t.Errorf("status %d (Robots says %d), want %d", resp.StatusCode, status, tc.status)
			}
			if tc.status == 200 && string(body) != want {
				t.Errorf("body %q, Robots says %q", body, want)
			}
			for _, c := range tc.contains {
				if !strings.Contains(string(body), c) {
					t.Errorf("body lacks %q:\n%s", c, body)
				}
			}
		})
	}
	if d := w.CrawlDelay("h004.sim.test"); d != 2500*time.Millisecond {
		t.Errorf("CrawlDelay = %v", d)
	}
	// Ground truth on real pages: the allow override and the wildcard.
	for _, u := range w.PagesOf("h002.sim.test") {
		want := !strings.Contains(u, "/archive/") || strings.Contains(u, "/archive/2019/")
		if w.Allowed("crawlkit", u) != want {
			t.Errorf("Allowed(%s) = %v", u, !want)
		}
	}
}

type urlset struct {
	URLs []struct {
		Loc        string `xml:"loc"`
		ChangeFreq string `xml:"changefreq"`
	} `xml:"url"`
}

type sitemapIndex struct {
	Sitemaps []struct {
		Loc string `xml:"loc"`
	} `xml:"sitemap"`
}

func TestSitemaps(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 9, Hosts: 6})
	defer w.Close()
	for _, host := range append(w.OrdinaryHosts(), "mirror0.sim.test") {
		want := w.PagesOf(host)
		slices.Sort(want)

		_, body := get(t, w, w.URL(host, "/sitemap.xml"))
		var set urlset
		if err := xml.Unmarshal(body, &set); err != nil {
			t.Fatalf("%s sitemap.xml: %v", host, err)
		}
		var got []string
		for _, u := range set.URLs {
			got = append(got, u.Loc)
			if w.ChangePeriod(u.Loc) == 0 && u.ChangeFreq != "never" {
				t.Errorf("%s: static page with changefreq %s", u.Loc, u.ChangeFreq)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: sitemap.xml lists %d URLs, host has %d pages", host, len(got), len(want))
		}

		_, body = get(t, w, w.URL(host, "/sitemap_index.xml"))
		var idx sitemapIndex
		if err := xml.Unmarshal(body, &idx); err != nil || len(idx.Sitemaps) != 2 {
			t.Fatalf("%s index: %v, %d sitemaps", host, err, len(idx.Sitemaps))
		}
		got = nil
		for _, s := range idx.Sitemaps {
			resp, body := get(t, w, s.Loc)
			if strings.HasSuffix(s.Loc, ".gz") {
				if ct := resp.Header.Get("Content-Type"); ct != "application/gzip" {
					t.Errorf("%s: Content-Type %s", s.Loc, ct)
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatalf("%s: %v", s.Loc, err)
				}
				body, _ = io.ReadAll(zr)
			}
			var part urlset
			if err := xml.Unmarshal(body, &part); err != nil {
				t.Fatalf("%s: %v", s.Loc, err)
			}
			for _, u := range part.URLs {
				got = append(got, u.Loc)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: sitemap index covers %d URLs, host has %d pages", host, len(got), len(want))
		}
	}
}

func TestExactDuplicates(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 4, Hosts: 10, Mirrors: 3})
	defer w.Close()
	if len(w.Mirrors()) != 3 {
		t.Fatalf("mirrors %v", w.Mirrors())
	}
	clusters := w.ExactDuplicates()
	total := 0
	for origin := range w.Mirrors() {
		total += len(w.PagesOf(origin))
	}
	if len(clusters) != total {
		t.Errorf("%d clusters, mirrors have %d pages", len(clusters), total)
	}
	for _, c := range clusters {
		var first []byte
		for i, u := range c {
			resp, body := get(t, w, u)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d", u, resp.StatusCode)
			}
			if i == 0 {
				first = body
			} else if !bytes.Equal(body, first) {
				t.Fatalf("%s and %s differ", c[0], u)
			}
		}
	}
	// Distinct pages of one host are not duplicates.
	p := w.PagesOf("h000.sim.test")
	_, a := get(t, w, p[0])
	_, b := get(t, w, p[1])
	if bytes.Equal(a, b) {
		t.Error("two pages of h000 are identical")
	}
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// shingles returns the set of word 4-grams of an HTML page's text.
func shingles(body []byte) map[string]bool {
	ws := strings.Fields(tagRE.ReplaceAllString(string(body), " "))
	out := map[string]bool{}
	for i := 0; i+4 <= len(ws); i++ {
		out[strings.Join(ws[i:i+4], " ")] = true
	}
	return out
}

func jaccard(a, b map[string]bool) float64 {
	inter := 0
	for s := range a {
		if b[s] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

func TestNearDuplicates(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 6, Hosts: 16, NearDuplicates: 5})
	defer w.Close()
	clusters := w.NearDuplicates()
	if len(clusters) != 5 {
		t.Fatalf("%d clusters", len(clusters))
	}
	exact := map[string]bool{}
	for _, c := range w.ExactDuplicates() {
		for _, u := range c {
			exact[u] = true
		}
	}
	pages := w.Pages()
	var sets []map[string]bool
	for _, c := range clusters {
		if len(c) < 2 || len(c) > 4 {
			t.Errorf("cluster of %d", len(c))
		}
		var bodies [][]byte
		for _, u := range c {
			if exact[u] {
				t.Errorf("%s is also an exact duplicate", u)
			}
			if _, ok := slices.BinarySearch(pages, u); !ok {
				t.Errorf("%s not in Pages", u)
			}
			_, b := get(t, w, u)
			bodies = append(bodies, b)
		}
		s0 := shingles(bodies[0])
		for i := 1; i < len(bodies); i++ {
			if bytes.Equal(bodies[0], bodies[i]) {
				t.Errorf("%s and %s are byte-identical", c[0], c[i])
			}
			if j := jaccard(s0, shingles(bodies[i])); j < 0.75 {
				t.Errorf("%s ~ %s: Jaccard %.2f, want ≥ 0.75", c[0], c[i], j)
			}
		}
		sets = append(sets, s0)
	}
	for i := 1; i < len(sets); i++ {
		if j := jaccard(sets[0], sets[i]); j > 0.1 {
			t.Errorf("clusters 0 and %d: Jaccard %.2f, want unrelated", i, j)
		}
	}
}

func TestChangeOverTime(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 8, Hosts: 4, Clock: clock,
		ChangePeriods: []time.Duration{0, time.Hour, 24 * time.Hour}})
	defer w.Close()
	byPeriod := map[time.Duration]string{}
	for _, u := range w.Pages() {
		if p := w.ChangePeriod(u); byPeriod[p] == "" && strings.Contains(u, "/h") && w.Title(u) != "" {
			if resp, _ := get(t, w, u); strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				byPeriod[p] = u
			}
		}
	}
	for _, tc := range []struct {
		period  time.Duration
		advance time.Duration
		changes bool
	}{
		{0, 365 * 24 * time.Hour, false},
		{time.Hour, time.Hour, true},
		{time.Hour, 0, false},
		{24 * time.Hour, 24 * time.Hour, true},
	} {
		u := byPeriod[tc.period]
		if u == "" {
			t.Fatalf("no page with period %v", tc.period)
		}
		v0, since0 := w.Version(u)
		r0, b0 := get(t, w, u)
		now.Add(int64(tc.advance))
		v1, since1 := w.Version(u)
		r1, b1 := get(t, w, u)
		if changed := !bytes.Equal(b0, b1); changed != tc.changes || (v1 != v0) != tc.changes {
			t.Errorf("period %v, advance %v: body changed %v, version %d→%d; want change %v",
				tc.period, tc.advance, changed, v0, v1, tc.changes)
		}
		if tc.changes && since1.Sub(since0) != tc.period {
			t.Errorf("period %v: versions began %v and %v", tc.period, since0, since1)
		}
		if lm := r1.Header.Get("Last-Modified"); lm != since1.Format("Mon, 02 Jan 2006 15:04:05 GMT") {
			t.Errorf("Last-Modified %q, version began %v", lm, since1)
		}
		// Conditional re-fetch with the first ETag: 304 unless changed.
		r2, _ := raw(t, w, u, "If-None-Match", r0.Header.Get("ETag"))
		if want := map[bool]int{false: 304, true: 200}[tc.changes]; r2.StatusCode != want {
			t.Errorf("period %v: conditional GET %d, want %d", tc.period, r2.StatusCode, want)
		}
		r3, _ := raw(t, w, u, "If-Modified-Since", r1.Header.Get("Last-Modified"))
		if r3.StatusCode != 304 {
			t.Errorf("If-Modified-Since current version: %d", r3.StatusCode)
		}
		// The links never change.
		if !slices.Equal(extractLinks(t, u, b0), extractLinks(t, u, b1)) {
			t.Errorf("%s: links changed over time", u)
		}
	}
}
