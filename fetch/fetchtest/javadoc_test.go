package fetchtest_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestJavadoc checks the Javadoc host: its pages are served and in the
// ground truth, the pages behind <NOSCRIPT> are reachable, and a crawl
// over the host finds them with fetch.HTML's default (scripting off) and
// only then.
func TestJavadoc(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 4, MeanPages: 8, Javadoc: true})
	defer w.Close()
	host := w.Host(fetchtest.Javadoc)
	entry := w.URL(host, "/")
	if !slices.Contains(w.Hosts(), host) || w.RobotsVariant(host) != "none" {
		t.Fatalf("host %s: in Hosts %v, robots %q", host, slices.Contains(w.Hosts(), host), w.RobotsVariant(host))
	}
	if !slices.Contains(w.Links(w.URL(w.OrdinaryHosts()[0], "/")), entry) {
		t.Errorf("h000's home page does not link %s", entry)
	}
	pages := w.PagesOf(host)
	all, reach := w.Pages(), w.Reachable("crawlkit")
	if len(pages) != 7 {
		t.Fatalf("PagesOf(%s) = %v", host, pages)
	}
	allClasses := w.URL(host, "/api/allclasses-noframe.html")
	var hidden []string
	for _, p := range fetchtest.JavadocNoscriptOnly() {
		hidden = append(hidden, w.URL(host, p))
	}
	for _, u := range pages {
		if !slices.Contains(all, u) || !slices.Contains(reach, u) {
			t.Errorf("%s: in Pages %v, in Reachable %v", u, slices.Contains(all, u), slices.Contains(reach, u))
		}
		resp, body := get(t, w, u)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || w.Status(u) != 200 {
			t.Fatalf("GET %s: %d %s", u, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		for _, scripting := range []bool{false, true} {
			got := parsedLinks(t, u, body, scripting)
			want := w.Links(u)
			if scripting { // the <NOSCRIPT> links, all to "All Classes", are not seen
				want = slices.DeleteFunc(want, func(l string) bool { return l == allClasses })
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, scripting %v: parsed links %v, ground truth %v", u, scripting, got, want)
			}
		}
		p := fetch.HTML{}
		if d := p.ParseBytes(body, mustParse(t, u)); d.Title != w.Title(u) || d.Title == "" {
			t.Errorf("%s: title %q, ground truth %q", u, d.Title, w.Title(u))
		}
	}
	// The crawl: breadth first over the host from its entry.
	for _, scripting := range []bool{false, true} {
		found := crawlHost(t, w, entry, host, scripting)
		want := pages
		if scripting {
			want = slices.DeleteFunc(slices.Clone(pages), func(u string) bool { return slices.Contains(hidden, u) })
		}
		slices.Sort(found)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(found, want) {
			t.Errorf("crawl with scripting %v found %v, want %v", scripting, found, want)
		}
	}
}

// TestJavadocOff checks that without Config.Javadoc the web has no such
// host and nothing links it.
func TestJavadocOff(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 4, MeanPages: 8})
	defer w.Close()
	host := w.Host(fetchtest.Javadoc)
	if slices.Contains(w.Hosts(), host) || w.Status(w.URL(host, "/")) != 0 || w.PagesOf(host) != nil {
		t.Errorf("%s exists without Config.Javadoc", host)
	}
	for _, l := range w.Links(w.URL(w.OrdinaryHosts()[0], "/")) {
		if strings.Contains(l, host) {
			t.Errorf("h000 links %s", l)
		}
	}
}

// parsedLinks returns the links fetch.HTML finds in body at u in the form
// of the ground truth: fragment dropped, duplicates removed.
func parsedLinks(t *testing.T, u string, body []byte, scripting bool) []string {
	t.Helper()
	p := fetch.HTML{Scripting: scripting}
	var out []string
	for _, l := range p.ParseBytes(body, mustParse(t, u)).Links {
		c := *l.URL
		c.Fragment, c.RawFragment = "", ""
		if s := c.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// crawlHost fetches, breadth first from entry, every page of host that
// the links fetch.HTML finds lead to, and returns the URLs fetched.
func crawlHost(t *testing.T, w *fetchtest.Web, entry, host string, scripting bool) []string {
	t.Helper()
	seen := map[string]bool{entry: true}
	queue := []string{entry}
	var fetched []string
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		resp, body := get(t, w, u)
		if resp.StatusCode != 200 {
			continue
		}
		fetched = append(fetched, u)
		for _, l := range parsedLinks(t, u, body, scripting) {
			if lu := mustParse(t, l); lu.Hostname() == host && !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
	}
	return fetched
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
