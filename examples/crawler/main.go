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
// The output directory receives WARC files (warc/; a response whose
// payload was archived before is a revisit record, unless -no-revisits,
// and each complete file has a pywb CDXJ index beside it, which
// -reindex-warc DIR rebuilds from the files), the link log
// (links.tsv), page records (pages.jsonl), the index (index/), the crawl's
// state (state/), its settings (settings.json) and, at the end, the
// compressed web graph (graph/); the summary then prints the commands to
// run next on them (the connectivity server on graph/web.graph, the
// resume). Without -out only the web graph is kept, in a new temporary
// directory the summary names. Every page is committed to the state
// together with its records in those files, so a crawl stopped or killed
// at any instant continues with
//
//	crawler -out crawl -resume
//
// which reads the settings back (flags given with it override them: a
// larger -max-pages, say). -max-pages and -duration count the whole
// crawl, across resumes. Only one process at a time may use an output
// directory, and a new crawl refuses one that already holds output.
//
// A site behind a login is crawled by logging in first, keeping the
// session in a cookie jar; requests may carry extra headers and leave
// through an HTTP (CONNECT) or SOCKS5 proxy:
//
//	crawler -seeds https://intranet.example/docs/ -login-url https://intranet.example/login \
//		-login-form 'user=crawler&password=secret' -header 'Accept-Language: en' \
//		-proxy socks5://127.0.0.1:1080
//
// These flags are not saved with the settings (they may hold
// credentials): give them again with -resume.
//
// Ctrl-C (or SIGTERM) stops the crawl cleanly: the pages in flight are
// finished and committed, and the command says how to continue; a second
// Ctrl-C exits at once, which loses nothing either.
//
// A distributed crawl (IIR Figure 20.2) runs one process per node, each
// owning a share of the hosts; one of them may embed the NATS server:
//
//	crawler -nats-embed 127.0.0.1:4222 -node a -nodes a,b -seeds URL -out a
//	crawler -nats nats://127.0.0.1:4222 -node b -nodes a,b -seeds URL -out b
//
// On a NATS cluster of three servers (-nats URL,URL,URL), -replicas 3
// keeps every URL inbox on three of them, so losing a server loses
// nothing.
//
// With -lease the members are discovered instead of listed, and nodes may
// come and go during the crawl (docs/CLUSTER.md): a node that stops hands
// its shards over at once, one that dies is replaced after the lease, one
// that joins takes its share with the shards' queues:
//
//	crawler -nats-embed 127.0.0.1:4222 -node a -lease 5s -seeds URL -out a
//	crawler -nats nats://127.0.0.1:4222 -node c -lease 5s -seeds URL -out c
//
// Each process ends when the whole cluster has nothing left to do; the
// one embedding the server then waits (up to a minute, or until Ctrl-C)
// for the others to disconnect before it exits, since they need the
// server to end too. Ctrl-C or SIGTERM stops a node as it stops a single
// crawler (exit 0), and it tells the other nodes it left.
//
// Exit status: 0 when the crawl ran (to its end, to a limit, or to a
// clean stop on a signal), 1 when it failed (nothing could be fetched, the
// output could not be written, the output directory is in use), 2 for bad
// flags, 130 when a second signal cut the stop short.
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
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/cluster"
	"github.com/crawlkit/crawlkit/console"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/fetch/lang"
	"github.com/crawlkit/crawlkit/index"
)

func main() {
	ctx, stop := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		stopping.Store(true)
		fmt.Fprintln(os.Stderr, "\ncrawler: stopping: finishing the pages in flight (press Ctrl-C again to quit at once; nothing is lost either way)")
		stop()
		<-sigs
		fmt.Fprintln(os.Stderr, "crawler: quit at once; the crawl continues with -resume")
		os.Exit(130)
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// stopping is set when a signal asked the crawl to stop.
var stopping atomic.Bool

// dur is a time.Duration that reads and writes itself as "1m30s", in
// flags and in settings.json.
type dur time.Duration

func (d *dur) String() string { return time.Duration(*d).String() }

func (d *dur) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = dur(v)
	return nil
}

func (d dur) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *dur) UnmarshalText(b []byte) error { return d.Set(string(b)) }

// options are the parsed flags, and the settings saved in -out.
type options struct {
	Seeds          string        `json:"seeds,omitempty"`
	SeedsFile      string        `json:"seeds_file,omitempty"`
	Demo           bool          `json:"demo,omitempty"`
	DemoHosts      int           `json:"demo_hosts,omitempty"`
	DemoPages      int           `json:"demo_pages,omitempty"`
	DemoWeb        string        `json:"demo_web,omitempty"` // the demo web's address, kept for -resume
	MaxPages       int64         `json:"max_pages"`
	MaxDepth       int           `json:"max_depth"`
	Duration       dur           `json:"duration"`
	Workers        int           `json:"workers"`
	MinDelay       dur           `json:"min_delay"`
	DelayFactor    float64       `json:"delay_factor"`
	MaxDelay       dur           `json:"max_delay"`
	Agent          string        `json:"agent"`
	UserAgent      string        `json:"user_agent,omitempty"`
	Continuous     bool          `json:"continuous,omitempty"`
	DNSServer      string        `json:"dns,omitempty"`
	AllowPrivate   bool          `json:"allow_private,omitempty"`
	PerHost        int           `json:"max_per_host"`
	PerDomain      int           `json:"max_per_domain"`
	HostsPerDomain int           `json:"max_hosts_per_domain"`
	TrapAlike      int           `json:"trap_alike"`
	TrapHosts      int           `json:"trap_domain_hosts"`
	NoURLRules     bool          `json:"no_url_rules,omitempty"`
	NoRevisits     bool          `json:"no_revisits,omitempty"`
	Suffixes       string        `json:"private_suffixes,omitempty"`
	NATSURL        string        `json:"nats,omitempty"`
	NATSEmbed      string        `json:"nats_embed,omitempty"`
	Node           string        `json:"node,omitempty"`
	Nodes          string        `json:"nodes,omitempty"`
	DeadAfter      dur           `json:"dead_after,omitempty"`
	Sitemaps       bool          `json:"sitemaps"`
	Backoff        dur           `json:"backoff"`
	BackoffMax     dur           `json:"backoff_max"`
	Retries        int           `json:"retries"`
	HostRules      hostRuleFlags `json:"host_rules,omitempty"`
	PoliteKey      string        `json:"politeness_key,omitempty"`
	MainText       bool          `json:"main_text,omitempty"`
	DetectLang     bool          `json:"detect_lang,omitempty"`
	Canonical      string        `json:"canonical"`
	Replicas       int           `json:"replicas,omitempty"`
	Lease          dur           `json:"lease,omitempty"`
	HandoffGap     dur           `json:"handoff_gap,omitempty"`
	Render         string        `json:"render,omitempty"`
	RenderTabs     int           `json:"render_tabs,omitempty"`
	RenderTimeout  dur           `json:"render_timeout,omitempty"`
	Chromium       string        `json:"chromium,omitempty"`
	ThirdParty     bool          `json:"third_party,omitempty"`

	// Not saved: they are about this process, not the crawl.
	out     string
	resume  bool
	status  string
	quiet   bool
	reindex string
	// statusLinger keeps the console served after the crawl.
	statusLinger dur
	sess         sessionFlags // -cookies, -header, -proxy, -login-url, -login-form (session.go)
}

// usageError is a problem with the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// flagSet binds the flags to o.
func flagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("crawler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Seeds, "seeds", o.Seeds, "seed URLs, comma-separated")
	fs.StringVar(&o.SeedsFile, "seeds-file", o.SeedsFile, "file of seed URLs, one per line (# starts a comment)")
	fs.BoolVar(&o.Demo, "demo", o.Demo, "crawl a simulated web served in-process on 127.0.0.1 (no network)")
	fs.IntVar(&o.DemoHosts, "demo-hosts", o.DemoHosts, "with -demo: number of simulated hosts")
	fs.IntVar(&o.DemoPages, "demo-pages", o.DemoPages, "with -demo: mean pages per simulated host")
	fs.Int64Var(&o.MaxPages, "max-pages", o.MaxPages, "stop after this many pages in all, across resumes (0: no limit)")
	fs.IntVar(&o.MaxDepth, "max-depth", o.MaxDepth, "follow links at most this many hops from a seed (0: no limit)")
	fs.Var(&o.Duration, "duration", "stop after this long in all, across resumes (0: no limit; -demo: 50s)")
	fs.IntVar(&o.Workers, "workers", o.Workers, "number of fetching goroutines")
	fs.Var(&o.MinDelay, "min-delay", "least gap between two requests to a host")
	fs.Float64Var(&o.DelayFactor, "delay-factor", o.DelayFactor, "k: wait k × the last fetch time before contacting a host again")
	fs.Var(&o.MaxDelay, "max-delay", "cap on the gap between two requests to a host (Retry-After and Crawl-delay included)")
	fs.StringVar(&o.Agent, "agent", o.Agent, "product token matched against robots.txt user-agent lines (letters, '-', '_')")
	fs.StringVar(&o.UserAgent, "user-agent", o.UserAgent, "User-Agent header (default: crawlkit's, with a contact URL)")
	fs.StringVar(&o.out, "out", "", "output directory: WARC files, link log, page records, index, graph, the crawl's state")
	fs.BoolVar(&o.resume, "resume", false, "continue the crawl in -out with its saved settings (flags given override them)")
	fs.BoolVar(&o.Continuous, "continuous", o.Continuous, "keep re-fetching pages at their estimated change rate")
	fs.StringVar(&o.DNSServer, "dns", o.DNSServer, "use this nameserver (IP:PORT) instead of /etc/resolv.conf's")
	fs.BoolVar(&o.AllowPrivate, "allow-private", o.AllowPrivate, "permit loopback and private addresses (refused by default)")
	fs.StringVar(&o.status, "status", "", "serve a live status page and /metrics on this address (e.g. 127.0.0.1:8081)")
	fs.Var(&o.statusLinger, "status-linger", "with -status: keep serving the console this long after the crawl ends (Ctrl-C ends the wait)")
	fs.IntVar(&o.PerHost, "max-per-host", o.PerHost, "admit at most this many URLs per host (bounds spider traps; -1: no limit)")
	fs.IntVar(&o.PerDomain, "max-per-domain", o.PerDomain, "admit at most this many URLs per registrable domain (-1: no limit)")
	fs.IntVar(&o.HostsPerDomain, "max-hosts-per-domain", o.HostsPerDomain, "admit URLs of at most this many hosts per registrable domain (bounds subdomain explosions; -1: no limit)")
	fs.IntVar(&o.TrapAlike, "trap-alike", o.TrapAlike, "cut a host as a spider trap once it served more than this many pages of content seen before, and twice as many as new ones (-1: never)")
	fs.IntVar(&o.TrapHosts, "trap-domain-hosts", o.TrapHosts, "a registrable domain may have this many hosts, and one more per 16 pages of new content from them (bounds subdomain explosions; -1: no such rule)")
	fs.StringVar(&o.Suffixes, "private-suffixes", o.Suffixes, "comma-separated names under which each label is a site of its own, like blogspot.com (for the per-domain budgets)")
	fs.Var(&o.Backoff, "backoff", "a host that answers 429 or 503 without Retry-After is left alone this long, twice as long at the next time, and so on (0: retry only the URL)")
	fs.Var(&o.BackoffMax, "backoff-max", "the longest -backoff block (within -max-delay)")
	fs.IntVar(&o.Retries, "retries", o.Retries, "try a URL again this many times after a 429 or 503, a timeout or a dropped connection, or while its host's robots.txt fails that way (0: never)")
	fs.BoolVar(&o.MainText, "main-text", o.MainText, "index a page's main content only, without navigation, sidebars and footers (fetch.MainTextParser)")
	fs.BoolVar(&o.DetectLang, "detect-lang", o.DetectLang, "detect the language of pages that do not declare one (fetch/lang), for pages.jsonl and to index each page without its language's stop words")
	fs.StringVar(&o.PoliteKey, "politeness-key", o.PoliteKey, "what shares a politeness gap: host (default), domain (a registrable domain's hosts) or ip (the hosts of one server address)")
	fs.Var(&o.HostRules, "host-rule", "per host or domain: 'HOST|.DOMAIN[,delay=DUR][,max-pages=N][,max-domain-pages=N]' overrides -min-delay and the budgets there (repeatable)")
	fs.BoolVar(&o.NoURLRules, "no-url-rules", o.NoURLRules, "do not learn URL rewrite rules from duplicates (www. aliases, neutral parameters, index.html): fetch every URL")
	// Sitemaps and canonical URLs.
	fs.BoolVar(&o.Sitemaps, "sitemaps", o.Sitemaps, "read the sitemaps robots.txt names, or each host's /sitemap.xml, and queue their URLs (-sitemaps=false: links only)")
	fs.StringVar(&o.Canonical, "canonical", o.Canonical, "which rel=canonical to honour, an alias left out of the index and collapsed in the graph: domain (within the page's registrable domain), host, any, off")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line")
	fs.BoolVar(&o.NoRevisits, "no-revisits", o.NoRevisits, "archive every response in full, not a response whose payload was archived before as a WARC revisit record")
	fs.StringVar(&o.reindex, "reindex-warc", "", "rebuild the CDXJ index of every WARC file in this directory (e.g. OUT/warc, not in use by a crawl) from the files, and exit")
	fs.StringVar(&o.NATSURL, "nats", o.NATSURL, "join a distributed crawl through this NATS server (or comma-separated cluster URLs)")
	fs.StringVar(&o.NATSEmbed, "nats-embed", o.NATSEmbed, "run an embedded NATS server on this address (e.g. 127.0.0.1:4222) for other processes to join")
	fs.StringVar(&o.Node, "node", o.Node, "this process's node name in a distributed crawl")
	fs.StringVar(&o.Nodes, "nodes", o.Nodes, "all node names of a distributed crawl, comma-separated (the same list on every node)")
	fs.Var(&o.DeadAfter, "dead-after", "in a distributed crawl, stop waiting for a node away this long (0: wait for it forever)")
	fs.IntVar(&o.Replicas, "replicas", o.Replicas, "in a distributed crawl, keep the URL inboxes on this many NATS servers (3 on a cluster of 3 or more survives the loss of one; 0 or 1: one copy)")
	fs.Var(&o.Lease, "lease", "in a distributed crawl, discover the members instead of -nodes: a node silent this long is dead and its shards move to the others with their queues (e.g. 5s; 0: the static -nodes list)")
	fs.Var(&o.HandoffGap, "handoff-gap", "with -lease, wait this long after a shard's previous owner released it or died before contacting its hosts (default 1s)")
	// Rendering in headless Chromium (render.go).
	fs.StringVar(&o.Render, "render", o.Render, "run pages' scripts in headless Chromium before reading them: off, adaptive (pages with little text and scripts), always, hosts=H,H... or pattern=REGEXP")
	fs.IntVar(&o.RenderTabs, "render-tabs", o.RenderTabs, "with -render: browser tabs open at once")
	fs.Var(&o.RenderTimeout, "render-timeout", "with -render: a page's deadline in the browser")
	fs.StringVar(&o.Chromium, "chromium", o.Chromium, "with -render: the Chromium or Chrome binary (default: $CRAWLKIT_CHROMIUM, or chromium on $PATH)")
	fs.BoolVar(&o.ThirdParty, "third-party", o.ThirdParty, "with -render: let the browser request other hosts than the page's, each waiting for its host's turn (robots.txt and politeness hold)")
	o.sess.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: crawler -demo | -seeds URL[,URL...] [flags] | -out DIR -resume [flags]\n\nflags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// defaults returns the options of a crawl no flag changed.
func defaults() options {
	return options{DemoHosts: 800, DemoPages: 40, Workers: 64, DelayFactor: 10, MaxDelay: dur(time.Hour),
		Agent: "crawlkit", PerHost: 10000, PerDomain: 100000, HostsPerDomain: 1000, TrapAlike: 16, TrapHosts: 10,
		Sitemaps: true, Canonical: crawlkit.CanonicalSameDomain.String(),
		Backoff: dur(time.Minute), BackoffMax: dur(24 * time.Hour), Retries: 2,
		Render: "off", RenderTabs: 2, RenderTimeout: dur(15 * time.Second)}
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := defaults()
	if err := parse(flagSet(&o, stderr), args, stderr); err != nil {
		return nil, err
	}
	if o.resume && o.out != "" {
		// The saved settings first, then the flags given now on top.
		saved, err := loadSettings(o.out)
		if err != nil {
			return nil, err
		}
		saved.out, saved.resume, saved.status, saved.statusLinger, saved.quiet = o.out, true, o.status, o.statusLinger, o.quiet
		fs := flagSet(saved, stderr)
		fs.SetOutput(io.Discard)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		o = *saved
	}
	fs := flagSet(&options{}, io.Discard)
	_ = fs.Parse(args)
	if o.reindex != "" {
		if fs.NArg() > 0 || o.Demo || o.Seeds != "" || o.SeedsFile != "" || o.resume {
			return nil, usageError{"-reindex-warc only rebuilds indexes: give it alone"}
		}
		if st, err := os.Stat(o.reindex); err != nil || !st.IsDir() {
			return nil, usageError{fmt.Sprintf("-reindex-warc %s: not a directory", o.reindex)}
		}
		return &o, nil
	}
	switch {
	case fs.NArg() > 0:
		return nil, usageError{fmt.Sprintf("unexpected argument %q: seeds go in -seeds", fs.Arg(0))}
	case o.Demo && (o.Seeds != "" || o.SeedsFile != ""):
		return nil, usageError{"-demo crawls its own simulated web: drop -seeds/-seeds-file"}
	case !o.Demo && o.Seeds == "" && o.SeedsFile == "" && !o.resume:
		return nil, usageError{"nothing to crawl: give -seeds, -seeds-file, -resume or -demo"}
	case o.resume && o.out == "":
		return nil, usageError{"-resume needs the -out directory of the crawl to continue"}
	case o.Workers < 1:
		return nil, usageError{"-workers must be at least 1"}
	case o.MaxPages < 0 || o.MaxDepth < 0 || o.Duration < 0 || o.MinDelay < 0 || o.MaxDelay < 0 || o.DelayFactor < 0 || o.DeadAfter < 0 ||
		o.Backoff < 0 || o.BackoffMax < 0 || o.Replicas < 0 || o.Retries < 0:
		return nil, usageError{"limits and delays cannot be negative"}
	case o.PerHost < -1 || o.PerHost == 0 || o.PerDomain < -1 || o.PerDomain == 0 || o.HostsPerDomain < -1 || o.HostsPerDomain == 0:
		return nil, usageError{"-max-per-host, -max-per-domain and -max-hosts-per-domain take a positive number, or -1 for no limit"}
	case o.TrapHosts < -1 || o.TrapHosts == 0:
		return nil, usageError{"-trap-domain-hosts takes a positive number, or -1 for no such rule"}
	case o.TrapAlike < -1 || o.TrapAlike == 0:
		return nil, usageError{"-trap-alike takes a positive number, or -1 to never cut a host"}
	case o.DemoHosts < 1 || o.DemoPages < 1:
		return nil, usageError{"-demo-hosts and -demo-pages must be at least 1"}
	case !validAgent(o.Agent):
		return nil, usageError{fmt.Sprintf("-agent %q is not a robots.txt product token: use letters, '-' and '_' (RFC 9309 §2.2.1)", o.Agent)}
	case o.Lease < 0 || o.HandoffGap < 0:
		return nil, usageError{"-lease and -handoff-gap cannot be negative"}
	case (o.Lease > 0 || o.HandoffGap > 0) && o.NATSURL == "" && o.NATSEmbed == "":
		return nil, usageError{"-lease and -handoff-gap need -nats URL or -nats-embed ADDR"}
	case (o.NATSURL != "" || o.NATSEmbed != "") && o.Lease > 0 && o.Node == "":
		return nil, usageError{"a distributed crawl with -lease needs -node NAME"}
	case (o.NATSURL != "" || o.NATSEmbed != "") && o.Lease == 0 && (o.Node == "" || o.Nodes == ""):
		return nil, usageError{"a distributed crawl (-nats or -nats-embed) needs -node NAME and -nodes NAME,NAME,... (or -lease to discover the members)"}
	case o.Replicas > 5:
		return nil, usageError{"-replicas: JetStream keeps at most 5 copies of a stream"}
	case o.Replicas > 1 && o.Node == "":
		return nil, usageError{"-replicas is for a distributed crawl (-node, -nodes, -nats)"}
	case (o.Node != "" || o.Nodes != "") && o.NATSURL == "" && o.NATSEmbed == "":
		return nil, usageError{"-node and -nodes need -nats URL or -nats-embed ADDR"}
	case o.Node != "" && o.Lease == 0 && !slices.Contains(strings.Split(o.Nodes, ","), o.Node):
		return nil, usageError{fmt.Sprintf("-node %q is not in -nodes %q", o.Node, o.Nodes)}
	}
	if _, err := renderPolicy(o.Render); err != nil {
		return nil, usageError{err.Error()}
	}
	if o.RenderTabs < 1 || o.RenderTimeout <= 0 {
		return nil, usageError{"-render-tabs must be at least 1 and -render-timeout positive"}
	}
	if _, err := crawlkit.ParseCanonicalPolicy(o.Canonical); err != nil {
		return nil, usageError{fmt.Sprintf("-canonical %q: want domain, host, any or off", o.Canonical)}
	}
	if o.DNSServer != "" {
		if _, err := netip.ParseAddrPort(o.DNSServer); err != nil {
			return nil, usageError{fmt.Sprintf("-dns %q: want IP:PORT, e.g. 127.0.0.1:5353", o.DNSServer)}
		}
	}
	if strings.ContainsFunc(o.UserAgent, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return nil, usageError{fmt.Sprintf("-user-agent %q: a header value cannot hold control characters", o.UserAgent)}
	}
	for _, sfx := range strings.Split(o.Suffixes, ",") {
		if sfx = strings.TrimSpace(sfx); strings.HasPrefix(sfx, ".") || strings.HasSuffix(sfx, ".") || strings.ContainsAny(sfx, ":/ ") {
			return nil, usageError{fmt.Sprintf("-private-suffixes: %q is not a domain name like blogspot.com", sfx)}
		}
	}
	if o.Nodes != "" && slices.Contains(strings.Split(o.Nodes, ","), "") {
		return nil, usageError{fmt.Sprintf("-nodes %q has an empty name", o.Nodes)}
	}
	if err := o.sess.check(); err != nil {
		return nil, err
	}
	if o.Backoff > 0 && o.BackoffMax > 0 && o.BackoffMax < o.Backoff {
		return nil, usageError{fmt.Sprintf("-backoff-max %v is shorter than -backoff %v", time.Duration(o.BackoffMax), time.Duration(o.Backoff))}
	}
	if err := o.HostRules.check(); err != nil {
		return nil, err
	}
	if o.PoliteKey != "" {
		if _, err := crawlkit.ParsePolitenessKey(o.PoliteKey); err != nil {
			return nil, usageError{fmt.Sprintf("-politeness-key %q: want host, domain or ip", o.PoliteKey)}
		}
	}
	return &o, nil
}

// parse parses args into fs. A flag error comes back as one usageError
// line; only -h prints the usage, to stderr.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	usage := fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		usage()
		return err
	}
	if err != nil {
		return usageError{err.Error() + " (-h lists the flags)"}
	}
	return nil
}

// validAgent reports whether a is a robots.txt product token.
func validAgent(a string) bool {
	for i := 0; i < len(a); i++ {
		if c := a[i] | 0x20; (c < 'a' || c > 'z') && a[i] != '-' && a[i] != '_' {
			return false
		}
	}
	return a != ""
}

// seedList gathers -seeds and -seeds-file, checking each is an absolute
// http(s) URL.
func seedList(o *options) ([]string, error) {
	var raw []string
	for _, s := range strings.Split(o.Seeds, ",") {
		if s = strings.TrimSpace(s); s != "" {
			raw = append(raw, s)
		}
	}
	if o.SeedsFile != "" {
		b, err := os.ReadFile(o.SeedsFile)
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
	if len(raw) == 0 && !o.Demo && !o.resume {
		where := fmt.Sprintf("-seeds %q", o.Seeds)
		if o.SeedsFile != "" {
			where = "-seeds-file " + o.SeedsFile
		}
		return nil, usageError{where + " holds no URL: give at least one http(s) seed"}
	}
	return raw, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "crawler:", err)
		return 2
	}
	do := crawl
	if o.reindex != "" {
		do = reindex
	}
	if err := do(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "crawler:", err)
		var ue usageError
		if errors.As(err, &ue) {
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
		Seeds:             seeds,
		Workers:           o.Workers,
		Agent:             o.Agent,
		UserAgent:         o.UserAgent,
		AllowPrivate:      o.AllowPrivate,
		MaxPages:          o.MaxPages,
		MaxDepth:          o.MaxDepth,
		MaxDuration:       time.Duration(o.Duration),
		MaxPagesPerHost:   o.PerHost,
		MaxPagesPerDomain: o.PerDomain,
		MaxHostsPerDomain: o.HostsPerDomain,
		Traps:             &crawlkit.TrapOptions{AlikePages: o.TrapAlike, DomainHosts: o.TrapHosts},
		Backoff:           backoffOptions(o),
		MaxRetries:        maxRetries(o),
		HostRules:         o.HostRules.rules(),
		PolitenessKey:     politenessKey(o),
		Parser:            parserFor(o),
		NoURLRules:        o.NoURLRules,
		NoSitemaps:        !o.Sitemaps,
		MinDelay:          time.Duration(o.MinDelay),
		DelayFactor:       o.DelayFactor,
		MaxDelay:          time.Duration(o.MaxDelay),
		Continuous:        o.Continuous,
		Logger:            logger,
	}
	if o.DelayFactor == 0 {
		cfg.DelayFactor = -1 // the flag's 0 means no gap; Config's 0 means the default
	}
	cfg.Canonicals, _ = crawlkit.ParseCanonicalPolicy(o.Canonical) // checked by parseFlags
	for _, sfx := range strings.Split(o.Suffixes, ",") {
		if sfx = strings.TrimSpace(sfx); sfx != "" {
			cfg.PrivateSuffixes = append(cfg.PrivateSuffixes, strings.ToLower(sfx))
		}
	}

	// The output directory first: it is locked before anything is
	// fetched, and it decides the demo web's address on a resume.
	out, err := openOutput(o)
	if err != nil {
		return err
	}
	if out != nil {
		defer out.Close()
	}

	var demo *demoWeb
	if o.Demo {
		demo, err = startDemo(o)
		if err != nil {
			return err
		}
		defer demo.Close()
		cfg.Seeds = demo.web.Seeds()
		cfg.AllowPrivate = true
		// Each simulated site is a registrable domain of its own, as
		// sites on the web are.
		cfg.PrivateSuffixes = append(cfg.PrivateSuffixes, demo.web.Domain())
		if o.PerHost == defaults().PerHost {
			// The default budget is for the real web; here no real host
			// has more than demoMaxPages (nor than the shop's pages, when
			// the script hosts are served), so a trap stops at twice that.
			most := demoMaxPages(o)
			if demo.web.Products() != nil {
				most = max(most, 1+fetchtest.ShopCategories+fetchtest.ShopProducts, fetchtest.AppPages)
			}
			cfg.MaxPagesPerHost = 2 * most
		}
		if o.Duration == 0 {
			cfg.MaxDuration = 50 * time.Second
		}
		ordinary := len(demo.web.OrdinaryHosts())
		fmt.Fprintf(stdout, "demo: simulated web of %d hosts (+%d special: traps, mirrors, redirects, statuses, encodings) and %d pages on %s, DNS on %s\n",
			ordinary, len(demo.web.Hosts())-ordinary, len(demo.web.Pages()), demo.web.Addr(), demo.dns.Addr())
		o.DNSServer = demo.dns.Addr()
		o.DemoWeb = demo.web.Addr()
	}
	if out != nil {
		if err := out.saveSettings(o); err != nil {
			return err
		}
	}
	if o.DNSServer != "" {
		r, err := dns.New(&dns.Options{Nameservers: []string{o.DNSServer}, Timeout: 500 * time.Millisecond, Attempts: 3})
		if err != nil {
			return err
		}
		defer r.Close()
		cfg.Resolver = r
	}

	var searcher index.Searcher
	var graphDir string
	keptGraph := false // without -out: the graph was built, keep it
	titles := &titleSink{}
	if out != nil {
		if err := out.configure(&cfg, o); err != nil {
			return err
		}
		searcher, graphDir = out.index, out.dir
	} else {
		// Without -out the link graph and the index are still built, for
		// the summary. The graph, a few bits a link, is kept in a
		// directory of its own that the summary names, for the next
		// command to open; the link log it is built from and the index,
		// in memory, go.
		if graphDir, err = os.MkdirTemp("", "crawlkit-graph-"); err != nil {
			return err
		}
		defer func() {
			if keptGraph {
				os.Remove(filepath.Join(graphDir, "links.tsv"))
			} else {
				os.RemoveAll(graphDir)
			}
		}()
		lf, err := os.Create(filepath.Join(graphDir, "links.tsv"))
		if err != nil {
			return err
		}
		defer lf.Close()
		shard := index.NewShard(&index.ShardOptions{Analyzer: analyzerFor(o)})
		cfg.Sinks = append(cfg.Sinks, crawlkit.NewLinkLog(lf), crawlkit.IndexSink{Shard: shard})
		searcher = shard
	}
	cfg.Sinks = append(cfg.Sinks, titles)

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
	cfg.Progress = progress.update

	var node *cluster.Node
	if o.Node != "" {
		nopts := &cluster.Options{
			Name: o.Node, Nodes: strings.Split(o.Nodes, ","),
			NATSURL: o.NATSURL, EmbedAddr: o.NATSEmbed, Index: searcher, DeadAfter: time.Duration(o.DeadAfter),
			NATS:  cluster.NATSOptions{Replicas: o.Replicas},
			Lease: time.Duration(o.Lease), HandoffGap: time.Duration(o.HandoffGap),
		}
		if out != nil {
			// The node's share of the content fingerprints survives a
			// restart with the rest of the crawl.
			nopts.ContentLog = filepath.Join(out.dir, "content.log")
			if o.Lease > 0 {
				// The node's copy of its shards' state and its frontier
				// on disk: bounded memory however many URLs are pending.
				nopts.StateDir = filepath.Join(out.dir, "shards")
			}
		}
		node, err = cluster.NewNode(ctx, nopts)
		if err != nil {
			return fmt.Errorf("joining the cluster: %w", err)
		}
		// Shutdown, not Close: a node that embeds the NATS server waits
		// there for the others to leave, and a stop signal ends the wait.
		defer node.Shutdown(ctx)
		node.Configure(&cfg)
		if o.Lease > 0 {
			fmt.Fprintf(stdout, "node %s (members discovered, lease %v), NATS %s\n", o.Node, time.Duration(o.Lease), node.ClientURL())
		} else {
			fmt.Fprintf(stdout, "node %s of %s, NATS %s\n", o.Node, o.Nodes, node.ClientURL())
		}
	}

	if o.sess.enabled() {
		sc, err := o.sess.apply(ctx, &cfg, stdout)
		if err != nil {
			return err
		}
		defer sc.Close()
	}

	rend, err := setRender(&cfg, o)
	if err != nil {
		return err
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
	// The console's stop control stops the crawl as a first Ctrl-C does.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	if status != nil {
		status.attach(c, &console.Options{Settings: consoleSettings(o), Controls: true, Stop: stopRun})
		// The console outlives the crawl: it shows the final figures
		// while the graph is built, and for -status-linger after.
		defer lingerStatus(ctx, stdout, status, time.Duration(o.statusLinger))
	}
	stats, err := c.Run(runCtx)
	progress.done(stats)
	if err != nil {
		if errors.Is(err, crawlkit.ErrNoSeeds) && o.resume {
			return errors.New("nothing left to crawl in " + o.out)
		}
		if errors.Is(err, crawlkit.ErrCorruptProgress) && o.out != "" {
			return fmt.Errorf("the crawl state in %s: %w", filepath.Join(o.out, "state"), err)
		}
		return err
	}
	fmt.Fprintf(stdout, "\n%s", stats.Summary())
	rend.report(stdout, stats)
	if err := writeRules(stdout, c, out); err != nil {
		return err
	}
	if stopping.Load() || runCtx.Err() != nil {
		// A stop asked for by a signal: the pages in flight were
		// committed; the graph is built when the crawl ends.
		if out != nil {
			fmt.Fprintf(stdout, "\nstopped; every page so far is saved. Continue with:\n  %s -out %s -resume\n", commandName("crawler"), o.out)
		} else {
			fmt.Fprintln(stdout, "\nstopped (without -out, nothing was kept to resume from)")
		}
		return nil
	}
	if stats.Pages() == 0 && node == nil {
		return fmt.Errorf("no page could be fetched (%d fetch errors, %d robots denials): check the seeds, -dns and -allow-private", stats.Outcomes[crawlkit.FetchError], stats.Outcomes[crawlkit.RobotsDenied])
	}

	found, err := searchSummary(context.WithoutCancel(ctx), searcher, titles.titles)
	if err != nil {
		return err
	}
	// The index and the crawl's state are done with: their caches go
	// before the graph is built, so that the process's peak memory is
	// the crawl's, not the sum of both.
	if out != nil {
		if err := out.closeAll(); err != nil {
			return err
		}
	}
	debug.FreeOSMemory()
	// The graph is built in a fraction of the crawl's time: a tighter
	// garbage collector (the heap may outgrow its live part by a quarter,
	// not by as much again) trades some of that time for a lower peak.
	gc := debug.SetGCPercent(25)
	linksPath, graphBase := filepath.Join(graphDir, "links.tsv"), filepath.Join(graphDir, "graph", "web")
	err = buildGraph(linksPath, graphBase)
	debug.SetGCPercent(gc)
	if err != nil {
		return err
	}
	if err := summarizeGraph(stdout, graphBase); err != nil {
		return err
	}
	keptGraph = out == nil
	fmt.Fprint(stdout, found)
	if demo != nil && !o.resume {
		// The simulated web's request log holds this run's requests
		// only: the check means something for a demo crawled in one.
		demo.check(stdout, o.Agent, rend != nil)
	}
	pending := 0
	if out != nil && stats.Frontier.Pending() > 0 {
		pending = stats.Frontier.Pending()
		fmt.Fprintf(stdout, "\n%d URLs are still pending (%s).\n", pending, c.StopReason())
	}
	nextCommands(stdout, o, graphBase, pending > 0)
	return nil
}

// writeRules reports the URL rewrite rules the crawl learned, and writes
// them to url-rules.txt in the output directory, one a line.
func writeRules(stdout io.Writer, c *crawlkit.Crawler, out *output) error {
	l := c.URLRules()
	if l == nil {
		return nil
	}
	st := l.Stats()
	if st.Rules == 0 {
		return nil
	}
	fmt.Fprintf(stdout, "URL rules: %d active, %d withdrawn; %d URLs parked as aliases\n", st.Active, st.Withdrawn+st.Refuted, st.Parked)
	if out == nil {
		return nil
	}
	var b strings.Builder
	for _, r := range l.Rules() {
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(out.dir, "url-rules.txt"), []byte(b.String()), 0o644)
}

// maxRetries returns Config.MaxRetries for -retries, whose 0 means
// never (Config's 0 means the default).
func maxRetries(o *options) int {
	if o.Retries == 0 {
		return -1
	}
	return o.Retries
}

// backoffOptions returns the crawl's back-off from -backoff and
// -backoff-max: -backoff 0 turns it off.
func backoffOptions(o *options) *crawlkit.BackoffOptions {
	if o.Backoff == 0 {
		return &crawlkit.BackoffOptions{Base: -1}
	}
	return &crawlkit.BackoffOptions{Base: time.Duration(o.Backoff), Max: time.Duration(o.BackoffMax)}
}

// politenessKey returns the crawl's -politeness-key (checked by
// parseFlags; "" is the default, host).
func politenessKey(o *options) crawlkit.PolitenessKey {
	k, _ := crawlkit.ParsePolitenessKey(o.PoliteKey)
	return k
}

// parserFor returns the crawl's parser: nil (crawlkit's default) unless
// -main-text or -detect-lang wraps it.
func parserFor(o *options) fetch.Parser {
	if !o.MainText && !o.DetectLang {
		return nil
	}
	var p fetch.Parser = &fetch.Registry{}
	if o.MainText {
		p = &fetch.MainTextParser{Parser: p}
	}
	if o.DetectLang {
		p = &lang.Parser{Parser: p}
	}
	return p
}

// analyzerFor returns the index's analyzer: with -detect-lang, each page
// loses its language's stop words (index.StopWords), and queries the
// stop words of every language; otherwise the zero Analyzer.
func analyzerFor(o *options) *index.Analyzer {
	if !o.DetectLang {
		return nil
	}
	return &index.Analyzer{StopByLang: index.StopWords}
}
