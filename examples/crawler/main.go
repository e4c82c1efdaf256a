// Command crawler is crawlkit's bundled web crawler: the Mercator loop of
// IIR chapter 20 with WARC output, a link graph, an index and a status page.
//
// The quickest start crawls a simulated web in-process (no network):
//
//	go run ./examples/crawler -demo
//
// A real crawl names its seeds and an output directory:
//
//	go run ./examples/crawler -seeds https://example.com/ -out crawl -max-pages 1000
//
// The output directory receives WARC files (warc/), the link log
// (links.tsv), page records (pages.jsonl), the compressed web graph
// (graph/), the index (index.bin) and the crawl's journal (checkpoint/),
// from which -resume continues a crawl that was stopped or killed.
//
// A distributed crawl (IIR Figure 20.2) runs one process per node, each
// owning a share of the hosts; one of them may embed the NATS server:
//
//	crawler -nats-embed 127.0.0.1:4222 -node a -nodes a,b -seeds URL -out a
//	crawler -nats nats://127.0.0.1:4222 -node b -nodes a,b -seeds URL -out b
//
// Each process ends when the whole cluster has nothing left to do; the
// one embedding the server then waits (up to a minute) for the others to
// disconnect before it exits, since they need the server to end too.
//
// Exit status: 0 when the crawl ran, 1 when it failed (nothing could be
// fetched, the output could not be written), 2 for bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/cluster"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/warc"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// options are the parsed flags.
type options struct {
	seeds        string
	seedsFile    string
	demo         bool
	demoHosts    int
	demoPages    int
	maxPages     int64
	maxDepth     int
	duration     time.Duration
	workers      int
	minDelay     time.Duration
	delayFactor  float64
	maxDelay     time.Duration
	agent        string
	userAgent    string
	out          string
	resume       bool
	continuous   bool
	dnsServer    string
	allowPrivate bool
	status       string
	perHost      int
	quiet        bool
	natsURL      string
	natsEmbed    string
	node         string
	nodes        string
	deadAfter    time.Duration
}

// usageError is a problem with the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("crawler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.seeds, "seeds", "", "seed URLs, comma-separated")
	fs.StringVar(&o.seedsFile, "seeds-file", "", "file of seed URLs, one per line (# starts a comment)")
	fs.BoolVar(&o.demo, "demo", false, "crawl a simulated web served in-process on 127.0.0.1 (no network)")
	fs.IntVar(&o.demoHosts, "demo-hosts", 800, "with -demo: number of simulated hosts")
	fs.IntVar(&o.demoPages, "demo-pages", 40, "with -demo: mean pages per simulated host")
	fs.Int64Var(&o.maxPages, "max-pages", 0, "stop after this many pages (0: no limit)")
	fs.IntVar(&o.maxDepth, "max-depth", 0, "follow links at most this many hops from a seed (0: no limit)")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (0: no limit; -demo: 50s)")
	fs.IntVar(&o.workers, "workers", 64, "number of fetching goroutines")
	fs.DurationVar(&o.minDelay, "min-delay", 0, "least gap between two requests to a host")
	fs.Float64Var(&o.delayFactor, "delay-factor", 10, "k: wait k × the last fetch time before contacting a host again")
	fs.DurationVar(&o.maxDelay, "max-delay", time.Minute, "cap on the gap between two requests to a host")
	fs.StringVar(&o.agent, "agent", "crawlkit", "product token matched against robots.txt user-agent lines")
	fs.StringVar(&o.userAgent, "user-agent", "", "User-Agent header (default: crawlkit's, with a contact URL)")
	fs.StringVar(&o.out, "out", "", "output directory: WARC files, link graph, index, checkpoint")
	fs.BoolVar(&o.resume, "resume", false, "continue the crawl journaled in -out")
	fs.BoolVar(&o.continuous, "continuous", false, "keep re-fetching pages at their estimated change rate")
	fs.StringVar(&o.dnsServer, "dns", "", "use this nameserver (HOST:PORT) instead of /etc/resolv.conf's")
	fs.BoolVar(&o.allowPrivate, "allow-private", false, "permit loopback and private addresses (refused by default)")
	fs.StringVar(&o.status, "status", "", "serve a live status page and /metrics on this address (e.g. 127.0.0.1:8081)")
	fs.IntVar(&o.perHost, "max-per-host", 10000, "queue at most this many URLs per host (bounds spider traps)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line")
	fs.StringVar(&o.natsURL, "nats", "", "join a distributed crawl through this NATS server (or comma-separated cluster URLs)")
	fs.StringVar(&o.natsEmbed, "nats-embed", "", "run an embedded NATS server on this address (e.g. 127.0.0.1:4222) for other processes to join")
	fs.StringVar(&o.node, "node", "", "this process's node name in a distributed crawl")
	fs.StringVar(&o.nodes, "nodes", "", "all node names of a distributed crawl, comma-separated (the same list on every node)")
	fs.DurationVar(&o.deadAfter, "dead-after", 0, "in a distributed crawl, stop waiting for a node away this long (0: wait for it forever)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: crawler -demo | -seeds URL[,URL...] [flags]\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, usageError{fmt.Sprintf("unexpected argument %q: seeds go in -seeds", fs.Arg(0))}
	case o.demo && (o.seeds != "" || o.seedsFile != ""):
		return nil, usageError{"-demo crawls its own simulated web: drop -seeds/-seeds-file"}
	case !o.demo && o.seeds == "" && o.seedsFile == "" && !o.resume:
		return nil, usageError{"nothing to crawl: give -seeds, -seeds-file, -resume or -demo"}
	case o.resume && o.out == "":
		return nil, usageError{"-resume needs the -out directory of the crawl to continue"}
	case o.workers < 1:
		return nil, usageError{"-workers must be at least 1"}
	case o.maxPages < 0 || o.maxDepth < 0 || o.duration < 0 || o.minDelay < 0 || o.maxDelay < 0 || o.delayFactor < 0:
		return nil, usageError{"limits and delays cannot be negative"}
	case o.demo && (o.demoHosts < 1 || o.demoPages < 1):
		return nil, usageError{"-demo-hosts and -demo-pages must be at least 1"}
	case (o.natsURL != "" || o.natsEmbed != "") && (o.node == "" || o.nodes == ""):
		return nil, usageError{"a distributed crawl (-nats or -nats-embed) needs -node NAME and -nodes NAME,NAME,..."}
	case (o.node != "" || o.nodes != "") && o.natsURL == "" && o.natsEmbed == "":
		return nil, usageError{"-node and -nodes need -nats URL or -nats-embed ADDR"}
	case o.node != "" && !slices.Contains(strings.Split(o.nodes, ","), o.node):
		return nil, usageError{fmt.Sprintf("-node %q is not in -nodes %q", o.node, o.nodes)}
	}
	if o.dnsServer != "" {
		if _, err := netip.ParseAddrPort(o.dnsServer); err != nil {
			return nil, usageError{fmt.Sprintf("-dns %q: want IP:PORT, e.g. 127.0.0.1:5353", o.dnsServer)}
		}
	}
	return o, nil
}

// seedList gathers -seeds and -seeds-file, checking each is an absolute
// http(s) URL.
func seedList(o *options) ([]string, error) {
	var raw []string
	for _, s := range strings.Split(o.seeds, ",") {
		if s = strings.TrimSpace(s); s != "" {
			raw = append(raw, s)
		}
	}
	if o.seedsFile != "" {
		b, err := os.ReadFile(o.seedsFile)
		if err != nil {
			return nil, usageError{fmt.Sprintf("-seeds-file: %v", err)}
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				raw = append(raw, line)
			}
		}
	}
	for _, s := range raw {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usageError{fmt.Sprintf("seed %q is not an absolute http(s) URL", s)}
		}
	}
	return raw, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if _, ok := err.(usageError); ok {
			fmt.Fprintln(stderr, "crawler:", err)
		}
		return 2
	}
	if err := crawl(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "crawler:", err)
		if _, ok := err.(usageError); ok {
			return 2
		}
		return 1
	}
	return 0
}

// crawl runs one crawl as the options say.
func crawl(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	seeds, err := seedList(o)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := crawlkit.Config{
		Seeds:           seeds,
		Workers:         o.workers,
		Agent:           o.agent,
		UserAgent:       o.userAgent,
		AllowPrivate:    o.allowPrivate,
		MaxPages:        o.maxPages,
		MaxDepth:        o.maxDepth,
		MaxDuration:     o.duration,
		MaxPagesPerHost: o.perHost,
		MinDelay:        o.minDelay,
		DelayFactor:     o.delayFactor,
		MaxDelay:        o.maxDelay,
		Continuous:      o.continuous,
		Logger:          logger,
	}
	if o.delayFactor == 0 {
		cfg.DelayFactor = -1 // the flag's 0 means no gap; Config's 0 means the default
	}

	var demo *demoWeb
	if o.demo {
		demo, err = startDemo(o)
		if err != nil {
			return err
		}
		defer demo.Close()
		cfg.Seeds = demo.web.Seeds()
		cfg.AllowPrivate = true
		if o.perHost == 10000 {
			// The default budget is for the real web; here no real host
			// has more than demoMaxPages, so a trap stops at twice that.
			cfg.MaxPagesPerHost = 2 * demoMaxPages(o)
		}
		if o.duration == 0 {
			cfg.MaxDuration = 50 * time.Second
		}
		fmt.Fprintf(stdout, "demo: simulated web of %d hosts and %d pages on %s, DNS on %s\n",
			len(demo.web.Hosts()), len(demo.web.Pages()), demo.web.Addr(), demo.dns.Addr())
		o.dnsServer = demo.dns.Addr()
	}
	if o.dnsServer != "" {
		r, err := dns.New(&dns.Options{Nameservers: []string{o.dnsServer}, Timeout: 500 * time.Millisecond, Attempts: 3})
		if err != nil {
			return err
		}
		defer r.Close()
		cfg.Resolver = r
	}

	out, err := openOutput(o, &cfg)
	if err != nil {
		return err
	}
	if out != nil {
		defer out.Close()
	}
	shard := index.NewShard(index.ShardOptions{})
	if out != nil && o.resume {
		if err := out.loadIndex(shard); err != nil {
			return err
		}
	}
	titles := &titleSink{m: map[string]string{}}
	cfg.Sinks = append(cfg.Sinks, crawlkit.IndexSink{Shard: shard}, titles)
	workDir := ""
	if out == nil {
		// Without -out the link graph is still built, in a temporary
		// directory, for the summary.
		if workDir, err = os.MkdirTemp("", "crawlkit-"); err != nil {
			return err
		}
		defer os.RemoveAll(workDir)
		lf, err := os.Create(filepath.Join(workDir, "links.tsv"))
		if err != nil {
			return err
		}
		cfg.Sinks = append(cfg.Sinks, crawlkit.NewLinkLog(lf))
	}

	progress := newProgress(stderr, o.quiet)
	var status *statusServer
	if o.status != "" {
		status, err = startStatus(o.status)
		if err != nil {
			return usageError{fmt.Sprintf("-status %s: %v", o.status, err)}
		}
		defer status.Close()
		fmt.Fprintf(stdout, "status page: http://%s/\n", status.Addr())
	}
	cfg.ProgressInterval = time.Second
	cfg.Progress = func(s crawlkit.Stats) {
		progress.update(s)
		if status != nil {
			status.record(s)
		}
	}

	var node *cluster.Node
	if o.node != "" {
		node, err = cluster.NewNode(ctx, cluster.Options{
			Name: o.node, Nodes: strings.Split(o.nodes, ","),
			NATSURL: o.natsURL, EmbedAddr: o.natsEmbed, Index: shard, DeadAfter: o.deadAfter,
		})
		if err != nil {
			return fmt.Errorf("joining the cluster: %w", err)
		}
		defer node.Close()
		node.Configure(&cfg)
		fmt.Fprintf(stdout, "node %s of %s, NATS %s\n", o.node, o.nodes, node.ClientURL())
	}

	c, err := crawlkit.New(cfg)
	if err != nil {
		return err
	}
	if node != nil {
		// Start consumes the URLs other nodes send to this one; without
		// it Run would never see the cluster idle.
		if err := node.Start(ctx, c); err != nil {
			return fmt.Errorf("joining the cluster: %w", err)
		}
	}
	if status != nil {
		status.stats = c.Stats
	}
	stats, err := c.Run(ctx)
	progress.done(stats)
	if status != nil {
		status.record(stats)
	}
	if err != nil {
		if errors.Is(err, crawlkit.ErrNoSeeds) && o.resume {
			return errors.New("nothing left to crawl in " + o.out)
		}
		return err
	}
	fmt.Fprintf(stdout, "\n%s", stats.Summary())
	if stats.Pages() == 0 && node == nil {
		return fmt.Errorf("no page could be fetched (%d fetch errors, %d robots denials): check the seeds, -dns and -allow-private", stats.Outcomes[crawlkit.FetchError], stats.Outcomes[crawlkit.RobotsDenied])
	}

	linksPath, graphBase := filepath.Join(workDir, "links.tsv"), filepath.Join(workDir, "web")
	if out != nil {
		if err := out.finish(shard); err != nil {
			return err
		}
		linksPath, graphBase = out.linksPath, filepath.Join(out.dir, "graph", "web")
	}
	if err := buildGraph(linksPath, graphBase); err != nil {
		return err
	}
	if err := summarize(ctx, stdout, graphBase, shard, titles.m); err != nil {
		return err
	}
	if demo != nil {
		demo.check(stdout, o.agent)
	}
	return nil
}

// output is the -out directory's files.
type output struct {
	dir       string
	linksPath string
	warc      *crawlkit.WARCSink
	linkLog   *crawlkit.LinkLog
	pages     *crawlkit.JSONLines
}

func openOutput(o *options, cfg *crawlkit.Config) (*output, error) {
	if o.out == "" {
		return nil, nil
	}
	ckpt := filepath.Join(o.out, "checkpoint")
	_, err := os.Stat(filepath.Join(ckpt, "checkpoint.json"))
	_, jerr := os.Stat(filepath.Join(ckpt, "journal.0"))
	exists := err == nil || jerr == nil
	switch {
	case exists && !o.resume:
		return nil, usageError{fmt.Sprintf("%s already holds a crawl: pass -resume to continue it, or choose another -out", o.out)}
	case !exists && o.resume:
		return nil, usageError{fmt.Sprintf("%s holds no crawl to resume", o.out)}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create -out directory: %w", err)
	}
	probe := filepath.Join(o.out, ".write-test")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		return nil, fmt.Errorf("-out directory %s is not writable: %w", o.out, err)
	}
	os.Remove(probe)

	out := &output{dir: o.out, linksPath: filepath.Join(o.out, "links.tsv")}
	out.warc, err = crawlkit.NewWARCSink(warc.WriterOptions{Dir: filepath.Join(o.out, "warc"), MaxFileSize: 256 << 20})
	if err != nil {
		return nil, err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	lf, err := os.OpenFile(out.linksPath, flags, 0o644)
	if err != nil {
		return nil, err
	}
	out.linkLog = crawlkit.NewLinkLog(lf)
	pf, err := os.OpenFile(filepath.Join(o.out, "pages.jsonl"), flags, 0o644)
	if err != nil {
		lf.Close()
		return nil, err
	}
	out.pages = crawlkit.NewJSONLines(pf)
	cfg.Sinks = append(cfg.Sinks, out.warc, out.linkLog, out.pages)
	cfg.CheckpointDir = ckpt
	cfg.CheckpointInterval = 10 * time.Second
	return out, nil
}

func (out *output) loadIndex(shard *index.Shard) error {
	f, err := os.Open(filepath.Join(out.dir, "index.bin"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := shard.ReadFrom(f); err != nil {
		return fmt.Errorf("index.bin: %w", err)
	}
	return nil
}

// finish writes the index; the sinks were closed by Run.
func (out *output) finish(shard *index.Shard) error {
	path := filepath.Join(out.dir, "index.bin")
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if _, err := shard.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// Close does nothing: the sinks are closed by the crawler's Run.
func (out *output) Close() error { return nil }

// titleSink remembers page titles for the summary's sample query.
type titleSink struct {
	mu sync.Mutex
	m  map[string]string
}

func (t *titleSink) Write(_ context.Context, p *crawlkit.Page) error {
	if p.Document != nil && p.Document.Title != "" {
		t.mu.Lock()
		t.m[p.URL] = p.Document.Title
		t.mu.Unlock()
	}
	return nil
}

func (t *titleSink) Close() error { return nil }
