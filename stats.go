package crawlkit

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// Outcome is what became of one URL the crawler took from the frontier or
// one link it extracted. Every URL ends in exactly one outcome.
type Outcome uint8

// The outcomes. A link ends as Filtered, DuplicateURL or Queued; a queued
// URL (a seed is one) ends as one of the others once the frontier hands
// it out.
const (
	Queued           Outcome = iota // a new URL was added to the frontier
	Filtered                        // a URL filter, MaxDepth or a budget (host, domain) refused the link
	DuplicateURL                    // the URL was seen before ("URL seen?")
	Fetched                         // fetched with a 2xx answer, parsed, handed to the sinks
	DuplicateContent                // fetched, but its content was seen at another URL ("content seen?")
	Unchanged                       // a revisit whose content had not changed (or 304 Not Modified)
	Redirected                      // a 3xx answer; its target went through the filters as a link
	HTTPError                       // a 4xx or 5xx answer (after any retries)
	RobotsDenied                    // robots.txt forbade it, checked just before fetching
	FetchError                      // no complete answer: DNS, connect, timeout, too large, ...
	ParseError                      // a 2xx answer that the parser rejected (unsupported type, ...)
	Retried                         // a 429/503 or transient failure sent back to the frontier for later
	Sent                            // the host splitter sent the link to the node that owns its host
	Abandoned                       // a queued URL of a host the trap defence cut, dropped unfetched (TrapOptions)
	Parked                          // a queued URL a learned URL rule maps to another, fetched instead; fetched itself if the rule is withdrawn (Config.URLRules)
	SitemapRead                     // a sitemap fetched and read: its entries went through the filters as links (SitemapOptions)
	SitemapFailed                   // a sitemap that could not be fetched or read (error status, fetch error, robots.txt, not a sitemap)
	numOutcomes
)

var outcomeNames = [...]string{
	Queued: "queued", Filtered: "filtered", DuplicateURL: "duplicate url", Fetched: "fetched",
	DuplicateContent: "duplicate content", Unchanged: "unchanged", Redirected: "redirected",
	HTTPError: "http error", RobotsDenied: "robots denied", FetchError: "fetch error",
	ParseError: "parse error", Retried: "retried", Sent: "sent to peer", Abandoned: "abandoned",
	Parked: "parked", SitemapRead: "sitemap", SitemapFailed: "sitemap failed",
}

// String returns the outcome's name as Stats.Summary prints it.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Stats is a snapshot of a crawl's counters.
type Stats struct {
	// Outcomes counts URLs by outcome, indexed by Outcome.
	Outcomes [numOutcomes]uint64
	// Seeds is the number of seed URLs queued.
	Seeds uint64
	// Links is the number of links extracted from fetched pages (and
	// the entries of sitemaps, and the sitemaps robots.txt names), plus
	// the canonical forms the learned URL rules put beside the links
	// and queued URLs they rewrote, plus the parked URLs a withdrawn rule
	// released (each ends as Filtered, DuplicateURL, Queued or Sent; a
	// rewritten link itself is Filtered as "url rule" when parked).
	Links uint64
	// LinksDropped counts the links the parser did not read because a
	// page had more than its cap (Config.MaxLinksPerPage), and
	// PagesLinkCapped the pages that had.
	LinksDropped    uint64
	PagesLinkCapped uint64
	// Received is the number of URLs offered through Crawler.Add (from
	// other nodes); each ends as Filtered, DuplicateURL or Queued.
	Received uint64
	// HandedOver counts the queued URLs dropped unfetched because their
	// host's shard moved to another node of a cluster, which has them
	// pending (HostGate). Not saved in the State's progress.
	HandedOver uint64
	// Subrequests counts the requests a fetch.Gated fetcher made on its
	// own (a rendering fetcher's scripts, styles, data) that the crawl
	// admitted, and SubrequestsRefused those it refused (robots.txt,
	// another host, a host busy too long; see SubrequestOptions). Not
	// saved in the State's progress.
	Subrequests, SubrequestsRefused uint64
	// FilteredBy counts Filtered links by reason ("max depth", "host
	// budget", "domain budget", "domain hosts", "trap host", and the
	// frontier.Reason names).
	FilteredBy map[string]uint64
	// Errors counts FetchError outcomes by fetch.Kind name, or "robots
	// unreachable" for a host whose robots.txt answered 5xx or 429.
	Errors map[string]uint64
	// Status counts answers by HTTP status code.
	Status map[int]uint64
	// Backoffs counts the blocks of the per-host back-off: a host that
	// throttled the crawl or failed its connections (BackoffOptions).
	Backoffs uint64
	// Bytes is the number of body bytes received (decoded).
	Bytes int64
	// Frontier is the frontier's snapshot, if it reports one.
	Frontier frontier.Stats
	// InFlight is the number of URLs being processed by workers.
	InFlight int
	// Hosts is the number of hosts with at least one URL admitted so far.
	Hosts int
	// Elapsed is the crawl's running time: this Run's so far plus that of
	// every earlier Run on the same State.
	Elapsed time.Duration
}

// Pages returns the number of pages fetched (with a 2xx answer), including
// duplicates.
func (s Stats) Pages() uint64 {
	return s.Outcomes[Fetched] + s.Outcomes[DuplicateContent] + s.Outcomes[Unchanged]
}

// PagesPerSecond returns Pages over Elapsed.
func (s Stats) PagesPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Pages()) / s.Elapsed.Seconds()
}

// Finished returns the number of queued URLs that reached a final outcome.
func (s Stats) Finished() uint64 {
	var n uint64
	for o, c := range s.Outcomes {
		if Outcome(o).Final() {
			n += c
		}
	}
	return n
}

// Final reports whether o is what becomes of a URL taken from the
// frontier (Fetched, DuplicateContent, Unchanged, Redirected, HTTPError,
// RobotsDenied, FetchError, ParseError, Abandoned, Parked), as opposed to
// what becomes of a link (Queued, Filtered, DuplicateURL, Sent) or a
// fetch to be tried again (Retried).
func (o Outcome) Final() bool {
	switch o {
	case Fetched, DuplicateContent, Unchanged, Redirected, HTTPError, RobotsDenied, FetchError, ParseError, Abandoned, Parked, SitemapRead, SitemapFailed:
		return true
	}
	return false
}

// String returns a one-line summary, as the progress log prints it.
func (s Stats) String() string {
	return fmt.Sprintf("pages %d (%.0f/s), frontier %d, hosts %d, errors %d, http errors %d, dup url %d, dup content %d, robots denied %d, filtered %d",
		s.Pages(), s.PagesPerSecond(), s.Frontier.Pending(), s.Hosts, s.Outcomes[FetchError], s.Outcomes[HTTPError],
		s.Outcomes[DuplicateURL], s.Outcomes[DuplicateContent], s.Outcomes[RobotsDenied], s.Outcomes[Filtered])
}

// Summary returns a multi-line account of every counter, sorted.
func (s Stats) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "elapsed %v, %d pages (%.1f pages/s), %d bytes\n", s.Elapsed.Round(time.Millisecond), s.Pages(), s.PagesPerSecond(), s.Bytes)
	fmt.Fprintf(&b, "seeds %d, links %d", s.Seeds, s.Links)
	if s.LinksDropped > 0 {
		fmt.Fprintf(&b, " (%d more past the per-page cap, on %d pages)", s.LinksDropped, s.PagesLinkCapped)
	}
	b.WriteByte('\n')
	for o := Outcome(0); o < numOutcomes; o++ {
		fmt.Fprintf(&b, "  %-18s %d\n", o.String()+":", s.Outcomes[o])
	}
	if s.Backoffs > 0 {
		fmt.Fprintf(&b, "hosts backed off %d times\n", s.Backoffs)
	}
	writeMap(&b, "filtered by", s.FilteredBy)
	writeMap(&b, "errors by kind", s.Errors)
	if len(s.Status) > 0 {
		codes := make([]int, 0, len(s.Status))
		for c := range s.Status {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		b.WriteString("  status:")
		for _, c := range codes {
			fmt.Fprintf(&b, " %d×%d", c, s.Status[c])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func writeMap(b *strings.Builder, title string, m map[string]uint64) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(b, "  %s:", title)
	for _, k := range keys {
		fmt.Fprintf(b, " %s=%d", k, m[k])
	}
	b.WriteByte('\n')
}

// counters are the live counters behind Stats: atomics read by Stats at
// any time, a mutex only for the keyed maps. They change only when a
// tally is committed (and for the in-flight gauge), so that the counters a
// State saves are exactly those of the committed pages.
type counters struct {
	outcomes   [numOutcomes]atomic.Uint64
	seeds      atomic.Uint64
	links      atomic.Uint64
	dropped    atomic.Uint64
	capped     atomic.Uint64
	received   atomic.Uint64
	handedOver atomic.Uint64
	backoffs   atomic.Uint64
	bytes      atomic.Int64
	hosts      atomic.Int64
	inflight   atomic.Int64

	mu         sync.Mutex
	filteredBy map[string]uint64
	errors     map[string]uint64
	status     map[int]uint64
}

// tally counts what one unit of work (a page, a batch of seeds) did until
// it is committed.
type tally struct {
	outcomes [numOutcomes]uint32
	links    uint32
	dropped  uint32 // links past the parser's cap
	seeds    uint32
	received uint32
	hosts    uint32
	bytes    int64
	status   int      // HTTP status of the fetch, 0 if none
	errKind  string   // the FetchError's kind, "" if none
	filtered []string // one reason per Filtered link
}

func (t *tally) count(o Outcome) { t.outcomes[o]++ }

func (t *tally) filter(reason string) {
	t.outcomes[Filtered]++
	t.filtered = append(t.filtered, reason)
}

// fetchError counts a failure under its kind; the FetchError outcome
// itself is counted when the lease finishes.
func (t *tally) fetchError(kind string) { t.errKind = kind }

// apply adds t to the counters.
func (c *counters) apply(t *tally) {
	for o, n := range t.outcomes {
		if n != 0 {
			c.outcomes[o].Add(uint64(n))
		}
	}
	c.links.Add(uint64(t.links))
	if t.dropped > 0 {
		c.dropped.Add(uint64(t.dropped))
		c.capped.Add(1)
	}
	c.seeds.Add(uint64(t.seeds))
	c.received.Add(uint64(t.received))
	c.hosts.Add(int64(t.hosts))
	c.bytes.Add(t.bytes)
	if t.status == 0 && t.errKind == "" && len(t.filtered) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.status != 0 {
		if c.status == nil {
			c.status = map[int]uint64{}
		}
		c.status[t.status]++
	}
	if t.errKind != "" {
		if c.errors == nil {
			c.errors = map[string]uint64{}
		}
		c.errors[t.errKind]++
	}
	if len(t.filtered) > 0 && c.filteredBy == nil {
		c.filteredBy = map[string]uint64{}
	}
	for _, r := range t.filtered {
		c.filteredBy[r]++
	}
}

func (c *counters) snapshot() Stats {
	var s Stats
	for i := range s.Outcomes {
		s.Outcomes[i] = c.outcomes[i].Load()
	}
	s.Seeds = c.seeds.Load()
	s.Links = c.links.Load()
	s.LinksDropped = c.dropped.Load()
	s.PagesLinkCapped = c.capped.Load()
	s.Received = c.received.Load()
	s.HandedOver = c.handedOver.Load()
	s.Backoffs = c.backoffs.Load()
	s.Bytes = c.bytes.Load()
	s.Hosts = int(c.hosts.Load())
	s.InFlight = int(c.inflight.Load())
	c.mu.Lock()
	s.FilteredBy = copyMap(c.filteredBy)
	s.Errors = copyMap(c.errors)
	s.Status = make(map[int]uint64, len(c.status))
	for k, v := range c.status {
		s.Status[k] = v
	}
	c.mu.Unlock()
	return s
}

// restore adds the counters of a saved progress.
func (c *counters) restore(s Stats) {
	for i := range s.Outcomes {
		c.outcomes[i].Add(s.Outcomes[i])
	}
	c.seeds.Add(s.Seeds)
	c.links.Add(s.Links)
	c.dropped.Add(s.LinksDropped)
	c.capped.Add(s.PagesLinkCapped)
	c.backoffs.Add(s.Backoffs)
	c.received.Add(s.Received)
	c.bytes.Add(s.Bytes)
	c.hosts.Add(int64(s.Hosts))
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range s.FilteredBy {
		if c.filteredBy == nil {
			c.filteredBy = map[string]uint64{}
		}
		c.filteredBy[k] += v
	}
	for k, v := range s.Errors {
		if c.errors == nil {
			c.errors = map[string]uint64{}
		}
		c.errors[k] += v
	}
	for k, v := range s.Status {
		if c.status == nil {
			c.status = map[int]uint64{}
		}
		c.status[k] += v
	}
}

func copyMap[K comparable](m map[K]uint64) map[K]uint64 {
	out := make(map[K]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
