package crawlkit

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/dedup/deduptest"
	"github.com/crawlkit/crawlkit/fetch"
)

// TestDuplicatesKeepTheirLinks: a page whose content was seen at another
// URL is not a page of the crawl, but the links it holds are followed
// like any page's: a near-duplicate may hold the only link to a page, and
// an exact copy under another folder resolves its relative links to
// other URLs. A nofollow duplicate's links are not.
func TestDuplicatesKeepTheirLinks(t *testing.T) {
	text := deduptest.Text(7, 300)
	words := strings.Fields(text)
	near := func(i int) string {
		w := append([]string(nil), words...)
		w[100+i], w[200+i] = "changed", "again"
		return strings.Join(w, " ")
	}
	page := func(body string) *fetch.Response {
		return &fetch.Response{Status: 200, ContentType: "text/html", Header: http.Header{}, Body: []byte(body)}
	}
	leaf := func(name string) *fetch.Response {
		return page("<title>" + name + "</title><p>" + deduptest.Text(uint64(len(name))*1000+uint64(name[len(name)-1]), 120) + "</p>")
	}
	tests := []struct {
		name string
		site fetch.Static
		want []string // fetched as pages
		not  []string // never requested
	}{
		{
			name: "near duplicates each hold the only link to a page",
			site: fetch.Static{
				"http://a.test/":            page(`<a href="/c1">1</a><a href="/c2">2</a><a href="/c3">3</a>`),
				"http://a.test/c1":          page(`<p>` + near(0) + `</p><a href="/use/c1">use</a>`),
				"http://a.test/c2":          page(`<p>` + near(1) + `</p><a href="/use/c2">use</a>`),
				"http://a.test/c3":          page(`<p>` + near(2) + `</p><a href="/use/c3">use</a>`),
				"http://a.test/use/c1":      leaf("use1"),
				"http://a.test/use/c2":      leaf("use2"),
				"http://a.test/use/c3":      leaf("use3"),
				"http://a.test/robots.txt":  {Status: 404, Header: http.Header{}},
				"http://a.test/favicon.ico": {Status: 404, Header: http.Header{}},
			},
			want: []string{"http://a.test/use/c1", "http://a.test/use/c2", "http://a.test/use/c3"},
		},
		{
			name: "an exact copy under another folder resolves its links there",
			site: fetch.Static{
				"http://a.test/":              page(`<a href="/v1/doc.html">1</a><a href="/v2/doc.html">2</a>`),
				"http://a.test/v1/doc.html":   page(`<p>` + text + `</p><a href="part.html">part</a>`),
				"http://a.test/v2/doc.html":   page(`<p>` + text + `</p><a href="part.html">part</a>`),
				"http://a.test/v1/part.html":  leaf("part1"),
				"http://a.test/v2/part.html":  leaf("part2"),
				"http://a.test/robots.txt":    {Status: 404, Header: http.Header{}},
				"http://a.test/v2/other.html": leaf("other"),
			},
			want: []string{"http://a.test/v1/part.html", "http://a.test/v2/part.html"},
		},
		{
			name: "a nofollow duplicate's links are not followed",
			site: fetch.Static{
				"http://a.test/":           page(`<a href="/c1">1</a><a href="/c2">2</a>`),
				"http://a.test/c1":         page(`<p>` + near(0) + `</p>`),
				"http://a.test/c2":         page(`<meta name="robots" content="nofollow"><p>` + near(1) + `</p><a href="/hidden">h</a>`),
				"http://a.test/hidden":     leaf("hidden"),
				"http://a.test/robots.txt": {Status: 404, Header: http.Header{}},
			},
			not: []string{"http://a.test/hidden"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requested := map[string]bool{}
			fetched := map[string]bool{}
			var mu sync.Mutex
			f := fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
				mu.Lock()
				requested[req.URL.String()] = true
				mu.Unlock()
				return tt.site.Fetch(ctx, req)
			})
			s := runConfig(t, context.Background(), Config{
				Seeds: []string{"http://a.test/"}, Fetcher: f, Workers: 1, DelayFactor: -1, Logger: quietLogger(),
				OnPage: func(p *Page) { fetched[p.URL] = true },
			})
			if s.Outcomes[DuplicateContent] == 0 {
				t.Fatalf("no duplicate found, the case tests nothing: %s", s.String())
			}
			for _, u := range tt.want {
				if !fetched[u] {
					t.Errorf("%s not fetched as a page (%s)", u, s.String())
				}
			}
			for _, u := range tt.not {
				if requested[u] {
					t.Errorf("%s requested", u)
				}
			}
		})
	}
}
