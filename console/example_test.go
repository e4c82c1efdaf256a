package console_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/console"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// A crawl of a simulated web with its console: the page and /metrics are
// served during the crawl and after it.
func Example() {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 3, MeanPages: 4, ChangePeriods: []time.Duration{0}})
	defer web.Close()
	c, err := crawlkit.New(crawlkit.Config{
		Seeds: web.Seeds(), Workers: 4, AllowPrivate: true, MaxRetries: -1,
		Resolver: dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	k := console.New(c, &console.Options{Settings: []console.Setting{{Name: "output directory", Value: "crawl/"}}})
	defer k.Close()
	// A program would listen on 127.0.0.1:8081 with http.ListenAndServe.
	srv := httptest.NewServer(k)
	defer srv.Close()

	if _, err := c.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	page := get(srv.URL + "/")
	fmt.Println("finished:", strings.Contains(page, ">finished<"), "output shown:", strings.Contains(page, "crawl/"))
	for line := range strings.Lines(get(srv.URL + "/metrics")) {
		if strings.HasPrefix(line, "crawlkit_workers ") || strings.HasPrefix(line, `crawlkit_urls_finished_total{outcome="robots_denied"}`) {
			fmt.Print(line)
		}
	}
	// Output:
	// finished: true output shown: true
	// crawlkit_urls_finished_total{outcome="robots_denied"} 0
	// crawlkit_workers 4
}

func get(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}
