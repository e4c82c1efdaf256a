package crawlkit_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
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

// ExampleMemState stops a crawl after its first pages and resumes it with
// a new Crawler on the same State: the second run fetches only what the
// first left, and the counters carry on.
func ExampleMemState() {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 2, Hosts: 4, MeanPages: 5, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond,
		ChangePeriods: []time.Duration{0}})
	defer web.Close()
	state := crawlkit.NewMemState()
	run := func(maxPages int64) crawlkit.Stats {
		c, err := crawlkit.New(crawlkit.Config{
			Seeds: web.Seeds(),
			State: state,
			Resolver: dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}),
			AllowPrivate:    true,
			MaxPages:        maxPages, // the crawl's total, across runs
			MaxPagesPerHost: 30,       // the simulated web's traps stop there
			MaxRetries:      -1,
			Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			panic(err)
		}
		stats, err := c.Run(context.Background())
		if err != nil {
			panic(err)
		}
		return stats
	}
	first := run(5)
	second := run(0)
	fmt.Println("first run stopped at:", first.Pages())
	fmt.Println("second run went on:", second.Pages() > first.Pages())
	fmt.Println("every queued URL has an outcome:", second.Finished() == second.Outcomes[crawlkit.Queued])
	// Output:
	// first run stopped at: 5
	// second run went on: true
	// every queued URL has an outcome: true
}

// ExampleNewJSONLines writes page records to standard output; Close
// flushes them and leaves os.Stdout open.
func ExampleNewJSONLines() {
	sink := crawlkit.NewJSONLines(os.Stdout)
	p := &crawlkit.Page{URL: "http://a.test/", Fetched: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Response: &fetch.Response{Status: 200, ContentType: "text/html", Body: []byte("<title>A</title>")},
		Document: &fetch.Document{Title: "A"}}
	if err := sink.Write(context.Background(), p); err != nil {
		panic(err)
	}
	if err := sink.Close(); err != nil {
		panic(err)
	}
	fmt.Println("stdout still open")
	// Output:
	// {"url":"http://a.test/","depth":0,"fetched":"2026-01-01T00:00:00Z","status":200,"content_type":"text/html","title":"A","bytes":16,"fetch_ms":0,"links":0,"fingerprint":"0000000000000000"}
	// stdout still open
}

// ExampleReadLinkLogCanonical reads a link log in which a printer
// version named its article as canonical: the alias is no node of the
// graph, its links and the links to it are the article's.
func ExampleReadLinkLogCanonical() {
	log := strings.NewReader("http://a.test/\thttp://a.test/print/story\n" +
		"http://a.test/print/story\thttp://a.test/story\n" +
		"http://a.test/print/story\thttp://a.test/references\n" +
		"=\thttp://a.test/print/story\thttp://a.test/story\n")
	err := crawlkit.ReadLinkLogCanonical(log, func(string) error { return nil }, func(src, dst string) error {
		fmt.Println(src, "->", dst)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// http://a.test/ -> http://a.test/story
	// http://a.test/story -> http://a.test/references
}
