package crawlkit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/robots"
)

// Stage is a step of the crawl loop whose time Activity reports.
type Stage uint8

// The stages, in the order a URL goes through them. DNS and Connect are
// parts of the fetch (Activity.FetchTime), measured by the fetcher and
// absent when a kept-alive connection was reused.
const (
	StageRobots  Stage = iota // the robots.txt check, a robots.txt fetch included when it was not cached
	StageDNS                  // resolving the host name for a new connection
	StageConnect              // TCP connect and TLS handshake of a new connection
	StageParse                // parsing the page for text and links
	StageContent              // the "content seen?" test
	StageCommit               // committing the outcome: URL-seen test, sinks, State, frontier
	numStages
)

var stageNames = [...]string{StageRobots: "robots", StageDNS: "dns", StageConnect: "connect",
	StageParse: "parse", StageContent: "content", StageCommit: "commit"}

// String returns the stage's name ("robots", "dns", ...), as the metrics
// label it.
func (s Stage) String() string {
	if int(s) < len(stageNames) {
		return stageNames[s]
	}
	return fmt.Sprintf("stage(%d)", uint8(s))
}

// durationBounds are the upper bounds, in seconds, of the buckets of every
// duration Histogram of Activity.
var durationBounds = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// sizeBounds are the upper bounds, in bytes, of the buckets of
// Activity.ResponseSize.
var sizeBounds = []float64{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20}

var (
	durBoundsNS  = boundsInt(durationBounds, 1e9)
	sizeBoundsIn = boundsInt(sizeBounds, 1)
)

func boundsInt(b []float64, scale float64) []int64 {
	out := make([]int64, len(b))
	for i, v := range b {
		out[i] = int64(v * scale)
	}
	return out
}

// Histogram is a snapshot of a distribution: Counts[i] observations were
// above Bounds[i-1] and at most Bounds[i]; the last of the len(Bounds)+1
// counts holds those above every bound. Sum is the sum of all
// observations, in the unit of Bounds (seconds or bytes).
type Histogram struct {
	Bounds []float64
	Counts []uint64
	Sum    float64
}

// Count returns the number of observations.
func (h Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Mean returns Sum / Count, 0 without observations.
func (h Histogram) Mean() float64 {
	if n := h.Count(); n > 0 {
		return h.Sum / float64(n)
	}
	return 0
}

// Quantile returns the upper bound of the bucket that holds the q-th
// quantile (0 < q ≤ 1): at most one bucket above the true value. It is
// +Inf when that bucket is the last, 0 without observations.
func (h Histogram) Quantile(q float64) float64 {
	n := h.Count()
	if n == 0 {
		return 0
	}
	rank := max(uint64(q*float64(n)+0.5), 1)
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank {
			if i < len(h.Bounds) {
				return h.Bounds[i]
			}
			break
		}
	}
	return inf
}

var inf = func() float64 { var z float64; return 1 / z }()

// hist is a histogram updated with atomics: one Add to a bucket and one
// to the sum per observation, no lock, no allocation.
type hist struct {
	counts [16]atomic.Uint64 // len(bounds)+1 used
	sum    atomic.Int64
}

func (h *hist) observe(v int64, bounds []int64) {
	i := 0
	for i < len(bounds) && v > bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(v)
}

func (h *hist) snapshot(bounds []float64, scale float64) Histogram {
	s := Histogram{Bounds: slices.Clone(bounds), Counts: make([]uint64, len(bounds)+1)}
	for i := range s.Counts {
		s.Counts[i] = h.counts[i].Load()
	}
	s.Sum = float64(h.sum.Load()) / scale
	return s
}

// HostActivity is what the crawl did with one host.
type HostActivity struct {
	Host      string
	Fetches   uint64        // fetches of the host's URLs (robots.txt not included)
	Errors    uint64        // of those, fetch errors and 4xx/5xx answers
	Bytes     int64         // body bytes received
	FetchTime time.Duration // total time of the fetches
	MaxFetch  time.Duration // the longest fetch
	Last      time.Time     // when the last fetch ended
}

// MeanFetch returns FetchTime / Fetches.
func (h HostActivity) MeanFetch() time.Duration {
	if h.Fetches == 0 {
		return 0
	}
	return h.FetchTime / time.Duration(h.Fetches)
}

// ErrorRecord is one failed URL among Activity.Errors.
type ErrorRecord struct {
	Time   time.Time
	URL    string
	Kind   string // a fetch.Kind name, "robots unreachable", "parse", or "http" with Status
	Status int    // the HTTP status of an "http" error
	Err    string // the error's text; "" for an "http" error
}

// Activity is a detailed snapshot of a running crawl for its operator
// (package console shows it, and exports it as metrics): time per stage,
// fetch times and response sizes, the busiest and slowest hosts, the last
// errors, and the caches. Unlike Stats it is not saved with the State:
// it describes this process's Run only.
type Activity struct {
	// Started is when Run started, Ended when it returned (zero while it
	// runs; both zero before Run).
	Started, Ended time.Time
	// Paused reports whether Pause holds the workers.
	Paused bool
	// Workers is the number of workers.
	Workers int

	// FetchTime is the time of every fetch of a URL (robots.txt aside),
	// from the request to the end of the body, failed ones included. The
	// duration histograms' bounds are 1, 2.5, 5, 10, 25, 50, 100, 250 and
	// 500 ms, 1, 2.5, 5, 10 and 30 s.
	FetchTime Histogram
	// ResponseSize is the body size of every response (decoded bytes),
	// in buckets of 1, 4, 16, 64 and 256 KiB, 1, 4 and 16 MiB.
	ResponseSize Histogram
	// Stages holds the time of each stage, indexed by Stage.
	Stages [numStages]Histogram

	// Busiest are the hosts with the most fetches, most first, and
	// Slowest those with the longest mean fetch time, slowest first; each
	// at most the n asked of Activity. They are drawn from bounded tables
	// (MaxTrackedHosts), so on a crawl of more hosts they are the busiest
	// and slowest of the hosts fetched lately, not of all time.
	Busiest, Slowest []HostActivity
	// Errors are the last failed URLs (at most MaxRecentErrors), oldest
	// first.
	Errors []ErrorRecord

	// Robots are the robots.txt cache's counters.
	Robots robots.Stats
	// DNS are the resolver's counters when it reports them (dns.Caching),
	// else nil.
	DNS *dns.Stats
	// SinkErrors counts failed sink writes.
	SinkErrors uint64
}

// MaxTrackedHosts bounds the table of busy hosts Activity.Busiest is drawn
// from; the table of slow hosts holds a quarter as many. A full table
// makes room for a new host by evicting the least busy (or the fastest)
// of a few of its hosts drawn at random, so the tables are approximate.
const MaxTrackedHosts = 256

// MaxRecentErrors is the number of failed URLs Activity.Errors keeps.
const MaxRecentErrors = 64

// observer collects Activity: atomics for the histograms, one short
// critical section per fetch for the host tables, and one per failure
// for the ring of errors.
type observer struct {
	fetch  hist
	size   hist
	stages [numStages]hist
	paused atomic.Bool
	ended  atomic.Pointer[time.Time]

	mu    sync.Mutex
	busy  hostTable // at most MaxTrackedHosts
	slow  hostTable // at most MaxTrackedHosts/4
	errs  [MaxRecentErrors]ErrorRecord
	nerrs int // errors recorded so far; errs[nerrs%len] is the next slot
}

func (o *observer) stage(s Stage, d time.Duration) { o.stages[s].observe(int64(d), durBoundsNS) }

// connection records the DNS and connect stages of a fetch that opened a
// connection (a host's first is usually its robots.txt fetch).
func (o *observer) connection(tm *fetch.Timings) {
	if tm.Reused {
		return
	}
	if tm.DNS > 0 {
		o.stage(StageDNS, tm.DNS)
	}
	if tm.Connect > 0 {
		o.stage(StageConnect, tm.Connect)
	}
}

// fetched records one fetch of a URL of host.
func (o *observer) fetched(host string, d time.Duration, bytes int64, failed bool, end time.Time) {
	o.fetch.observe(int64(d), durBoundsNS)
	o.mu.Lock()
	defer o.mu.Unlock()
	busy := o.busy.find(host)
	if busy == nil {
		// A host with few fetches makes room, the one fetched longest ago
		// among equals: a busy host stays while new hosts come and go.
		slot := -1
		if len(o.busy.hosts) >= MaxTrackedHosts {
			slot = o.busy.victim(func(a, b *HostActivity) bool {
				return a.Fetches < b.Fetches || a.Fetches == b.Fetches && a.Last.Before(b.Last)
			})
		}
		busy = o.busy.put(strings.Clone(host), slot) // the key outlives the URL it was cut from
	}
	busy.add(d, bytes, failed, end)
	slow := o.slow.find(host)
	if slow == nil {
		// A fast host makes room, if this fetch was slower.
		slot := -1
		if len(o.slow.hosts) >= MaxTrackedHosts/4 {
			slot = o.slow.victim(func(a, b *HostActivity) bool { return a.MeanFetch() < b.MeanFetch() })
			if o.slow.hosts[slot].MeanFetch() >= d {
				return
			}
		}
		slow = o.slow.put(busy.Host, slot)
	}
	slow.add(d, bytes, failed, end)
}

func (h *HostActivity) add(d time.Duration, bytes int64, failed bool, end time.Time) {
	h.Fetches++
	if failed {
		h.Errors++
	}
	h.Bytes += bytes
	h.FetchTime += d
	h.MaxFetch = max(h.MaxFetch, d)
	h.Last = end
}

// hostTable is a bounded table of hosts. A full table makes room for a
// new host by evicting the least of evictSample entries drawn at random:
// O(1), where finding the least of all would cost a scan per new host.
type hostTable struct {
	idx   map[string]int32
	hosts []HostActivity
	rnd   uint64 // xorshift state
}

const evictSample = 8

func (t *hostTable) find(host string) *HostActivity {
	if i, ok := t.idx[host]; ok {
		return &t.hosts[i]
	}
	return nil
}

// victim returns the slot of the least, by less, of a few entries drawn at
// random from a non-empty table.
func (t *hostTable) victim(less func(a, b *HostActivity) bool) int {
	best := -1
	for range evictSample {
		t.rnd ^= t.rnd << 13
		t.rnd ^= t.rnd >> 7
		t.rnd ^= t.rnd << 17
		i := int(t.rnd % uint64(len(t.hosts)))
		if best < 0 || less(&t.hosts[i], &t.hosts[best]) {
			best = i
		}
	}
	return best
}

// put makes host the entry of slot, or of a new slot when slot < 0.
func (t *hostTable) put(host string, slot int) *HostActivity {
	if t.idx == nil {
		t.idx = make(map[string]int32)
		t.rnd = 0x9e3779b97f4a7c15
	}
	if slot < 0 {
		t.hosts = append(t.hosts, HostActivity{Host: host})
		slot = len(t.hosts) - 1
	} else {
		delete(t.idx, t.hosts[slot].Host)
		t.hosts[slot] = HostActivity{Host: host}
	}
	t.idx[host] = int32(slot)
	return &t.hosts[slot]
}

// failed records a failed URL in the ring of recent errors.
func (o *observer) failed(r ErrorRecord) {
	o.mu.Lock()
	o.errs[o.nerrs%len(o.errs)] = r
	o.nerrs++
	o.mu.Unlock()
}

// Pause stops the workers from taking new URLs from the frontier: the
// pages in flight are finished, then the crawl waits, its state intact,
// until Resume (or until Run's context is cancelled, which stops it as
// usual). The crawl's time (Stats.Elapsed, MaxDuration) runs on while it
// is paused. Safe for concurrent use; pausing a paused crawl does nothing.
func (c *Crawler) Pause() {
	c.pauseMu.Lock()
	defer c.pauseMu.Unlock()
	if c.obs.paused.Load() {
		return
	}
	c.resumed = make(chan struct{})
	c.obs.paused.Store(true)
}

// Resume lets the workers of a paused crawl take URLs again. Safe for
// concurrent use; resuming a crawl that is not paused does nothing.
func (c *Crawler) Resume() {
	c.pauseMu.Lock()
	defer c.pauseMu.Unlock()
	if !c.obs.paused.Load() {
		return
	}
	c.obs.paused.Store(false)
	close(c.resumed)
}

// Paused reports whether Pause holds the workers.
func (c *Crawler) Paused() bool { return c.obs.paused.Load() }

// waitResumed blocks a worker while the crawl is paused; it reports false
// when stop is done first. A crawl never paused pays one atomic load.
func (c *Crawler) waitResumed(stop <-chan struct{}) bool {
	if !c.obs.paused.Load() {
		return true
	}
	c.pauseMu.Lock()
	ch := c.resumed
	paused := c.obs.paused.Load()
	c.pauseMu.Unlock()
	if !paused {
		return true
	}
	select {
	case <-ch:
		return true
	case <-stop:
		return false
	}
}

// Config returns the crawl's configuration with every default filled in.
// The slices and modules are shared with the crawl: do not modify them.
// Safe for concurrent use.
func (c *Crawler) Config() Config { return c.cfg }

// Activity returns a detailed snapshot of the crawl for its operator, with
// at most n hosts in Busiest and in Slowest. It copies the host tables
// under a lock (O(MaxTrackedHosts)) and allocates: call it when a person
// or a scraper asks, not per page. Safe for concurrent use.
func (c *Crawler) Activity(n int) Activity {
	o := &c.obs
	a := Activity{
		Paused:       o.paused.Load(),
		Workers:      c.cfg.Workers,
		FetchTime:    o.fetch.snapshot(durationBounds, 1e9),
		ResponseSize: o.size.snapshot(sizeBounds, 1),
		Robots:       c.robots.Stats(),
		SinkErrors:   c.sinkErrors.Load(),
	}
	if s := c.start.Load(); s != nil {
		a.Started = *s
	}
	if e := o.ended.Load(); e != nil {
		a.Ended = *e
	}
	for i := range a.Stages {
		a.Stages[i] = o.stages[i].snapshot(durationBounds, 1e9)
	}
	if r, ok := c.resolver.(interface{ Stats() dns.Stats }); ok {
		s := r.Stats()
		a.DNS = &s
	}
	o.mu.Lock()
	a.Busiest = top(&o.busy, n, func(a, b HostActivity) int {
		return cmp.Or(-cmp.Compare(a.Fetches, b.Fetches), strings.Compare(a.Host, b.Host))
	})
	a.Slowest = top(&o.slow, n, func(a, b HostActivity) int {
		return cmp.Or(-cmp.Compare(a.MeanFetch(), b.MeanFetch()), strings.Compare(a.Host, b.Host))
	})
	k := min(o.nerrs, len(o.errs))
	a.Errors = make([]ErrorRecord, 0, k)
	for i := o.nerrs - k; i < o.nerrs; i++ {
		a.Errors = append(a.Errors, o.errs[i%len(o.errs)])
	}
	o.mu.Unlock()
	return a
}

func top(t *hostTable, n int, order func(a, b HostActivity) int) []HostActivity {
	if n <= 0 {
		return nil
	}
	all := slices.Clone(t.hosts)
	slices.SortFunc(all, order)
	return all[:min(n, len(all))]
}
