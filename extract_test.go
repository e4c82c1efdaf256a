package crawlkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func extractWeb(t *testing.T) *fetchtest.Web {
	t.Helper()
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 5, Hosts: 6, MeanPages: 8, Mirrors: -1, ChangePeriods: []time.Duration{0},
		CrawlDelay: time.Millisecond, RetryAfter: time.Millisecond})
	t.Cleanup(web.Close)
	return web
}

// TestOnHTMLOncePerPage: a handler on "html" runs once on every HTML page
// the crawl keeps (the pages OnPage sees), never twice, and extracts the
// same title the parser does.
func TestOnHTMLOncePerPage(t *testing.T) {
	web := extractWeb(t)
	type record struct {
		Title string   `selector:"title"`
		H1    string   `selector:"h1"`
		Hrefs []string `selector:"a[href]" attr:"href"`
	}
	var mu sync.Mutex
	calls := map[string]int{}
	records := map[string]record{}
	pages := map[string]*fetch.Document{}
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.MaxRetries = -1
		cfg.OnHTML = []HTMLHandler{{Selector: "html", Func: func(ctx context.Context, e *fetch.Element) error {
			var r record
			if err := fetch.Unmarshal(e, &r); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			calls[e.URL().String()]++
			records[e.URL().String()] = r
			return nil
		}}}
		cfg.OnPage = func(p *Page) {
			if p.Response.ContentType == "text/html" {
				mu.Lock()
				pages[p.Response.URL.String()] = p.Document
				mu.Unlock()
			}
		}
		cfg.OnError = func(u string, err error) {
			var he *HandlerError
			if errors.As(err, &he) {
				t.Errorf("%s: %v", u, err)
			}
		}
	})
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(pages) < 20 {
		t.Fatalf("only %d HTML pages crawled", len(pages))
	}
	for u, n := range calls {
		if n != 1 {
			t.Errorf("%s: handler ran %d times", u, n)
		}
		if pages[u] == nil {
			t.Errorf("%s: handled but not a kept page", u)
		}
	}
	withLinks := 0
	for u, d := range pages {
		r, ok := records[u]
		if !ok {
			t.Errorf("%s: kept but not handled", u)
			continue
		}
		if r.Title != d.Title {
			t.Errorf("%s: extracted title %q, parser's %q", u, r.Title, d.Title)
		}
		if len(r.Hrefs) > 0 {
			withLinks++
		}
	}
	if withLinks == 0 {
		t.Error("no page had links to extract")
	}
}

// linklessParser is the default parser with every page's links dropped,
// so that a crawl reaches only what handlers follow.
func linklessParser() fetch.Parser {
	r := &fetch.Registry{}
	return fetch.ParserFunc(func(resp *fetch.Response) (*fetch.Document, error) {
		d, err := r.Parse(resp)
		if d != nil {
			d.Links = nil
		}
		return d, err
	})
}

// TestOnHTMLFollow: links a handler follows are crawled, through the URL
// filters (MaxDepth here) and the URL-seen test (no page fetched twice);
// without the handler the same crawl stops at its seeds.
func TestOnHTMLFollow(t *testing.T) {
	crawl := func(follow bool) (Stats, map[string]int, int) {
		web := extractWeb(t)
		var maxDepth atomic.Int64
		c := newTestCrawler(t, web, func(cfg *Config) {
			cfg.Parser = linklessParser()
			cfg.NoSitemaps = true
			cfg.MaxRetries = -1
			cfg.MaxDepth = 2
			cfg.OnPage = func(p *Page) {
				for d := int64(p.Depth); ; {
					old := maxDepth.Load()
					if d <= old || maxDepth.CompareAndSwap(old, d) {
						break
					}
				}
			}
			if follow {
				cfg.OnHTML = []HTMLHandler{{Selector: "ul.links a[href]", Func: func(ctx context.Context, e *fetch.Element) error {
					return e.Follow(e.Attr("href"))
				}}}
			}
		})
		s, err := c.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		gets := map[string]int{}
		for _, r := range web.Log() {
			if r.Method == "GET" && !strings.HasSuffix(r.Path, "robots.txt") {
				gets[r.Host+r.Path]++
			}
		}
		return s, gets, int(maxDepth.Load())
	}
	plain, _, _ := crawl(false)
	followed, gets, depth := crawl(true)
	if plain.Pages() > uint64(len(extractWeb(t).Seeds())) {
		t.Fatalf("without handlers and links the crawl fetched %d pages, more than its seeds", plain.Pages())
	}
	if followed.Pages() < 3*plain.Pages() {
		t.Fatalf("with a follow handler %d pages, without %d", followed.Pages(), plain.Pages())
	}
	for u, n := range gets {
		if n > 1 {
			t.Errorf("%s fetched %d times", u, n)
		}
	}
	if depth != 2 || followed.FilteredBy["max depth"] == 0 {
		t.Errorf("max depth of pages %d, %d links refused as too deep; want 2 and some", depth, followed.FilteredBy["max depth"])
	}
}

// TestOnHTMLErrors: a handler's error stops it on that page and reaches
// OnError as a *HandlerError; so does a bad selector a handler queries
// with; other handlers still run.
func TestOnHTMLErrors(t *testing.T) {
	web := extractWeb(t)
	boom := errors.New("boom")
	var mu sync.Mutex
	failed, badSel, others, pagesWithLinks := map[string]int{}, map[string]int{}, map[string]int{}, 0
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.MaxRetries = -1
		cfg.OnHTML = []HTMLHandler{
			{Selector: "a[href]", Func: func(ctx context.Context, e *fetch.Element) error { return boom }},
			{Selector: "html", Func: func(ctx context.Context, e *fetch.Element) error {
				e.ChildText("p[[")
				mu.Lock()
				others[e.URL().String()]++
				if len(e.Find("a[href]")) > 0 {
					pagesWithLinks++
				}
				mu.Unlock()
				return nil
			}},
		}
		cfg.OnError = func(u string, err error) {
			var he *HandlerError
			if !errors.As(err, &he) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			var se *fetch.SelectorError
			switch {
			case errors.Is(err, boom) && he.Selector == "a[href]" && he.URL == u:
				failed[u]++
			case errors.As(err, &se) && se.Selector == "p[[":
				badSel[u]++
			default:
				t.Errorf("%s: unexpected %v", u, err)
			}
		}
	})
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(others) == 0 || len(failed) != pagesWithLinks || len(badSel) != len(others) {
		t.Fatalf("%d pages handled, %d with links; %d pages reported the handler's error, %d the bad selector",
			len(others), pagesWithLinks, len(failed), len(badSel))
	}
	for u, n := range failed {
		if n != 1 {
			t.Errorf("%s: %d errors reported, want 1 (the handler stops on the page)", u, n)
		}
	}
}

func TestOnHTMLConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    HTMLHandler
	}{
		{"bad selector", HTMLHandler{Selector: "div[[", Func: func(context.Context, *fetch.Element) error { return nil }}},
		{"empty selector", HTMLHandler{Selector: "", Func: func(context.Context, *fetch.Element) error { return nil }}},
		{"no func", HTMLHandler{Selector: "div"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Seeds: []string{"http://a.example/"}, OnHTML: []HTMLHandler{tc.h}})
			if !errors.Is(err, ErrConfig) {
				t.Errorf("New = %v, want ErrConfig", err)
			}
		})
	}
}

// BenchmarkCrawlOnHTML measures what selector handlers cost a crawl: the
// loop of BenchmarkCrawl (k=0) with no handler, and with one that extracts
// a record from every page (so every HTML page gets its element tree).
// Figures: pages/s and heap allocations per page.
func BenchmarkCrawlOnHTML(b *testing.B) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 200, MeanPages: 20, MaxPages: 100,
		ChangePeriods: []time.Duration{0}, CrawlDelay: time.Millisecond, RetryAfter: time.Millisecond})
	defer web.Close()
	type record struct {
		Title string   `selector:"h1"`
		Links []string `selector:"ul.links a" attr:"href"`
	}
	for _, bc := range []struct {
		name     string
		handlers []HTMLHandler
	}{
		{"none", nil},
		{"selector", []HTMLHandler{{Selector: "main", Func: func(ctx context.Context, e *fetch.Element) error {
			var r record
			return fetch.Unmarshal(e, &r)
		}}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var pages uint64
			var elapsed time.Duration
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			for b.Loop() {
				c, err := New(Config{
					Seeds: web.Seeds(), Resolver: webResolver(), AllowPrivate: true, PrivateSuffixes: []string{web.Domain()},
					Workers: 64, DelayFactor: -1, MaxPagesPerHost: 100, MaxRetries: -1,
					Logger: quietLogger(), OnHTML: bc.handlers,
				})
				if err != nil {
					b.Fatal(err)
				}
				s, err := c.Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				pages += s.Pages()
				elapsed += s.Elapsed
			}
			runtime.ReadMemStats(&ms1)
			b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
			// The simulated web's server runs in this process: its
			// allocations are in the figure too, the same in both cases.
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(pages), "allocs/page")
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(pages), "B/page")
		})
	}
}

// TestOnHTMLShop crawls a small shop built from the testdata pages, with
// a parser that yields no links: the handlers follow the pagination and
// the product links, and extract every product once.
func TestOnHTMLShop(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("fetch", "testdata", "extract", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	listing, product := read("listing.html"), read("product.html")
	site := fetch.Static{}
	serve := func(u, body string) {
		pu, _ := url.Parse(u)
		site[u] = &fetch.Response{URL: pu, Status: 200, ContentType: "text/html", Header: http.Header{}, Body: []byte(body)}
	}
	// Pages that differ only in a name are near-duplicates, which the
	// crawl keeps once: each page gets a paragraph of its own words.
	own := func(seed int) string {
		var b strings.Builder
		b.WriteString("<p>")
		for k := range 60 {
			fmt.Fprintf(&b, "note%d-%d ", seed, k)
		}
		return b.String() + "</p>"
	}
	const shop = "https://shop.example.com"
	for p := 1; p <= 3; p++ {
		n := strconv.Itoa(p)
		body := strings.Replace(listing, `<span class="current">2</span>`, `<span class="current">`+n+`</span>`, 1)
		body = strings.Replace(body, "page 2 of 3", "page "+n+" of 3", 1)
		prev, next := `rel="prev" href="?page=`+strconv.Itoa(p-1)+`"`, `rel="next" href="?page=`+strconv.Itoa(p+1)+`"`
		switch p {
		case 1:
			prev = ""
		case 3:
			next = ""
		}
		body = strings.Replace(body, `rel="prev" href="?page=1"`, prev, 1)
		body = strings.Replace(body, `rel="next" href="?page=3"`, next, 1)
		serve(shop+"/shop/c/daypacks?page="+n, strings.Replace(body, "</main>", own(p)+"</main>", 1))
	}
	names := map[string]string{"ridge-18": "Ridge 18L Daypack", "trailhead-28": "Trailhead 28L Daypack",
		"canyon-22": "Canyon 22L Daypack", "city-15": "City 15L Daypack"}
	for slug, name := range names {
		u := shop + "/shop/p/" + slug
		if slug == "city-15" {
			u += "?ref=list"
		}
		body := strings.ReplaceAll(product, "Trailhead 28L\n     Daypack", name)
		serve(u, strings.Replace(body, "</footer>", "</footer>"+own(len(u)+100), 1))
	}
	type item struct {
		Name  string   `selector:"h1.product-title"`
		Price float64  `selector:"meta[itemprop=price]" attr:"content"`
		Tags  []string `selector:"ul.tags li"`
	}
	var mu sync.Mutex
	got := map[string]int{}
	follow := func(ctx context.Context, e *fetch.Element) error { return e.Follow(e.Attr("href")) }
	c, err := New(Config{
		Seeds: []string{shop + "/shop/c/daypacks?page=1"}, Fetcher: site, Parser: linklessParser(),
		NoSitemaps: true, Logger: quietLogger(),
		OnHTML: []HTMLHandler{
			{Selector: "a[rel=next], a[rel=prev]", Func: follow},
			{Selector: "ol.results li.item a", Func: follow},
			{Selector: "div.product", Func: func(ctx context.Context, e *fetch.Element) error {
				var it item
				if err := fetch.Unmarshal(e, &it); err != nil {
					return err
				}
				if it.Price != 89.5 || len(it.Tags) != 3 {
					return fmt.Errorf("extracted %+v", it)
				}
				mu.Lock()
				got[it.Name]++
				mu.Unlock()
				return nil
			}},
		},
		OnError: func(u string, err error) { t.Errorf("%s: %v", u, err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcomes[Fetched] != 7 {
		t.Errorf("%d pages kept, want 3 listing pages and 4 products\n%s", s.Outcomes[Fetched], s.Summary())
	}
	for _, name := range names {
		if got[name] != 1 {
			t.Errorf("%s extracted %d times", name, got[name])
		}
	}
}
