package crawlkit_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// Example crawls a small simulated web: every nil module of the Config is
// the default (Mercator frontier, robots.txt cache, HTTP fetcher, HTML
// parser, fingerprint and MinHash duplicate tests).
func Example() {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 5, MeanPages: 5, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()

	c, err := crawlkit.New(crawlkit.Config{
		Seeds: web.Seeds(),
		// The simulated web's hosts all live on 127.0.0.1.
		Resolver: dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}),
		AllowPrivate:    true,
		MaxPagesPerHost: 30,
		MaxRetries:      -1, // a 429 or 503 is final: keeps the example quick
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	stats, err := c.Run(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println("pages fetched:", stats.Pages() > 0)
	fmt.Println("every queued URL has an outcome:", stats.Finished() == stats.Outcomes[crawlkit.Queued])
	fmt.Println("robots.txt violations:", len(web.RobotsViolations("crawlkit")))
	// Output:
	// pages fetched: true
	// every queued URL has an outcome: true
	// robots.txt violations: 0
}

// ExampleSinkFunc shows a custom output: a function called with every
// page the crawl keeps.
func ExampleSinkFunc() {
	titles := crawlkit.SinkFunc(func(_ context.Context, p *crawlkit.Page) error {
		fmt.Println(p.Document.Title)
		return nil
	})
	_ = crawlkit.Config{Sinks: []crawlkit.Sink{titles}}
}
