package render_test

import (
	"context"
	"fmt"
	"log"
	"net/url"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/render"
)

// Adaptive renders the pages that look like application shells: little
// text, some scripts.
func ExampleAdaptive() {
	u, _ := url.Parse("https://shop.example/product/7")
	shell := &fetch.Response{URL: u, Status: 200, ContentType: "text/html",
		Body: []byte(`<html><head><script src="/app.js"></script></head><body><div id="app">Loading…</div></body></html>`)}
	article := &fetch.Response{URL: u, Status: 200, ContentType: "text/html",
		Body: []byte(`<html><body><h1>Notes</h1><p>Plain HTML, no script, all the text a reader needs.</p></body></html>`)}
	p := render.Adaptive{}
	fmt.Println(p.Render(&fetch.Request{URL: u}, shell), p.Render(&fetch.Request{URL: u}, article))
	// Output: true false
}

// A rendering fetcher over the HTTP fetcher: every request of the browser
// goes through it. (This example needs Chromium, so it is not run.)
func ExampleNew() {
	static := fetch.NewHTTP(nil)
	defer static.Close()
	f, err := render.New(&render.Options{Static: static, Policy: render.Adaptive{}})
	if err != nil {
		log.Fatal(err) // render.ErrNoBrowser without Chromium
	}
	defer f.Close()
	u, _ := url.Parse("https://example.com/")
	resp, err := f.Fetch(context.Background(), &fetch.Request{URL: u})
	if err != nil {
		log.Fatal(err)
	}
	doc, _ := (&fetch.HTML{Scripting: resp.Rendered}).Parse(resp)
	fmt.Println(resp.Rendered, len(doc.Links), len(resp.Subresources))
}
