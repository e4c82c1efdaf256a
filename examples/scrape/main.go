package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/fetch/render"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Product is a schema.org Product microdata block.
type Product struct {
	URL      string   `json:"url"`
	Name     string   `json:"name" selector:"[itemprop=name]"`
	Price    float64  `json:"price" selector:"[itemprop=price]" attr:"content"`
	Currency string   `json:"currency" selector:"[itemprop=priceCurrency]" attr:"content"`
	Tags     []string `json:"tags,omitempty" selector:"[itemprop=keywords]"`
}

// productSelector matches a Product block, whichever scheme its type
// names.
const productSelector = `[itemscope][itemtype$="schema.org/Product"]`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type options struct {
	seeds    string
	out      string
	render   string
	maxPages int64
	workers  int
	minDelay time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("scrape", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.seeds, "seeds", "", "seed URLs, comma-separated (none: the shop of a simulated web on 127.0.0.1)")
	fs.StringVar(&o.out, "o", "", "write the records to this file (default: standard output)")
	fs.StringVar(&o.render, "render", "", "render pages in headless Chromium: adaptive (pages with little text and scripts), always or off (default: adaptive when Chromium is found)")
	fs.Int64Var(&o.maxPages, "max-pages", 1000, "stop after this many pages")
	fs.IntVar(&o.workers, "workers", 16, "fetching goroutines")
	fs.DurationVar(&o.minDelay, "min-delay", 0, "least gap between two requests to a host (default: crawlkit's)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || o.maxPages < 1 || o.workers < 1 || o.minDelay < 0 {
		fmt.Fprintln(stderr, "scrape: bad arguments; see -h")
		return 2
	}
	if o.render == "" {
		o.render = "off"
		if render.FindBrowser() != "" {
			o.render = "adaptive"
		}
	}
	var policy render.Policy
	switch o.render {
	case "off":
	case "adaptive":
		policy = render.Adaptive{}
	case "always":
		policy = render.Always
	default:
		fmt.Fprintf(stderr, "scrape: -render %q: want adaptive, always or off\n", o.render)
		return 2
	}
	if err := scrape(ctx, &o, policy, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "scrape:", err)
		return 1
	}
	return 0
}

func scrape(ctx context.Context, o *options, policy render.Policy, stdout, stderr io.Writer) error {
	cfg := crawlkit.Config{
		MaxPages: o.maxPages,
		Workers:  o.workers,
		MinDelay: o.minDelay,
		Logger:   slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	var web *fetchtest.Web
	if o.seeds == "" {
		web = fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2, MeanPages: 4, Scripts: true,
			ChangePeriods: []time.Duration{0}, CrawlDelay: 20 * time.Millisecond})
		defer web.Close()
		cfg.Seeds = []string{"http://" + web.Host(fetchtest.Shop) + ":" + web.Port() + "/"}
		// Every name of the simulated web is on 127.0.0.1.
		cfg.Resolver = dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		})
		cfg.AllowPrivate = true
		cfg.PrivateSuffixes = []string{web.Domain()} // each simulated site is a domain of its own
		fmt.Fprintf(stderr, "scrape: the shop of a simulated web, %s\n", cfg.Seeds[0])
	} else {
		for _, s := range strings.Split(o.seeds, ",") {
			if s = strings.TrimSpace(s); s != "" {
				cfg.Seeds = append(cfg.Seeds, s)
			}
		}
	}
	// Stay on the seeds' sites.
	var domains []string
	for _, s := range cfg.Seeds {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			return fmt.Errorf("seed %q is not a URL", s)
		}
		d := urlnorm.Domain(u.Hostname())
		if web != nil {
			d = u.Hostname()
		}
		domains = append(domains, d)
	}
	cfg.ExtraFilters = []frontier.URLFilter{frontier.Domains(domains, nil)}

	w := stdout
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	out := &recordWriter{enc: json.NewEncoder(w)}
	cfg.OnHTML = []crawlkit.HTMLHandler{{Selector: productSelector, Func: out.product}}
	cfg.OnError = func(u string, err error) {
		var he *crawlkit.HandlerError
		if errors.As(err, &he) {
			fmt.Fprintf(stderr, "scrape: %s: %v\n", u, err)
		}
	}
	var rf *render.Fetcher
	if policy != nil {
		cfg.WrapFetcher = func(static fetch.Fetcher) (fetch.Fetcher, error) {
			var err error
			rf, err = render.New(&render.Options{Static: static, Policy: policy})
			return rf, err
		}
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		return err
	}
	s, err := c.Run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "scrape: %d records from %d pages", out.n, s.Pages())
	if rf != nil {
		rs := rf.Stats()
		fmt.Fprintf(stderr, " (%d rendered in Chromium, %d browser requests, %d refused)", rs.Rendered, s.Subrequests, s.SubrequestsRefused)
	}
	fmt.Fprintln(stderr)
	if web != nil {
		return check(stderr, web, out.records)
	}
	return nil
}

// recordWriter writes Product records as JSON Lines, from many workers.
type recordWriter struct {
	mu      sync.Mutex
	enc     *json.Encoder
	n       int
	records []Product
}

func (r *recordWriter) product(_ context.Context, e *fetch.Element) error {
	var p Product
	if err := fetch.Unmarshal(e, &p); err != nil {
		return err
	}
	p.URL = e.URL().String()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	r.records = append(r.records, p)
	return r.enc.Encode(p)
}
