package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

// Product is the record of the README's side-by-side quick starts.
type Product struct {
	Name  string   `selector:"[itemprop=name]"`
	Price string   `selector:"[itemprop=price]" attr:"content"`
	Tags  []string `selector:"[itemprop=keywords]"`
}

// collyQuickStart is the README's colly quick start, printing to out,
// with its transport dialling the simulated web.
func collyQuickStart(web *fetchtest.Web, start string, out io.Writer) {
	shop := web.Host(fetchtest.Shop)
	c := colly.NewCollector(colly.AllowedDomains(shop))
	c.WithTransport(&http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return web.DialContext(ctx, network, addr)
	}})
	c.OnHTML("div.product", func(e *colly.HTMLElement) {
		var p Product
		e.Unmarshal(&p)
		fmt.Fprintln(out, p.Name, p.Price, p.Tags)
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.Visit(start)
}

// crawlkitQuickStart is its crawlkit equivalent in the README, printing
// to out, with a resolver and the private-address guard lifted for the
// simulated web on 127.0.0.1.
func crawlkitQuickStart(web *fetchtest.Web, start string, out io.Writer) error {
	shop := web.Host(fetchtest.Shop)
	c, err := crawlkit.New(crawlkit.Config{
		Seeds:        []string{start},
		ExtraFilters: []frontier.URLFilter{frontier.Domains([]string{shop}, nil)},
		OnHTML: []crawlkit.HTMLHandler{{Selector: "div.product", Func: func(ctx context.Context, e *fetch.Element) error {
			var p Product
			if err := fetch.Unmarshal(e, &p); err != nil {
				return err
			}
			fmt.Fprintln(out, p.Name, p.Price, p.Tags)
			return nil
		}}},
		Resolver: dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}),
		AllowPrivate: true,
		MinDelay:     time.Millisecond,
	})
	if err != nil {
		return err
	}
	_, err = c.Run(context.Background())
	return err
}

// TestQuickStartsSameOutput runs the README's colly quick start and its
// crawlkit equivalent on the simulated shop: they print the same lines
// (in the order their crawls met the products), one per product whose
// fields are in the page's HTML.
func TestQuickStartsSameOutput(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2, MeanPages: 4, Scripts: true, ChangePeriods: []time.Duration{0}})
	defer web.Close()
	start := "http://" + web.Host(fetchtest.Shop) + ":" + web.Port() + "/"
	var cl, ck bytes.Buffer
	collyQuickStart(web, start, &cl)
	if err := crawlkitQuickStart(web, start, &ck); err != nil {
		t.Fatal(err)
	}
	lines := func(b *bytes.Buffer) []string {
		l := strings.Split(strings.TrimSpace(b.String()), "\n")
		slices.Sort(l)
		return l
	}
	a, b := lines(&cl), lines(&ck)
	static := 0
	for _, p := range web.Products() {
		if !p.Scripted {
			static++
		}
	}
	if !slices.Equal(a, b) || len(a) != static {
		t.Errorf("colly printed %d lines, crawlkit %d, the shop has %d products in its HTML:\ncolly:\n%s\ncrawlkit:\n%s",
			len(a), len(b), static, strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	t.Logf("%d lines each, first %q", len(a), a[0])
}
