package crawlkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/dedup/dust"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Config configures a Crawler: one field per module of the crawl loop, each
// nil field meaning the default implementation, and the crawl's limits and
// politeness. Every field's default is given in its comment.
type Config struct {
	// Seeds are the URLs the crawl starts from. Required unless the crawl
	// resumes a State that has URLs pending.
	Seeds []string

	// State keeps what must survive the crawl: pending URLs, the URL-seen
	// set, per-host and per-domain records, counters and the durable
	// sinks' positions (see State). Package crawldb keeps it on disk, so
	// a crawl killed at any instant resumes with Run on a new Crawler;
	// MemState keeps it in memory. Default nil: an in-memory state that
	// keeps no pending URLs and cannot be resumed.
	State State

	// Fetcher fetches pages. Default: fetch.NewHTTP with Resolver,
	// UserAgent and AllowPrivate (New refuses the last two with a Fetcher
	// of your own).
	Fetcher fetch.Fetcher
	// WrapFetcher, if set, wraps the default Fetcher, which keeps its
	// resolver, private-address guard and archive settings: a rendering
	// fetcher (package fetch/render), a cache. The result is closed with
	// the crawl if it is an io.Closer. Not with Fetcher.
	WrapFetcher func(fetch.Fetcher) (fetch.Fetcher, error)
	// Subrequests governs the requests a fetch.Gated Fetcher makes on
	// its own on the way to a page: robots.txt always, other hosts only
	// if allowed, each waiting for its host's turn.
	Subrequests SubrequestOptions
	// Parser extracts text and links. Default: &fetch.Registry{}, which
	// picks the parser by media type: HTML, sitemaps, RSS and Atom feeds.
	Parser fetch.Parser
	// Resolver resolves host names for the default Fetcher, and is the
	// resolver the crawl prefetches the names of queued hosts into when
	// it is a dns.Prefetcher (IIR §20.2.2), with any Fetcher. Default,
	// with the default Fetcher: the caching resolver of package dns over
	// the system's nameservers.
	Resolver dns.Resolver
	// Robots answers robots.txt questions. Default: a robots.Cache that
	// fetches through the crawl's Fetcher as Agent.
	Robots *robots.Cache
	// Frontier hands out URLs politely. Default: frontier.NewMercator with
	// 3 × Workers back queues, Prioritizer and the politeness fields
	// below, over the State's queue store when it has one (QueueStorer).
	Frontier frontier.Frontier
	// ContentSeen is the duplicate-content test. Default: the State's
	// (ContentStorer), else dedup.NewContent (exact fingerprints and
	// MinHash near-duplicates at Jaccard 0.8) in memory.
	ContentSeen dedup.ContentSeen
	// Filters decide which links may enter the frontier. Setting it
	// replaces the default chain, spider-trap guards included (path
	// depth, repeated segments, URL length, query parameters): to keep
	// them and add your own, set ExtraFilters instead. Default:
	// frontier.DefaultFilters().
	Filters frontier.URLFilter
	// ExtraFilters run after Filters (the default chain when Filters is
	// nil), in order; a link enters the frontier only if every filter
	// passes it. This is how a crawl adds a scope (domains, a pattern to
	// skip) and keeps the default trap guards. Default: none.
	ExtraFilters []frontier.URLFilter
	// Prioritizer places URLs in the default frontier's front queues.
	// It sees a page's links after the sinks and OnPage have seen the page,
	// so it can score links by what their source page said (a
	// frontier.FetchObserver is told of every page first). Default:
	// breadth first (frontier.Depth).
	Prioritizer frontier.Prioritizer
	// HostOrder is how the default frontier chooses among the hosts that
	// may be contacted (frontier.HostOrder). Default frontier.MostWork:
	// a host's first page first, then the hosts with the most work left,
	// so the crawl ends as soon as politeness allows; the Prioritizer
	// orders each host's URLs and which hosts get back queues.
	// frontier.PriorityFirst ranks the hosts by the Prioritizer first,
	// for a focused crawl whose most relevant pages must not wait behind
	// large hosts.
	HostOrder frontier.HostOrder
	// Canonicalizer turns URLs into the duplicate-URL key. Default: the
	// zero urlnorm.Canonicalizer (urlnorm.Canonical).
	Canonicalizer *urlnorm.Canonicalizer
	// Splitter, if set, is the host splitter of a distributed crawl
	// (Figure 20.2): links whose host another node owns are sent to it
	// after the URL filter, and the crawl does not end when the local
	// frontier is empty unless the Splitter also says the cluster is idle
	// (IdleReporter). Default nil: one node crawls every host.
	Splitter HostSplitter
	// Sinks receive every fetched page that was not a duplicate. Sinks
	// that are not DurableSinks get it first, outside any lock, in the
	// order of the slice; then the DurableSinks, in order, under the
	// commit lock. Default: none.
	Sinks []Sink

	// Workers is the number of pages fetched at a time. Default 16, at
	// most 16384. A worker that waits for more than a millisecond on the
	// content-seen test (an answer from another node or service) or on
	// its page's commit to a Stager (a cluster member's log) lends its
	// place to a new worker for the wait, so a crawl runs up to
	// 2 × Workers goroutines and has as many pages in flight, and a slow
	// answer costs each page its latency, not the crawl its rate.
	Workers int
	// UserAgent is the User-Agent header of the default Fetcher. Default
	// fetch.DefaultUserAgent.
	UserAgent string
	// Agent is the product token robots.txt groups are matched against.
	// Default "crawlkit".
	Agent string
	// AllowPrivate lets the default Fetcher connect to loopback and private
	// addresses (tests and demos on 127.0.0.1). Default false.
	AllowPrivate bool

	// MaxPages stops the crawl after this many pages were fetched. Default
	// 0: no limit.
	MaxPages int64
	// MaxDepth refuses links more than this many hops from a seed.
	// Default 0: no limit.
	MaxDepth int
	// MaxDuration stops the crawl after this long. Default 0: no limit.
	MaxDuration time.Duration
	// MaxBytes stops the crawl after this many body bytes. Default 0: no
	// limit.
	MaxBytes int64
	// MaxPagesPerHost refuses new URLs of a host once this many were
	// admitted, which bounds what one host (a spider trap) can cost.
	// Default 10,000; negative means no limit.
	MaxPagesPerHost int
	// MaxPagesPerDomain refuses new URLs of a registrable domain
	// (urlnorm.Domain: "a.b.example.co.uk" → "example.co.uk") once this
	// many were admitted under it. Default 100,000; negative means no
	// limit.
	MaxPagesPerDomain int
	// PolitenessKey says which requests share a politeness gap: each
	// host (KeyHost, the default), each registrable domain (KeyDomain),
	// or each server address (KeyIP).
	PolitenessKey PolitenessKey
	// HostRules override MinDelay, MaxPagesPerHost and MaxPagesPerDomain
	// for the hosts and domains they name (see HostRule). Default none.
	HostRules []HostRule
	// MaxHostsPerDomain refuses URLs of new hosts of a registrable domain
	// once this many of its hosts have URLs: a subdomain explosion (every
	// page linking fresh host names) stops there. Default 1,000; negative
	// means no limit.
	MaxHostsPerDomain int
	// PrivateSuffixes are names under which every label is a registrable
	// domain of its own, as the private section of the Public Suffix List
	// has them ("blogspot.com": "a.blogspot.com" is one site,
	// "b.blogspot.com" another), for the per-domain budgets and the trap
	// defence's domain rule: a hosting service the compiled list does not
	// know, or a simulated web whose sites are all under one name.
	// Lower case, without a leading dot.
	PrivateSuffixes []string
	// Traps tunes the trap defence, a per-host budget that adapts to
	// what the host serves (see TrapOptions). nil means the defaults;
	// &TrapOptions{AlikePages: -1} turns it off.
	Traps *TrapOptions
	// Backoff tunes the per-host back-off: a host that answers 429 or
	// 503 without Retry-After, or fails its connections, is left alone
	// for a growing time (see BackoffOptions). nil means the defaults
	// (60 s doubling up to a day); &BackoffOptions{Base: -1} turns it
	// off.
	Backoff *BackoffOptions
	// URLRules tunes the URL rewrite rules the crawl learns from the
	// duplicates it fetches (package dedup/dust: a "www." alias host,
	// query parameters that do not change the page, "/index.html", a
	// symlinked directory) and applies to the links it finds and to the
	// URLs it has queued, so that it stops fetching one page under many
	// URLs. A URL a rule rewrites is parked, not lost (Outcome Parked,
	// or filtered as "url rule"): a rule that meets a counterexample is
	// withdrawn and its parked URLs are fetched; the URLs a directory
	// (prefix) rule parked are fetched when the crawl has nothing else
	// to do, since only a file tells a symlink from a directory that
	// shares most files with another (dust.Learner.ReleaseUnproven).
	// The rules are saved with a State that is a RuleStorer and kept
	// across a resume; Crawler.URLRules exports them. nil means dust's
	// defaults.
	URLRules *dust.Options
	// NoURLRules turns the URL rewrite rules off: every link is fetched
	// under its own canonical URL.
	NoURLRules bool
	// Sitemaps tunes how the crawl reads sitemaps: those robots.txt
	// names, or a host's /sitemap.xml, fetched through the frontier like
	// pages (politeness, robots.txt, budgets) but not counted as pages,
	// their entries queued as links (see SitemapOptions). nil means the
	// defaults.
	Sitemaps *SitemapOptions
	// NoSitemaps turns sitemaps off: the crawl reaches only what links
	// reach.
	NoSitemaps bool
	// Canonicals is which <link rel=canonical> or Link: rel="canonical"
	// header the crawl honours: a page that names another URL as its
	// canonical is an alias of it (see CanonicalPolicy). Default
	// CanonicalSameDomain.
	Canonicals CanonicalPolicy
	// MaxLinksPerPage caps the links the default Parser reads from one
	// page; the links past it are counted (Stats.LinksDropped). Default
	// fetch.DefaultMaxLinks (100,000: the largest real index pages fit).
	// With a Parser of your own, set its cap there.
	MaxLinksPerPage int
	// MaxRetries is how often a URL answered 429 or 503 (or a transient
	// network error) is tried again after its Retry-After. It is also how
	// often a host's robots.txt may fail in a row that way (or with a
	// status of Backoff.Statuses) with its URLs held for the next attempt
	// (its Retry-After, or 1 s, 2 s, 4 s ... after the first failure, see
	// robots.Options.ErrorRetry) before they end as fetch errors; a
	// robots.txt answered 500 ends them at once. Default 2; negative
	// means never.
	MaxRetries int

	// MinDelay is the least gap between two requests to a host. Default 0.
	MinDelay time.Duration
	// DelayFactor is k: after a fetch that took d, the host waits k × d.
	// Default 10 (Mercator); negative means 0.
	DelayFactor float64
	// MaxDelay caps the gap (Retry-After, Crawl-delay and back-off blocks
	// included).
	// Default 1 hour, as in package frontier.
	MaxDelay time.Duration

	// Continuous re-fetches pages at intervals that follow their estimated
	// change rate instead of stopping when the frontier is empty.
	// Default false.
	Continuous bool
	// MinRevisit and MaxRevisit bound the revisit interval of continuous
	// crawling. Defaults 1 minute and 30 days.
	MinRevisit, MaxRevisit time.Duration

	// Logger receives progress and errors. Default: slog.Default().
	Logger *slog.Logger
	// ProgressInterval is how often progress is logged and Progress called.
	// Default 5 s.
	ProgressInterval time.Duration
	// Progress, if set, is called by the housekeeping goroutine every
	// ProgressInterval with a snapshot of the statistics.
	Progress func(Stats)
	// OnPage, if set, is called for every page fetched and not a duplicate,
	// after the sinks, from the worker goroutine (so it must be safe for
	// concurrent use and quick).
	OnPage func(*Page)
	// OnHTML are callbacks on the elements that match CSS selectors in
	// the HTML pages OnPage sees, with structured extraction
	// (fetch.Unmarshal) and links fed back into the crawl (see
	// HTMLHandler). Default none: no element tree is built.
	OnHTML []HTMLHandler
	// OnError, if set, is called for every URL whose fetch failed, from the
	// worker goroutine.
	OnError func(url string, err error)
}

// HostSplitter partitions hosts among the nodes of a distributed crawl.
// Implementations must be safe for concurrent use; one that also
// implements IdleReporter lets Run end when the local frontier is empty.
type HostSplitter interface {
	// Local reports whether this node crawls host.
	Local(host string) bool
	// Send hands URLs whose hosts other nodes own to those nodes, whose
	// crawlers receive them through Crawler.Add.
	Send(ctx context.Context, urls []frontier.URL) error
}

// ErrNoSeeds is returned by Run when there is nothing to crawl.
var ErrNoSeeds = errors.New("crawlkit: no seeds and nothing to resume")

// ErrConfig is wrapped by the errors New returns for a Config that
// contradicts itself.
var ErrConfig = errors.New("crawlkit: invalid Config")

func (c *Config) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
	}
	switch {
	case c.Workers < 0 || c.Workers > maxWorkers:
		return bad("Workers %d not in [0, %d]", c.Workers, maxWorkers)
	case c.MaxDepth < 0:
		return bad("MaxDepth %d < 0", c.MaxDepth)
	case c.MaxPages < 0 || c.MaxBytes < 0 || c.MaxDuration < 0:
		return bad("negative limit (MaxPages, MaxBytes or MaxDuration)")
	case c.MinDelay < 0 || c.MaxDelay < 0:
		return bad("negative delay (MinDelay or MaxDelay)")
	case c.MinDelay > 0 && c.MaxDelay > 0 && c.MinDelay > c.MaxDelay:
		return bad("MinDelay %v exceeds MaxDelay %v", c.MinDelay, c.MaxDelay)
	case c.MinRevisit < 0 || c.MaxRevisit < 0 || c.MinRevisit > 0 && c.MaxRevisit > 0 && c.MinRevisit > c.MaxRevisit:
		return bad("revisit bounds %v..%v", c.MinRevisit, c.MaxRevisit)
	case c.Fetcher != nil && c.WrapFetcher != nil:
		return bad("WrapFetcher wraps the default Fetcher; wrap your own Fetcher yourself")
	case c.Subrequests.MaxWait < 0:
		return bad("negative Subrequests.MaxWait")
	case c.Fetcher != nil && (c.UserAgent != "" || c.AllowPrivate):
		return bad("UserAgent and AllowPrivate configure the default Fetcher; with your own Fetcher, set them on it")
	case c.Robots != nil && c.Agent != "":
		return bad("Agent configures the default robots.Cache; with your own, set robots.Options.Agent")
	case c.Frontier != nil && c.Prioritizer != nil:
		return bad("Prioritizer configures the default Frontier; with your own, give it to that frontier")
	case c.HostOrder != frontier.MostWork && c.HostOrder != frontier.EarliestContact && c.HostOrder != frontier.PriorityFirst:
		return bad("unknown HostOrder %v", c.HostOrder)
	case c.Frontier != nil && c.HostOrder != frontier.MostWork:
		return bad("HostOrder configures the default Frontier; with your own, set its Options.HostOrder")
	case c.MaxLinksPerPage < 0:
		return bad("MaxLinksPerPage %d < 0", c.MaxLinksPerPage)
	case c.Parser != nil && c.MaxLinksPerPage != 0:
		return bad("MaxLinksPerPage configures the default Parser; with your own, set its cap there")
	case c.Agent != "" && !validAgent(c.Agent):
		return bad("Agent %q is not a robots.txt product token (letters, '-' and '_', RFC 9309 §2.2.1)", c.Agent)
	}
	if _, err := c.Traps.resolved(); err != nil {
		return bad("%v", err)
	}
	if _, err := c.Backoff.resolved(); err != nil {
		return bad("%v", err)
	}
	if _, err := newHostRules(c.HostRules); err != nil {
		return bad("%v", err)
	}
	switch {
	case c.PolitenessKey > KeyIP:
		return bad("PolitenessKey %v: want KeyHost, KeyDomain or KeyIP", c.PolitenessKey)
	case c.PolitenessKey == KeyIP && c.Resolver == nil && c.Fetcher != nil:
		return bad("PolitenessKey KeyIP resolves hosts with Config.Resolver: give one with your own Fetcher")
	}
	if _, err := compileHandlers(c.OnHTML); err != nil {
		return bad("%v", err)
	}
	for i, f := range c.ExtraFilters {
		if f == nil {
			return bad("ExtraFilters[%d] is nil", i)
		}
	}
	for _, s := range c.PrivateSuffixes {
		if s == "" || s != strings.ToLower(s) || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.ContainsAny(s, ":/ ") {
			return bad("PrivateSuffixes: %q is not a lower-case domain name without dots at its ends", s)
		}
	}
	if _, err := c.Sitemaps.resolved(); err != nil {
		return bad("%v", err)
	}
	if c.Canonicals >= numCanonicalPolicies {
		return bad("Canonicals %d is not a CanonicalPolicy", c.Canonicals)
	}
	if c.URLRules != nil && !c.NoURLRules {
		if _, err := dust.New(c.URLRules); err != nil {
			return bad("URLRules: %v", err)
		}
	}
	return nil
}

// validAgent reports whether a is a product token RFC 9309 §2.2.1
// allows: one or more letters, '-' and '_'.
func validAgent(a string) bool {
	for i := 0; i < len(a); i++ {
		if c := a[i] | 0x20; (c < 'a' || c > 'z') && a[i] != '-' && a[i] != '_' {
			return false
		}
	}
	return a != ""
}

func (c *Config) ensureDefaults() {
	if c.Workers == 0 {
		c.Workers = 16
	}
	if c.Agent == "" && c.Robots == nil {
		c.Agent = "crawlkit"
	}
	if c.UserAgent == "" {
		c.UserAgent = fetch.DefaultUserAgent
	}
	if c.DelayFactor == 0 {
		c.DelayFactor = 10
	} else if c.DelayFactor < 0 {
		c.DelayFactor = 0
	}
	if c.MaxDelay == 0 {
		c.MaxDelay = time.Hour
	}
	if c.MaxPagesPerHost == 0 {
		c.MaxPagesPerHost = 10000
	}
	if c.MaxPagesPerDomain == 0 {
		c.MaxPagesPerDomain = 100000
	}
	if c.MaxHostsPerDomain == 0 {
		c.MaxHostsPerDomain = 1000
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 2
	}
	if c.MinRevisit == 0 {
		c.MinRevisit = time.Minute
	}
	if c.MaxRevisit == 0 {
		c.MaxRevisit = 30 * 24 * time.Hour
	}
	if c.ProgressInterval == 0 {
		c.ProgressInterval = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Canonicalizer == nil {
		c.Canonicalizer = &urlnorm.Canonicalizer{}
	}
}
