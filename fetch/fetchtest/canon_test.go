package fetchtest_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestCanonicalsSite: every URL of the Canonicals site answers a page
// whose <link rel=canonical> or Link header names what RelCanonical
// says; the header-only variant has no <link>; the variants other than
// ?ref= are not near-duplicates of their article, so only their
// canonical links tie them to it; every URL is reachable.
func TestCanonicalsSite(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 4, Canonicals: true})
	defer w.Close()
	canonHost := w.Host(fetchtest.Canonicals)
	urls := append(w.PagesOf(canonHost), w.PagesOf("m."+canonHost)...)
	if want := 1 + 6*fetchtest.CanonicalArticles; len(urls) != want {
		t.Fatalf("%d URLs on the site, want %d", len(urls), want)
	}
	reach := w.Reachable("crawlkit")
	var html fetch.HTML
	aliases, headers, crossSite := 0, 0, 0
	for _, u := range urls {
		if _, ok := slices.BinarySearch(reach, u); !ok {
			t.Errorf("%s is not reachable", u)
		}
		resp, body := get(t, w, u)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", u, resp.StatusCode)
		}
		base, _ := url.Parse(u)
		doc := html.ParseBytes(body, base)
		var inHTML, inHeader string
		for _, l := range doc.Links {
			if l.Tag == "link" && l.HasRel("canonical") {
				inHTML = l.URL.String()
			}
		}
		for _, l := range fetch.ParseLinkHeader(resp.Header.Values("Link"), base) {
			if l.HasRel("canonical") {
				inHeader = l.URL.String()
			}
		}
		want, header := w.RelCanonical(u)
		got := inHTML
		if header {
			got = inHeader
			headers++
			if inHTML != "" {
				t.Errorf("%s: header-only variant has <link rel=canonical href=%s>", u, inHTML)
			}
		}
		if got == u {
			got = "" // names itself
		}
		if got != want {
			t.Errorf("%s names %q as canonical, RelCanonical says %q (header %v)", u, got, want, header)
		}
		if want == "" {
			continue
		}
		aliases++
		if !strings.Contains(want, canonHost) {
			crossSite++
			continue
		}
		// The article first, then the variant: only ?ref= may be a
		// near-duplicate of it.
		_, ab := get(t, w, want)
		ad := html.ParseBytes(ab, base)
		c, _ := dedup.NewContent(nil)
		if _, err := c.Seen(context.Background(), dedup.Doc{URL: want, Text: []byte(ad.Text)}); err != nil {
			t.Fatal(err)
		}
		m, err := c.Seen(context.Background(), dedup.Doc{URL: u, Text: []byte(doc.Text)})
		if err != nil {
			t.Fatal(err)
		}
		if isRef := strings.Contains(u, "?ref="); m.Seen != isRef {
			t.Errorf("%s: near-duplicate of its article %v, want %v", u, m.Seen, isRef)
		}
	}
	if want := 5 * fetchtest.CanonicalArticles; aliases != want || headers != fetchtest.CanonicalArticles || crossSite != fetchtest.CanonicalArticles {
		t.Errorf("%d aliases (%d header-only, %d naming another site), want %d (%d, %d)", aliases, headers, crossSite,
			want, fetchtest.CanonicalArticles, fetchtest.CanonicalArticles)
	}
}

// TestSitemapOnlyPages: with SitemapOnly every ordinary host has pages no
// link reaches, which its /sitemap.xml lists and which answer 200;
// without it, none.
func TestSitemapOnlyPages(t *testing.T) {
	plain := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 6})
	defer plain.Close()
	if n := len(plain.SitemapOnlyPages()); n != 0 {
		t.Errorf("%d sitemap-only pages without Config.SitemapOnly", n)
	}
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 6, SitemapOnly: true})
	defer w.Close()
	only := w.SitemapOnlyPages()
	if len(only) < 6 {
		t.Fatalf("%d sitemap-only pages, want one per ordinary host at least", len(only))
	}
	pages := w.Pages()
	reach := w.Reachable("crawlkit")
	linked := map[string]bool{}
	for _, p := range pages {
		for _, l := range w.Links(p) {
			if l != p { // a "#comments" link is the page itself
				linked[l] = true
			}
		}
	}
	listed := map[string]bool{}
	var sm fetch.Sitemap
	for _, p := range only {
		u, _ := url.Parse(p)
		_, body := get(t, w, u.Scheme+"://"+u.Host+"/sitemap.xml")
		sd, err := sm.ParseBytes(body, u)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range sd.Entries {
			listed[e.URL.String()] = true
		}
	}
	for _, u := range only {
		if _, ok := slices.BinarySearch(pages, u); !ok {
			t.Errorf("%s not in Pages", u)
		}
		if _, ok := slices.BinarySearch(reach, u); ok {
			t.Errorf("%s is in Reachable, which follows links", u)
		}
		if linked[u] {
			t.Errorf("%s is linked", u)
		}
		if resp, _ := get(t, w, u); resp.StatusCode != 200 {
			t.Errorf("%s: status %d", u, resp.StatusCode)
		}
		if !listed[u] {
			t.Errorf("%s is not in its host's /sitemap.xml", u)
		}
	}
	// The same web but for the extra pages: links and the linked pages
	// do not change.
	if got, want := len(pages)-len(only), len(plain.Pages()); got != want {
		t.Errorf("%d linked pages, want %d as without SitemapOnly", got, want)
	}
	if a, b := w.Reachable("crawlkit"), plain.Reachable("crawlkit"); len(a) != len(b) {
		t.Errorf("%d reachable pages, %d without SitemapOnly", len(a), len(b))
	}
}
