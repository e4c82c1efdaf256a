// Command scrape crawls a site and writes the schema.org Product records
// its pages hold, one JSON object per line: the job colly's quick start
// shows, with crawlkit's robots.txt, politeness, duplicate elimination
// and, where a page builds itself with scripts, headless Chromium.
//
// # What it does
//
// One Config.OnHTML handler, keyed by the CSS selector of a Product
// microdata block, fills a struct from its properties with
// fetch.Unmarshal and writes it:
//
//	type Product struct {
//		URL      string   `json:"url"`
//		Name     string   `json:"name" selector:"[itemprop=name]"`
//		Price    float64  `json:"price" selector:"[itemprop=price]" attr:"content"`
//		Currency string   `json:"currency" selector:"[itemprop=priceCurrency]" attr:"content"`
//		Tags     []string `json:"tags,omitempty" selector:"[itemprop=keywords]"`
//	}
//
// The crawl stays on the seeds' registrable domains. With -render (the
// default when Chromium is installed: adaptive), pages with little text
// and some scripts are rendered in the browser first, so products a
// script writes into the page are found too; every request the browser
// makes goes through the crawl's robots.txt check and politeness.
//
// # Running it
//
// With no seeds it crawls the shop of a simulated web (package
// fetchtest) on 127.0.0.1, half of whose products only a script writes,
// and checks the records against the shop's catalogue:
//
//	go run ./examples/scrape
//	go run ./examples/scrape -render off    # the static crawl: half the products
//
// A real site names its seeds; -o writes the records to a file:
//
//	go run ./examples/scrape -seeds https://shop.example/ -max-pages 500 -o products.jsonl
package main
