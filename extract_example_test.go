package crawlkit_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// Example_onHTML is colly's OnHTML done the crawlkit way: a handler keyed
// by a CSS selector extracts a record from each page into a struct, with
// a context and an error, on the simulated web.
func Example_onHTML() {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 3, MeanPages: 4,
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()

	type page struct {
		Heading string   `selector:"h1"`
		Links   []string `selector:"ul.links a" attr:"href"`
	}
	var mu sync.Mutex
	found := map[string]page{}
	c, err := crawlkit.New(crawlkit.Config{
		Seeds: web.Seeds()[:1],
		Resolver: dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}),
		AllowPrivate: true,
		MaxPages:     3,
		Workers:      1,
		OnHTML: []crawlkit.HTMLHandler{{Selector: "main", Func: func(ctx context.Context, e *fetch.Element) error {
			var p page
			if err := fetch.Unmarshal(e, &p); err != nil {
				return err
			}
			mu.Lock()
			found[e.URL().String()] = p
			mu.Unlock()
			return nil
		}}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
	seed := found[web.Seeds()[0]]
	fmt.Printf("%q, %d links\n", seed.Heading, len(seed.Links))
	// Output:
	// "Best Water Spend Unit Tube | h000.sim.test", 29 links
}
