package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// defaultQuery is the topic of the demo: water.
const defaultQuery = "river lake sea ocean water rain boat ship island coast harbor"

type options struct {
	demo         bool
	demoHosts    int
	demoPages    int
	demoSeed     int64
	seeds        string
	query        string
	domains      string
	skip         string
	budget       int
	workers      int
	compare      bool
	anchorWeight float64
	allowPrivate bool
	dns          string
}

// usageError is a problem with the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("focused", flag.ContinueOnError)
	fs.BoolVar(&o.demo, "demo", false, "crawl a simulated web on 127.0.0.1 (no network) and compare with breadth first")
	fs.IntVar(&o.demoHosts, "demo-hosts", 200, "with -demo: number of simulated hosts")
	fs.IntVar(&o.demoPages, "demo-pages", 20, "with -demo: mean pages per simulated host")
	fs.Int64Var(&o.demoSeed, "demo-seed", 1, "with -demo: seed of the simulated web")
	fs.StringVar(&o.seeds, "seeds", "", "seed URLs, comma-separated")
	fs.StringVar(&o.query, "query", defaultQuery, "the topic: words whose pages to find first")
	fs.StringVar(&o.domains, "domains", "", "registrable domains to stay within, comma-separated (default: the seeds' domains; -demo: any)")
	fs.StringVar(&o.skip, "skip", `/search\?`, "skip URLs matching this regular expression")
	fs.IntVar(&o.budget, "max-pages", 400, "page budget of each crawl")
	fs.IntVar(&o.workers, "workers", 8, "number of fetching goroutines")
	fs.Float64Var(&o.anchorWeight, "anchor-weight", 0.7, "weight of the anchor text against the linking page's relevance, 0..1")
	fs.BoolVar(&o.compare, "compare", true, "also crawl breadth first with the same budget and compare")
	fs.BoolVar(&o.allowPrivate, "allow-private", false, "permit loopback and private addresses (refused by default)")
	fs.StringVar(&o.dns, "dns", "", "use this nameserver (IP:PORT) instead of /etc/resolv.conf's, e.g. simweb's 127.0.0.1:5353")
	// A flag error is one line (below); only -h prints the usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintf(stderr, "usage: focused -demo [flags] | -seeds URL[,URL...] [flags]\n\nflags:\n")
			fs.PrintDefaults()
			return nil, err
		}
		return nil, usageError{err.Error() + " (-h lists the flags)"}
	}
	bad := func(format string, args ...any) (*options, error) {
		return nil, usageError{fmt.Sprintf(format, args...)}
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected argument %q: seeds go in -seeds", fs.Arg(0))
	case o.demo && o.seeds != "":
		return bad("-demo crawls its own simulated web: drop -seeds")
	case !o.demo && o.seeds == "":
		return bad("nothing to crawl: give -seeds or -demo")
	case o.demo && o.dns != "":
		return bad("-demo resolves its simulated web itself: drop -dns")
	case o.anchorWeight < 0 || o.anchorWeight > 1:
		return bad("-anchor-weight %g must be within 0..1", o.anchorWeight)
	case o.budget < 1 || o.workers < 1:
		return bad("-max-pages and -workers must be at least 1")
	case o.demoHosts < 1 || o.demoPages < 1:
		return bad("-demo-hosts and -demo-pages must be at least 1")
	case len(terms(o.query)) == 0:
		return bad("-query %q has no words", o.query)
	}
	if o.dns != "" {
		if _, err := netip.ParseAddrPort(o.dns); err != nil {
			return bad("-dns %q: want IP:PORT, e.g. 127.0.0.1:5353", o.dns)
		}
	}
	if !o.demo {
		n := 0
		for _, s := range strings.Split(o.seeds, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			n++
			if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return bad("seed %q is not an absolute http(s) URL", s)
			}
		}
		if n == 0 {
			return bad("-seeds %q holds no URL: give at least one http(s) seed", o.seeds)
		}
	}
	for _, d := range strings.Split(o.domains, ",") {
		if d = strings.TrimSpace(d); o.domains != "" && (d == "" || strings.ContainsAny(d, ":/ ") || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".")) {
			return bad("-domains: %q is not a domain name like example.com", d)
		}
	}
	if o.skip != "" {
		if _, err := regexp.Compile(o.skip); err != nil {
			return bad("-skip: %v", err)
		}
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "focused:", err)
		return 2
	}
	if err := focused(ctx, o, stdout); err != nil {
		fmt.Fprintln(stderr, "focused:", err)
		return 1
	}
	return 0
}

// frontierLevels is the number of front queues (priority levels), and
// focusBias the ratio of the weights of two neighbouring levels.
const (
	frontierLevels = 8
	focusBias      = 4.0
)

// result is what one budgeted crawl found.
type result struct {
	Fetched int // pages fetched and handed to the sinks, up to the budget
	OnTopic int // of those, pages on the topic
	Stats   crawlkit.Stats
}

// setup is everything two compared crawls share.
type setup struct {
	seeds     []string
	resolver  dns.Resolver
	allowPriv bool
	suffixes  []string           // Config.PrivateSuffixes
	scope     frontier.URLFilter // Config.ExtraFilters: after the default guards
	budget    int
	workers   int
	// onTopic decides from a fetched page's URL and title whether it is
	// on the topic (the demo asks the simulated web's ground truth).
	onTopic func(url, title string) bool
}

// crawlBudget runs one crawl with prioritizer p (nil: breadth first) and
// counts the on-topic pages among the first budget pages fetched (pages
// handed to OnPage: 2xx, not duplicates). It stops the crawl by cancelling
// its context at the budget rather than with Config.MaxPages, which the
// crawler checks every 50 ms and which counts duplicates too; pages that
// workers finish after the cancel are not counted, so both crawls are
// measured on exactly the same budget.
func crawlBudget(ctx context.Context, s setup, p *Focus) (result, error) {
	var (
		mu  sync.Mutex
		res result
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := crawlkit.Config{
		Seeds:           s.seeds,
		Resolver:        s.resolver,
		AllowPrivate:    s.allowPriv,
		PrivateSuffixes: s.suffixes,
		ExtraFilters:    []frontier.URLFilter{s.scope},
		Workers:         s.workers,
		MaxDuration:     2 * time.Minute,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnPage: func(pg *crawlkit.Page) {
			title := ""
			if pg.Document != nil {
				title = pg.Document.Title
			}
			mu.Lock()
			defer mu.Unlock()
			if res.Fetched >= s.budget {
				return
			}
			res.Fetched++
			if s.onTopic(pg.URL, title) {
				res.OnTopic++
			}
			if res.Fetched == s.budget {
				cancel() // a clean stop: workers finish their page
			}
		},
	}
	if p != nil {
		cfg.Parser = p.Parser(&fetch.Registry{})
		// The front queue selector picks a queue with probability
		// proportional to its weight; the default weights (1..8) let the
		// low queues, which hold most URLs, win often. Steeper weights
		// make the focus sharper.
		weights := make([]float64, frontierLevels)
		for i := range weights {
			weights[i] = math.Pow(focusBias, float64(i))
		}
		// PriorityFirst: among the hosts that may be contacted, the one
		// holding the most relevant URL goes first, rather than the one
		// with the most work, which a crawl with a page budget does not
		// finish anyway.
		f, err := frontier.NewMercator(&frontier.Options{
			FrontQueues: frontierLevels, Workers: s.workers, Prioritizer: p, Weights: weights,
			HostOrder:  frontier.PriorityFirst,
			Politeness: frontier.Politeness{K: 10, MaxDelay: time.Minute},
		})
		if err != nil {
			return result{}, err
		}
		defer f.Close()
		cfg.Frontier = f
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		return result{}, err
	}
	stats, err := c.Run(ctx)
	if err != nil {
		return result{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	res.Stats = stats
	return res, nil
}

// titleHasTopic reports whether title contains one of the query's words.
func titleHasTopic(query vector, title string) bool {
	for t := range terms(title) {
		if _, ok := query[t]; ok {
			return true
		}
	}
	return false
}

func focused(ctx context.Context, o *options, stdout io.Writer) error {
	var skip *regexp.Regexp
	if o.skip != "" {
		var err error
		if skip, err = regexp.Compile(o.skip); err != nil {
			return fmt.Errorf("-skip: %v", err)
		}
	}
	q := terms(o.query)
	s := setup{budget: o.budget, workers: o.workers, allowPriv: o.allowPrivate,
		onTopic: func(_, title string) bool { return titleHasTopic(q, title) }}
	scope := Scope{Skip: skip}
	if o.domains != "" {
		scope.Domains = strings.Split(o.domains, ",")
	}
	if o.demo {
		web := fetchtest.NewWeb(fetchtest.Config{Seed: o.demoSeed, Hosts: o.demoHosts, MeanPages: o.demoPages, ChangePeriods: []time.Duration{0}})
		defer web.Close()
		s.seeds = web.Seeds()
		s.allowPriv = true
		s.suffixes = []string{web.Domain()} // each simulated site is a domain of its own
		s.resolver = loopback(web.Domain())
		// Ground truth: the title the simulated web generated.
		s.onTopic = func(u, _ string) bool { return titleHasTopic(q, web.Title(u)) }
		total, on := 0, 0
		for _, p := range web.Pages() {
			total++
			if titleHasTopic(q, web.Title(p)) {
				on++
			}
		}
		fmt.Fprintf(stdout, "simulated web: %d hosts, %d pages, %d on the topic (%.1f%%)\n", len(web.Hosts()), total, on, 100*float64(on)/float64(total))
	} else {
		for _, seed := range strings.Split(o.seeds, ",") {
			if seed = strings.TrimSpace(seed); seed != "" {
				s.seeds = append(s.seeds, seed)
			}
		}
		if len(scope.Domains) == 0 {
			scope.Domains = seedDomains(s.seeds)
		}
		if o.dns != "" {
			// As the crawler's -dns: the crawl's own resolver asks this
			// nameserver (simweb's, say) instead of the system's.
			r, err := dns.New(&dns.Options{Nameservers: []string{o.dns}, Timeout: 500 * time.Millisecond, Attempts: 3})
			if err != nil {
				return err
			}
			defer r.Close()
			s.resolver = r
		}
	}
	s.scope = scope

	fmt.Fprintf(stdout, "query %q, budget %d pages\n", o.query, o.budget)
	focus := NewFocus(o.query)
	focus.AnchorWeight = o.anchorWeight
	foc, err := crawlBudget(ctx, s, focus)
	if err != nil {
		return err
	}
	if foc.Fetched == 0 && ctx.Err() == nil {
		return fmt.Errorf("no page could be fetched (%d fetch errors, %d robots denials, %d filtered): check the seeds, -dns and -allow-private",
			foc.Stats.Outcomes[crawlkit.FetchError], foc.Stats.Outcomes[crawlkit.RobotsDenied], foc.Stats.Outcomes[crawlkit.Filtered])
	}
	report(stdout, "focused", foc)
	if o.compare {
		bfs, err := crawlBudget(ctx, s, nil)
		if err != nil {
			return err
		}
		report(stdout, "breadth-first", bfs)
		if bfs.OnTopic > 0 {
			fmt.Fprintf(stdout, "focused found %.1f× as many on-topic pages\n", float64(foc.OnTopic)/float64(bfs.OnTopic))
		}
	}
	return nil
}

func report(w io.Writer, name string, r result) {
	pct := 0.0
	if r.Fetched > 0 {
		pct = 100 * float64(r.OnTopic) / float64(r.Fetched)
	}
	fmt.Fprintf(w, "%-14s %4d on-topic of %4d pages (%.1f%%)\n", name+":", r.OnTopic, r.Fetched, pct)
}

// loopback resolves every name under domain to 127.0.0.1, where the
// simulated web listens.
func loopback(domain string) dns.Resolver {
	return dns.ResolverFunc(func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == domain || strings.HasSuffix(host, "."+domain) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, fmt.Errorf("focused: %s is outside the simulated web", host)
	})
}
