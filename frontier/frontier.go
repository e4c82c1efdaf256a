package frontier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Sentinel errors. Callers compare with errors.Is.
var (
	// ErrClosed is returned by every method of a frontier after Close.
	ErrClosed = errors.New("frontier: closed")
	// ErrUnknownLease is returned by Done for a lease the frontier did not
	// hand out, or one already reported.
	ErrUnknownLease = errors.New("frontier: unknown or finished lease")
	// ErrCorrupt is returned when a checkpoint or a stored record cannot be
	// decoded.
	ErrCorrupt = errors.New("frontier: corrupt record")
)

// Error is the error type of frontier operations: Op names the operation
// ("add", "next", "done", "checkpoint", "restore", "decode"), URL the subject
// when there is one.
type Error struct {
	Op  string
	URL string
	Err error
}

// Error returns "frontier: op [url]: cause", with the package prefix
// once: a cause that carries it too (ErrCorrupt does) loses its own.
func (e *Error) Error() string {
	msg := strings.TrimPrefix(e.Err.Error(), "frontier: ")
	if e.URL == "" {
		return "frontier: " + e.Op + ": " + msg
	}
	return fmt.Sprintf("frontier: %s %q: %s", e.Op, e.URL, msg)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// URL is one entry of the frontier: an absolute URL plus what the frontier
// and its prioritizers need to know about it. The zero value of every field
// but URL is valid.
//
// A queued URL costs its URL string plus about 96 bytes in the in-memory
// store when Key is a substring of URL (HostKey returns one); Anchor,
// Source and LastMod are inputs for the Prioritizer at Add time and are
// not kept.
type URL struct {
	// URL is the absolute URL, normally in canonical form.
	URL string
	// Key is the politeness key: at most one lease per key is outstanding
	// and successive contacts with a key are spaced by the politeness gap.
	// Empty means HostKey(URL).
	Key string
	// Priority is the front queue the URL went to, 0 (lowest) to Levels-1.
	// The frontier sets it from its Prioritizer on Add; the value passed in
	// is a hint prioritizers may read.
	Priority int
	// Depth is the number of links followed from a seed (seeds are 0).
	Depth int
	// Fingerprint is the content fingerprint of the last fetch, 0 if never
	// fetched. Continuous crawlers use it to retire the stale fingerprint
	// from their content-seen set when the page changes.
	Fingerprint uint64
	// History is the fetch history the change-rate estimator reads.
	History History
	// ETag and LastModified are the validators of the last fetch's
	// response, as received: a revisit sends them as If-None-Match and
	// If-Modified-Since, and a server whose copy has not changed answers
	// 304 without a body. Empty when never fetched or not sent.
	ETag, LastModified string
	// Due, if after the frontier's current time, holds the URL back until
	// then (a scheduled revisit).
	Due time.Time
	// Anchor is the anchor text of the link that found the URL.
	// Not stored.
	Anchor string
	// Source is the URL of the page that linked to it. Not stored.
	Source string
	// Sitemap, when above 0, marks a sitemap to fetch rather than a page,
	// and is its nesting level: 1 for a sitemap a host's robots.txt names
	// (or the host's /sitemap.xml), 2 for one that a sitemap index of
	// level 1 lists, and so on, at most 255. A crawler reads a sitemap's
	// entries as links and does not count it as a page.
	Sitemap int
	// ChangeFreq is the <changefreq> a sitemap gave the URL: a hint a
	// Prioritizer may read, kept so that a revisit schedule can read it
	// too.
	ChangeFreq ChangeFreq
	// LastMod is the <lastmod> a sitemap gave the URL, zero if none: a
	// hint for the Prioritizer at Add time. Not stored.
	LastMod time.Time
}

// History is the fetch history of one URL: how often it was fetched, how
// often the content had changed since the previous fetch, and when the
// first and the last fetch happened.
type History struct {
	Fetches uint32    // fetches so far
	Changes uint32    // fetches that found the content changed
	First   time.Time // time of the first fetch
	Last    time.Time // time of the last fetch
}

// ChangeRate returns the estimated number of changes per second of the URL
// (EstimateChangeRate over the history), and false when there are fewer
// than two fetches to estimate from.
func (h History) ChangeRate() (float64, bool) {
	if h.Fetches < 2 || !h.Last.After(h.First) {
		return 0, false
	}
	n := int(h.Fetches - 1) // intervals observed
	return EstimateChangeRate(n, int(h.Changes), h.Last.Sub(h.First)), true
}

// Lease is a URL handed out by Next. It must be reported exactly once
// with Done; until then no other lease for the same Key is handed out.
type Lease struct {
	// URL is the leased entry.
	URL URL
	// Time is when Next handed it out (frontier clock).
	Time time.Time

	q     int32 // back queue (Mercator) or -1
	owner any   // frontier that issued it
}

// Result is the outcome of a fetch, reported with Done.
type Result struct {
	// Duration is how long the fetch took; the next contact with the key
	// waits K × Duration.
	Duration time.Duration
	// Ended is when the fetch ended (its last byte was received): the gap
	// runs from then, not from when Done is called after the page was
	// parsed and committed, since the host has been idle since Ended.
	// Zero, or a time after Done, means the time of Done.
	Ended time.Time
	// Skipped reports that the key was not contacted for the lease: the
	// crawler dropped its URL before any request (a rule parked it, its
	// host was cut, robots.txt as cached denies it). The key's next
	// contact time is left as it was, and Duration, Ended, CrawlDelay
	// and RetryAfter are ignored.
	Skipped bool
	// Status is the HTTP status, 0 when no response was received.
	Status int
	// Err is the fetch error, if any; it is counted in Stats.
	Err error
	// RetryAfter is the server's Retry-After (429, 503): the key is not
	// contacted again before it elapses.
	RetryAfter time.Duration
	// CrawlDelay is the robots.txt Crawl-delay of the host.
	CrawlDelay time.Duration
	// MinDelay, if not zero, replaces Politeness.MinDelay for this key
	// (negative means none): a per-host override.
	MinDelay time.Duration
	// Revisit, if not zero, schedules the URL to come back at that time
	// (continuous crawling); its History is updated from Fingerprint.
	Revisit time.Time
	// Fingerprint is the content fingerprint of this fetch, 0 if none. A
	// value different from the lease's URL.Fingerprint counts as a change.
	Fingerprint uint64
	// ETag and LastModified are the response's validators; Revisit keeps
	// them with the URL for its next fetch. Empty ones (a 304 need not
	// repeat them) leave the URL's as they were.
	ETag, LastModified string
	// Requeue hands the lease's URL back instead of finishing it: the key
	// was contacted but the URL itself was not fetched (its robots.txt
	// was fetched first, or the server answered 429 or 503), so it is
	// queued again under its key and handed out after the gap, which
	// counts Duration, CrawlDelay and RetryAfter as for any fetch. Revisit
	// is ignored. Mercator hands it out again before the key's other URLs;
	// FIFO at the head of its queue when that is free, else at the tail.
	Requeue bool
}

// Frontier holds the URLs still to be fetched and decides which one comes
// next: the URL frontier of IIR §20.2.3. Implementations are safe for
// concurrent use by many workers.
type Frontier interface {
	// Add queues URLs. URLs must already have passed the URL filter and
	// duplicate elimination: the frontier queues what it is given.
	Add(ctx context.Context, urls ...URL) error
	// Next blocks until some key may be contacted and returns a lease on
	// its next URL. It returns ctx.Err() when ctx is done and ErrClosed
	// after Close.
	Next(ctx context.Context) (*Lease, error)
	// Done reports the outcome of a lease and makes its key eligible again
	// after the politeness gap.
	Done(l *Lease, r Result) error
}

// Checkpointer is implemented by frontiers that can write a snapshot of
// their content: every queued URL, every leased URL not yet Done (so a
// restore queues it again) and every scheduled revisit. Restore reads it.
type Checkpointer interface {
	Checkpoint(w io.Writer) error
}

// Poller is implemented by frontiers that can hand out a lease without
// blocking: Poll returns a lease, or nil and the earliest time one may be
// ready (zero when the frontier holds nothing). Event-driven crawlers and
// simulations use it.
type Poller interface {
	Poll() (l *Lease, ready time.Time, err error)
}

// Holder is implemented by frontiers that can be told when a key may be
// contacted next, whatever URLs of it they hold now or get later: a crawl
// resumed from saved state keeps the politeness gaps of the run before.
// Hold only ever delays a key. Mercator and FIFO implement it.
type Holder interface {
	Hold(key string, until time.Time)
}

// Stater is implemented by frontiers that report their size.
type Stater interface {
	Stats() Stats
}

// Stats is a snapshot of a frontier's counters.
type Stats struct {
	Queued  int // URLs waiting in front and back queues
	Leased  int // leases handed out and not yet Done
	Waiting int // scheduled revisits not yet due
	Keys    int // keys with a back queue (Mercator) or a politeness record
	Added   uint64
	Leases  uint64
	Errors  uint64 // Done with Result.Err != nil
}

// Pending returns Queued + Leased + Waiting: the crawl is over when it is 0.
func (s Stats) Pending() int { return s.Queued + s.Leased + s.Waiting }

// Clock is the frontier's source of time; tests inject a fake one
// (frontiertest.FakeClock). Implementations are safe for concurrent use.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer made by a Clock.
type Timer interface {
	// C delivers the time once the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// SystemClock is the real Clock over package time; its zero value is ready.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (SystemClock) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

type sysTimer struct{ t *time.Timer }

func (t sysTimer) C() <-chan time.Time { return t.t.C }
func (t sysTimer) Stop() bool          { return t.t.Stop() }

// Politeness is the gap policy shared by the frontiers: after a fetch that
// took d, the key is next contacted at
// now + max(MinDelay, K × d, CrawlDelay, RetryAfter), capped by MaxDelay
// (Result.MinDelay, when set, stands for MinDelay).
type Politeness struct {
	// K multiplies the last fetch time. Default 10 (Mercator); negative
	// means 0.
	K float64
	// MinDelay is the least gap. Default 0.
	MinDelay time.Duration
	// MaxDelay caps the gap (a Retry-After of a week does not park the host
	// for a week). Default 1 hour.
	MaxDelay time.Duration
}

// since returns when the gap after a fetch with result r starts, for a
// Done called at now: r.Ended when it is set and not later than now.
func (r *Result) since(now time.Time) time.Time {
	if r.Ended.IsZero() || r.Ended.After(now) {
		return now
	}
	return r.Ended
}

// Gap returns the wait after a fetch with result r. O(1).
func (p Politeness) Gap(r Result) time.Duration {
	k := p.K
	if k == 0 {
		k = 10
	} else if k < 0 {
		k = 0
	}
	md := p.MinDelay
	if r.MinDelay != 0 {
		md = max(r.MinDelay, 0)
	}
	g := max(md, time.Duration(k*float64(r.Duration)), r.CrawlDelay, r.RetryAfter)
	return min(g, p.maxDelay())
}

// gaps returns Gap(r) and the gap the host keeps between pages: Gap(r)
// without r's RetryAfter, which holds the host once.
func (p Politeness) gaps(r Result) (gap, steady time.Duration) {
	ra := r.RetryAfter
	r.RetryAfter = 0
	steady = p.Gap(r)
	return max(steady, min(ra, p.maxDelay())), steady
}

// maxDelay is MaxDelay or its default.
func (p Politeness) maxDelay() time.Duration {
	if p.MaxDelay <= 0 {
		return time.Hour
	}
	return p.MaxDelay
}

var (
	_ Clock = SystemClock{}
)
