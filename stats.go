package crawlkit

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
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
	Filtered                        // a URL filter (or MaxDepth, MaxPagesPerHost) refused the link
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
	numOutcomes
)

var outcomeNames = [...]string{
	Queued: "queued", Filtered: "filtered", DuplicateURL: "duplicate url", Fetched: "fetched",
	DuplicateContent: "duplicate content", Unchanged: "unchanged", Redirected: "redirected",
	HTTPError: "http error", RobotsDenied: "robots denied", FetchError: "fetch error",
	ParseError: "parse error", Retried: "retried", Sent: "sent to peer",
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
	// Links is the number of links extracted from fetched pages (each
	// ends as Filtered, DuplicateURL, Queued or Sent).
	Links uint64
	// Received is the number of URLs offered through Crawler.Add (from
	// other nodes); each ends as Filtered, DuplicateURL or Queued.
	Received uint64
	// FilteredBy counts Filtered links by reason ("max depth", "host
	// budget", and the frontier.Reason names).
	FilteredBy map[string]uint64
	// Errors counts FetchError outcomes by fetch.Kind name.
	Errors map[string]uint64
	// Status counts answers by HTTP status code.
	Status map[int]uint64
	// Bytes is the number of body bytes received (decoded).
	Bytes int64
	// Frontier is the frontier's snapshot, if it reports one.
	Frontier frontier.Stats
	// InFlight is the number of URLs being processed by workers.
	InFlight int
	// Hosts is the number of hosts with at least one queued URL so far.
	Hosts int
	// Elapsed is the time since Run started.
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
	for _, o := range []Outcome{Fetched, DuplicateContent, Unchanged, Redirected, HTTPError, RobotsDenied, FetchError, ParseError} {
		n += s.Outcomes[o]
	}
	return n
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
	fmt.Fprintf(&b, "seeds %d, links %d\n", s.Seeds, s.Links)
	for o := Outcome(0); o < numOutcomes; o++ {
		fmt.Fprintf(&b, "  %-18s %d\n", o.String()+":", s.Outcomes[o])
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

// counters are the live counters behind Stats: atomics on the hot path,
// a mutex only for the keyed maps.
type counters struct {
	outcomes [numOutcomes]atomic.Uint64
	seeds    atomic.Uint64
	links    atomic.Uint64
	received atomic.Uint64
	bytes    atomic.Int64
	inflight atomic.Int64

	mu         sync.Mutex
	filteredBy map[string]uint64
	errors     map[string]uint64
	status     map[int]uint64
}

func (c *counters) count(o Outcome) { c.outcomes[o].Add(1) }

func (c *counters) filtered(reason string) {
	c.outcomes[Filtered].Add(1)
	c.mu.Lock()
	if c.filteredBy == nil {
		c.filteredBy = map[string]uint64{}
	}
	c.filteredBy[reason]++
	c.mu.Unlock()
}

// fetchError counts a failure under its kind; the FetchError outcome
// itself is counted by finish.
func (c *counters) fetchError(k fetch.Kind) {
	c.mu.Lock()
	if c.errors == nil {
		c.errors = map[string]uint64{}
	}
	c.errors[k.String()]++
	c.mu.Unlock()
}

func (c *counters) statusCode(code int) {
	c.mu.Lock()
	if c.status == nil {
		c.status = map[int]uint64{}
	}
	c.status[code]++
	c.mu.Unlock()
}

func (c *counters) snapshot() Stats {
	var s Stats
	for i := range s.Outcomes {
		s.Outcomes[i] = c.outcomes[i].Load()
	}
	s.Seeds = c.seeds.Load()
	s.Links = c.links.Load()
	s.Received = c.received.Load()
	s.Bytes = c.bytes.Load()
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

// restore adds the counters of a checkpoint.
func (c *counters) restore(s Stats) {
	for i := range s.Outcomes {
		c.outcomes[i].Add(s.Outcomes[i])
	}
	c.seeds.Add(s.Seeds)
	c.links.Add(s.Links)
	c.received.Add(s.Received)
	c.bytes.Add(s.Bytes)
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
