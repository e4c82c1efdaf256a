package robots_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/crawlkit/crawlkit/robots"
)

func Example() {
	r := robots.Parse(200, []byte(`
User-agent: *
Disallow: /private/
Allow: /private/press/
Disallow: /*.pdf$
Crawl-delay: 2
Sitemap: https://example.com/sitemap.xml

User-agent: ExampleBot
Disallow: /tmp/
`))
	for _, target := range []string{"/private/plans", "/private/press/2024", "https://example.com/a/report.pdf", "/a/report.pdf?download", "/p%72ivate/x"} {
		fmt.Println(target, r.Allowed("OtherBot/2.0", target))
	}
	// ExampleBot has a group of its own: "*" does not apply to it.
	fmt.Println("ExampleBot /private/plans", r.Allowed("ExampleBot", "/private/plans"))
	fmt.Println(r.CrawlDelay("OtherBot"), r.Sitemaps())
	// Output:
	// /private/plans false
	// /private/press/2024 true
	// https://example.com/a/report.pdf false
	// /a/report.pdf?download true
	// /p%72ivate/x false
	// ExampleBot /private/plans true
	// 2s [https://example.com/sitemap.xml]
}

func ExampleCache() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /admin/\nCrawl-delay: 90\n")
		}
	}))
	defer srv.Close()

	c := robots.NewCache(&robots.Options{
		Agent: "ExampleBot",
		Fetch: robots.HTTPFetch(srv.Client(), "ExampleBot/1.0 (+https://example.com/bot)"),
	})
	defer c.Close()

	for _, path := range []string{"/", "/admin/users"} {
		u, _ := url.Parse(srv.URL + path)
		ok, err := c.Allowed(context.Background(), u)
		fmt.Println(path, ok, err)
	}
	u, _ := url.Parse(srv.URL)
	d, capped := c.Delay(u.Host)
	fmt.Println("delay", d, "capped", capped)
	// Output:
	// / true <nil>
	// /admin/users false <nil>
	// delay 1m0s capped true
}
