package crawlkit_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// Example_quickStart is the README's quick start: a crawl of a real site,
// every page printed as it is kept. It is compiled by go test, not run
// (it would go to the internet); TestREADMEQuickStart keeps the README's
// copy the same.
func Example_quickStart() {
	c, err := crawlkit.New(crawlkit.Config{
		Seeds:    []string{"https://example.com/"},
		MaxPages: 100,
		Sinks: []crawlkit.Sink{crawlkit.SinkFunc(func(_ context.Context, p *crawlkit.Page) error {
			fmt.Println(p.Response.Status, p.URL)
			return nil
		})},
	})
	if err != nil {
		log.Fatal(err)
	}
	stats, err := c.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(stats.Summary())
}

// Example_simulatedWeb runs the quick start against the simulated web of
// package fetchtest, served on 127.0.0.1: a resolver that sends every
// name there, AllowPrivate for the loopback address, and an extra URL
// filter that keeps the crawl off one host while the default trap guards
// stay in place (setting Filters instead would replace them).
func Example_simulatedWeb() {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 5, MeanPages: 5,
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	skip := web.OrdinaryHosts()[2] // reachable from the seed, h000

	var pages, skipped atomic.Int64
	c, err := crawlkit.New(crawlkit.Config{
		Seeds: web.Seeds(),
		Resolver: dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}),
		AllowPrivate:    true,
		MaxPagesPerHost: 30,
		MaxRetries:      -1, // a 429 or 503 is final: keeps the example quick
		ExtraFilters: []frontier.URLFilter{frontier.FilterFunc(func(u *url.URL) error {
			if u.Hostname() == skip {
				return fmt.Errorf("not this host: %s", u)
			}
			return nil
		})},
		Sinks: []crawlkit.Sink{crawlkit.SinkFunc(func(_ context.Context, p *crawlkit.Page) error {
			if pu, _ := url.Parse(p.URL); pu.Hostname() == skip {
				skipped.Add(1)
			}
			pages.Add(1)
			return nil
		})},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("pages kept:", pages.Load() > 0)
	fmt.Println("pages of the filtered host:", skipped.Load())
	fmt.Println("robots.txt violations:", len(web.RobotsViolations("crawlkit")))
	// Output:
	// pages kept: true
	// pages of the filtered host: 0
	// robots.txt violations: 0
}

// TestREADMEQuickStart: the program in the README's quick start is
// Example_quickStart's body, so the README shows code that compiles.
func TestREADMEQuickStart(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("quickstart_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := func(text, open string) string {
		m := regexp.MustCompile(`(?s)` + regexp.QuoteMeta(open) + `\n(.*?)\n}\n`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no %q", open)
		}
		return m[1]
	}
	want := body(string(src), "func Example_quickStart() {")
	got := body(string(readme), "func main() {")
	if got != want {
		t.Errorf("README's quick start differs from Example_quickStart:\n--- README\n%s\n--- example\n%s", got, want)
	}
	if !strings.Contains(string(readme), "go get github.com/crawlkit/crawlkit") {
		t.Error("README's quick start lacks the go get line")
	}
}
