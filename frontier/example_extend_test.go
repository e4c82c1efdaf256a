package frontier_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// ExamplePrioritizer plugs a prioritizer of one's own into the Mercator
// frontier: links whose anchor text names the topic go to the highest front
// queue, the rest to the lowest. (examples/focused grows this into a
// focused crawler with cosine similarity of anchor and page to a query.)
func ExamplePrioritizer() {
	byAnchor := frontier.PrioritizerFunc(func(u *frontier.URL, levels int) int {
		if strings.Contains(strings.ToLower(u.Anchor), "river") {
			return levels - 1
		}
		return 0
	})
	ctx := context.Background()
	f, err := frontier.NewMercator(&frontier.Options{
		Workers: 1, BackQueues: 1, FrontQueues: 2, Prioritizer: byAnchor,
		// The selector picks the high queue whenever it holds a URL.
		Weights: []float64{1e-9, 1},
	})
	if err != nil {
		panic(err)
	}
	defer f.Close()
	f.Add(ctx,
		frontier.URL{URL: "http://a.test/cars", Anchor: "Cars", Source: "http://a.test/"},
		frontier.URL{URL: "http://b.test/nile", Anchor: "The River Nile", Source: "http://a.test/"},
		frontier.URL{URL: "http://c.test/roads", Anchor: "Roads", Source: "http://a.test/"},
	)
	for range 3 {
		l, err := f.Next(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(l.URL.Priority, l.URL.URL)
		f.Done(l, frontier.Result{Duration: time.Millisecond, Status: 200})
	}
	// Output:
	// 1 http://b.test/nile
	// 0 http://a.test/cars
	// 0 http://c.test/roads
}

// ExampleURLFilter writes a URL filter of one's own, refusing URLs that
// carry a session id, and chains it after the default filters. A refusal is
// a *frontier.Rejection, so the crawler can count it by reason.
func ExampleURLFilter() {
	noSessions := frontier.FilterFunc(func(u *url.URL) error {
		for k := range u.Query() {
			if k := strings.ToLower(k); k == "sid" || k == "sessionid" || k == "phpsessid" {
				return &frontier.Rejection{Reason: frontier.ReasonPattern, URL: u.String(), Detail: "session id " + k}
			}
		}
		return nil
	})
	filters := append(frontier.DefaultFilters(), noSessions)
	for _, raw := range []string{
		"http://shop.test/item?id=7",
		"http://shop.test/item?id=7&PHPSESSID=abc",
		"mailto:someone@shop.test",
	} {
		u, _ := url.Parse(raw)
		if err := filters.Filter(u); err != nil {
			r, _ := frontier.ReasonOf(err)
			fmt.Println("reject", r, raw)
			continue
		}
		fmt.Println("accept", raw)
	}
	// Output:
	// accept http://shop.test/item?id=7
	// reject pattern http://shop.test/item?id=7&PHPSESSID=abc
	// reject scheme mailto:someone@shop.test
}

// ExampleExtensions extends the default list of extensions that are not
// pages: a crawler that wants no PDFs either refuses them along with
// images, media and archives, case-insensitively.
func ExampleExtensions() {
	noPDF := frontier.Extensions(append(frontier.NonPageExtensions(), ".pdf"))
	for _, raw := range []string{
		"http://a.test/report.pdf",
		"http://a.test/logo.PNG",
		"http://a.test/page.html",
	} {
		u, _ := url.Parse(raw)
		if err := noPDF.Filter(u); err != nil {
			r, _ := frontier.ReasonOf(err)
			fmt.Println("reject", r, raw)
			continue
		}
		fmt.Println("accept", raw)
	}
	// Output:
	// reject extension http://a.test/report.pdf
	// reject extension http://a.test/logo.PNG
	// accept http://a.test/page.html
}
