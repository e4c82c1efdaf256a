package frontier_test

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// schedWeb is the web of the makespan simulation: hosts whose page counts
// follow a Pareto law, laid out so that the largest hosts are the last to
// be discovered. Host i's home page links the home pages and first pages
// of hosts 2i+1 and 2i+2 (a binary tree of hosts rooted at the seed, host
// 0), and the counts are sorted ascending by host number, so the biggest
// hosts sit at the bottom of the tree. Inside a host, page p links pages
// 2p+1 and 2p+2 and the home page: a host's pages are found as it is
// crawled, two per fetch, so a host never runs dry while it is crawled in
// order.
type schedWeb struct {
	pages []int // pages of each host
}

func newSchedWeb(hosts int, xm, alpha float64, maxPages int, seed uint64) *schedWeb {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	w := &schedWeb{pages: make([]int, hosts)}
	for i := range w.pages {
		n := int(xm / math.Pow(1-r.Float64(), 1/alpha))
		w.pages[i] = min(max(n, 1), maxPages)
	}
	slices.Sort(w.pages)
	return w
}

// links appends the links of page p of host h to dst.
func (w *schedWeb) links(dst []schedPage, h, p int) []schedPage {
	for _, c := range []int{2*p + 1, 2*p + 2} {
		if c < w.pages[h] {
			dst = append(dst, schedPage{h, c})
		}
	}
	if p != 0 {
		return append(dst, schedPage{h, 0})
	}
	for _, c := range []int{2*h + 1, 2*h + 2} {
		if c < len(w.pages) {
			dst = append(dst, schedPage{c, 0})
			if w.pages[c] > 1 {
				dst = append(dst, schedPage{c, 1})
			}
		}
	}
	return dst
}

type schedPage struct{ h, p int }

func (w *schedWeb) url(buf []byte, pg schedPage) string { return benchURL(buf, pg.h, pg.p) }

// parseSchedURL inverts benchURL.
func parseSchedURL(s string) schedPage {
	const pre = "http://h"
	i := len(pre)
	j := i
	for s[j] != '.' {
		j++
	}
	h, _ := strconv.Atoi(s[i:j])
	k := len(s) - 1
	for s[k] != '/' {
		k--
	}
	p, _ := strconv.Atoi(s[k+1:])
	return schedPage{h, p}
}

// schedConfig is one run of the makespan simulation.
type schedConfig struct {
	web     *schedWeb
	workers int
	fetch   time.Duration // every request, robots.txt included, takes this long
	gap     time.Duration // fixed politeness gap (MinDelay, K = 0)
	opts    func(*frontier.Options)
}

// schedResult is what a run measured, in simulated time.
type schedResult struct {
	makespan time.Duration // from the seed to the last page
	t99      time.Duration // until 99% of the pages were fetched
	bound    time.Duration // lower bound on the makespan
	pages    int
	busy     float64 // fraction of worker time spent fetching
	// firstContact is the mean time from a host's first URL entering
	// the frontier to its first lease (its robots.txt fetch).
	firstContact time.Duration
}

// bound is the makespan no scheduler can beat: the largest host needs its
// robots.txt and its pages one gap apart, (n+1) fetches and n gaps, and
// all the fetches together need fetches × fetch time / workers.
func (c *schedConfig) bound() time.Duration {
	var b time.Duration
	total := 0
	for _, n := range c.web.pages {
		b = max(b, time.Duration(n+1)*c.fetch+time.Duration(n)*c.gap)
		total += n + 1
	}
	return max(b, time.Duration(total)*c.fetch/time.Duration(c.workers))
}

type schedEvent struct {
	at     time.Time
	l      *frontier.Lease
	robots bool
}

type schedEvents []schedEvent

func (e schedEvents) Len() int           { return len(e) }
func (e schedEvents) Less(i, j int) bool { return e[i].at.Before(e[j].at) }
func (e schedEvents) Swap(i, j int)      { e[i], e[j] = e[j], e[i] }
func (e *schedEvents) Push(x any)        { *e = append(*e, x.(schedEvent)) }
func (e *schedEvents) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// simulateSchedule crawls c.web from host 0's home page as the root
// crawler does, in fake time: a worker leases a URL; the first lease of a
// host fetches its robots.txt and hands the URL back with Requeue; any
// other fetches the page, adds its unseen links, then reports Done. It
// fails tb if a host is leased twice at once or before its gap is over.
func simulateSchedule(tb testing.TB, c schedConfig) schedResult {
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	o := frontier.Options{Workers: c.workers, Clock: clk, Seed: 1,
		Politeness: frontier.Politeness{K: -1, MinDelay: c.gap}}
	if c.opts != nil {
		c.opts(&o)
	}
	f, err := frontier.NewMercator(&o)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	total := 0
	for _, n := range c.web.pages {
		total += n
	}
	seen := make(map[schedPage]bool, total)
	robots := make([]bool, len(c.web.pages))
	busyHost := make([]bool, len(c.web.pages))
	lastDone := make([]time.Time, len(c.web.pages))
	found := make([]time.Time, len(c.web.pages)) // when each host's first URL was added
	var contactWait time.Duration
	hosts := 0
	buf := make([]byte, 0, 64)
	var links []schedPage
	var batch []frontier.URL
	seed := schedPage{0, 0}
	seen[seed] = true
	found[0] = clk.Now()
	if err := f.Add(ctx, frontier.URL{URL: c.web.url(buf, seed)}); err != nil {
		tb.Fatal(err)
	}
	var inflight schedEvents
	idle, fetched := c.workers, 0
	var busy time.Duration
	var res schedResult
	for fetched < total {
		var ready time.Time
		for idle > 0 {
			l, rd, err := f.Poll()
			if err != nil {
				tb.Fatal(err)
			}
			if l == nil {
				ready = rd
				break
			}
			pg := parseSchedURL(l.URL.URL)
			if busyHost[pg.h] {
				tb.Fatalf("host %d leased twice at once", pg.h)
			}
			if d := lastDone[pg.h]; !d.IsZero() && clk.Now().Sub(d) < c.gap {
				tb.Fatalf("host %d contacted %v after its last request, gap %v", pg.h, clk.Now().Sub(d), c.gap)
			}
			busyHost[pg.h] = true
			heap.Push(&inflight, schedEvent{clk.Now().Add(c.fetch), l, !robots[pg.h]})
			if !robots[pg.h] {
				contactWait += clk.Now().Sub(found[pg.h])
				hosts++
			}
			robots[pg.h] = true
			idle--
		}
		t := ready
		if len(inflight) > 0 && (t.IsZero() || inflight[0].at.Before(t)) {
			t = inflight[0].at
		}
		if t.IsZero() {
			tb.Fatalf("simulation stalled after %d of %d pages: nothing in flight, nothing ready", fetched, total)
		}
		clk.Set(t)
		for len(inflight) > 0 && !inflight[0].at.After(clk.Now()) {
			e := heap.Pop(&inflight).(schedEvent)
			idle++
			busy += c.fetch
			h := parseSchedURL(e.l.URL.URL).h
			busyHost[h], lastDone[h] = false, clk.Now()
			if e.robots {
				if err := f.Done(e.l, frontier.Result{Duration: c.fetch, Requeue: true}); err != nil {
					tb.Fatal(err)
				}
				continue
			}
			pg := parseSchedURL(e.l.URL.URL)
			links = c.web.links(links[:0], pg.h, pg.p)
			batch = batch[:0]
			for _, ln := range links {
				if !seen[ln] {
					seen[ln] = true
					if found[ln.h].IsZero() {
						found[ln.h] = clk.Now()
					}
					batch = append(batch, frontier.URL{URL: c.web.url(buf, ln), Depth: e.l.URL.Depth + 1})
				}
			}
			if err := f.Add(ctx, batch...); err != nil {
				tb.Fatal(err)
			}
			if err := f.Done(e.l, frontier.Result{Duration: c.fetch}); err != nil {
				tb.Fatal(err)
			}
			fetched++
			if fetched == (total*99+99)/100 {
				res.t99 = clk.Now().Sub(frontiertest.Epoch)
			}
		}
	}
	res.makespan = clk.Now().Sub(frontiertest.Epoch)
	res.bound = c.bound()
	res.pages = fetched
	res.busy = busy.Seconds() / (res.makespan.Seconds() * float64(c.workers))
	res.firstContact = contactWait / time.Duration(max(hosts, 1))
	return res
}

// schedScenarios are the crawls of BenchmarkMakespan: a power-law web of
// 1,000 hosts (Pareto shape 1.5, 1 to 2,000 pages, about 19 on average,
// the biggest discovered last), 10 ms per request and a fixed 100 ms gap
// (K = 10 of the fetch time), crawled by few workers (back queues, 3 per
// worker, are scarce: most hosts wait for one), by the examples/crawler
// default of 64, and by as many workers as hosts.
func schedScenarios() []struct {
	name string
	c    schedConfig
} {
	web := newSchedWeb(1000, 7, 1.5, 2000, 1)
	var out []struct {
		name string
		c    schedConfig
	}
	for _, w := range []int{4, 16, 64, 1000} {
		out = append(out, struct {
			name string
			c    schedConfig
		}{fmt.Sprintf("workers=%d", w), schedConfig{web: web, workers: w, fetch: 10 * time.Millisecond, gap: 100 * time.Millisecond}})
	}
	return out
}

// BenchmarkMakespan measures, in simulated time, how close a crawl of a
// power-law web comes to the end no scheduler can beat: makespan/bound
// (1 is perfect), and the time to fetch 99% of the pages over the same
// bound. Deterministic: the figures do not depend on the machine.
func BenchmarkMakespan(b *testing.B) {
	for _, sc := range schedScenarios() {
		b.Run(sc.name, func(b *testing.B) {
			var r schedResult
			for b.Loop() {
				r = simulateSchedule(b, sc.c)
			}
			b.ReportMetric(float64(r.makespan)/float64(r.bound), "makespan/bound")
			b.ReportMetric(float64(r.t99)/float64(r.bound), "t99/bound")
			b.ReportMetric(r.makespan.Seconds(), "makespan-sim-s")
			b.ReportMetric(r.bound.Seconds(), "bound-sim-s")
			b.ReportMetric(100*r.busy, "%busy")
			b.ReportMetric(r.firstContact.Seconds(), "robots-wait-sim-s")
		})
	}
}

// leaseAll polls every lease that is ready now and reports each one Done
// with r; it returns the leased URLs in order.
func leaseAll(t *testing.T, m *frontier.Mercator, r frontier.Result) []string {
	t.Helper()
	var got []string
	for {
		l, _, err := m.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			return got
		}
		got = append(got, l.URL.URL)
		if err := m.Done(l, r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMostWorkOrder: among the hosts that may be contacted now, one whose
// first page is still to come goes first (robots.txt handed back does not
// change that), then the one with the most URLs queued; PriorityFirst
// puts the highest priority before both.
func TestMostWorkOrder(t *testing.T) {
	hour := frontier.Politeness{K: -1, MinDelay: time.Hour}
	noGap := frontier.Politeness{K: -1} // a host is ready again at once
	big := []frontier.URL{{URL: "http://big.test/1", Depth: 7}, {URL: "http://big.test/2", Depth: 7},
		{URL: "http://big.test/3", Depth: 7}}
	known := []frontier.URL{{URL: "http://known.test/0"}, {URL: "http://known.test/1"}, {URL: "http://known.test/2"},
		{URL: "http://known.test/3"}}
	for _, tc := range []struct {
		name  string
		order frontier.HostOrder
		pol   frontier.Politeness
		// setup: each group added, then its first URL leased and
		// finished, half a second apart; robots: added, then its first
		// URL leased and handed back with Requeue (robots.txt came
		// first). Both before add, a minute before the Poll.
		setup  [][]frontier.URL
		robots []frontier.URL
		add    []frontier.URL
		first  string
	}{{
		name: "most-urls",
		pol:  hour,
		add: []frontier.URL{{URL: "http://small.test/1"}, {URL: "http://big.test/1"}, {URL: "http://big.test/2"},
			{URL: "http://big.test/3"}, {URL: "http://other.test/1"}},
		first: "http://big.test/1",
	}, {
		name:  "size-before-priority",
		pol:   hour,
		add:   append(slices.Clone(big), frontier.URL{URL: "http://high.test/1", Depth: 0}),
		first: "http://big.test/1",
	}, {
		name:  "priority-first",
		order: frontier.PriorityFirst,
		pol:   hour,
		add:   append(slices.Clone(big), frontier.URL{URL: "http://high.test/1", Depth: 0}),
		first: "http://high.test/1",
	}, {
		name:  "never-contacted-before-size",
		pol:   noGap,
		setup: [][]frontier.URL{known},
		add:   []frontier.URL{{URL: "http://new.test/1"}},
		first: "http://new.test/1",
	}, {
		name:   "robots-fetched-before-size",
		pol:    noGap,
		setup:  [][]frontier.URL{known},
		robots: []frontier.URL{{URL: "http://new.test/1"}},
		first:  "http://new.test/1",
	}, {
		name: "page-fetched-by-size",
		// new.test waited half a second longer, but known.test holds two
		// URLs more: it is due 1.5 s before new.test.
		pol:   frontier.Politeness{K: -1, MinDelay: time.Second},
		setup: [][]frontier.URL{{{URL: "http://new.test/1"}, {URL: "http://new.test/2"}}, known},
		first: "http://known.test/1",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := frontiertest.NewFakeClock(frontiertest.Epoch)
			m := newMercator(t, frontier.Options{BackQueues: 8, Clock: clk, Politeness: tc.pol, HostOrder: tc.order})
			ctx := context.Background()
			groups := tc.setup
			if tc.robots != nil {
				groups = append(slices.Clone(groups), tc.robots)
			}
			for i, g := range groups {
				if err := m.Add(ctx, g...); err != nil {
					t.Fatal(err)
				}
				r := frontier.Result{Requeue: tc.robots != nil && i == len(groups)-1}
				if err := m.Done(poll(t, m, g[0].URL), r); err != nil {
					t.Fatal(err)
				}
				clk.Advance(time.Second / 2)
			}
			clk.Advance(time.Minute) // the setup's gaps are over
			if err := m.Add(ctx, tc.add...); err != nil {
				t.Fatal(err)
			}
			l, _, err := m.Poll()
			if err != nil || l == nil {
				t.Fatalf("Poll = %v, %v", l, err)
			}
			if l.URL.URL != tc.first {
				t.Errorf("first lease %s, want %s", l.URL.URL, tc.first)
			}
		})
	}
}

// TestMostWorkDue: of two contacted hosts that may be contacted now, the
// one that has waited longest goes first unless the other holds enough
// more URLs: a host holding n URLs is due n gaps before its contact time.
func TestMostWorkDue(t *testing.T) {
	for _, tc := range []struct {
		name  string
		big   int // URLs of big.test, which waited 3 gaps less than small.test
		first string
	}{
		{"overdue-small-first", 4, "http://small.test/1"}, // big due 3 gaps early: 1 gap after small
		{"tie-waited-longest", 5, "http://small.test/1"},  // both due at the same time
		{"big-first", 6, "http://big.test/1"},             // big due 1 gap before small
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := frontiertest.NewFakeClock(frontiertest.Epoch)
			m := newMercator(t, frontier.Options{BackQueues: 8, Clock: clk,
				Politeness: frontier.Politeness{K: -1, MinDelay: time.Second}})
			done := func(l *frontier.Lease) {
				t.Helper()
				if err := m.Done(l, frontier.Result{}); err != nil {
					t.Fatal(err)
				}
			}
			mustAdd(t, m, "http://small.test/0", "http://small.test/1")
			done(poll(t, m, "http://small.test/0")) // small.test: 1 URL, may be contacted at 1 s
			clk.Advance(3 * time.Second)
			var big []string
			for i := range tc.big {
				big = append(big, fmt.Sprintf("http://big.test/%d", i))
			}
			mustAdd(t, m, big...)
			done(poll(t, m, big[0])) // big.test: tc.big-1 URLs, may be contacted at 4 s
			clk.Advance(time.Second)
			poll(t, m, tc.first)
		})
	}
}

// TestMostWorkReleasesWaitingHost: with one back queue, a host that must
// wait out its gap gives the queue to a host that may be contacted now,
// and still is not contacted before its gap is over. The book's order
// keeps the queue for the waiting host.
func TestMostWorkReleasesWaitingHost(t *testing.T) {
	for _, tc := range []struct {
		order frontier.HostOrder
		want  []string // leased at the start, and after the hour
	}{
		{frontier.MostWork, []string{"http://a.test/1", "http://b.test/1", "|", "http://a.test/2"}},
		{frontier.EarliestContact, []string{"http://a.test/1", "|", "http://a.test/2", "http://b.test/1"}},
	} {
		t.Run(tc.order.String(), func(t *testing.T) {
			clk := frontiertest.NewFakeClock(frontiertest.Epoch)
			m := newMercator(t, frontier.Options{BackQueues: 1, FrontQueues: 1, Clock: clk, HostOrder: tc.order,
				Politeness: frontier.Politeness{K: -1, MinDelay: time.Hour}})
			// a.test takes the back queue; with MostWork a/2 joins it, in
			// the book's order it waits in the front queue.
			mustAdd(t, m, "http://a.test/1")
			mustAdd(t, m, "http://a.test/2")
			mustAdd(t, m, "http://b.test/1")
			got := leaseAll(t, m, frontier.Result{})
			got = append(got, "|")
			clk.Advance(time.Hour)
			got = append(got, leaseAll(t, m, frontier.Result{})...)
			if !slices.Equal(got, tc.want) {
				t.Errorf("leases %q, want %q", got, tc.want)
			}
		})
	}
}

// TestMostWorkKeepsBigHost: a host with more than 64 URLs queued keeps
// its back queue through its gaps (it is among the hosts that set the end
// of the crawl), and a URL found on it while it is crawled joins its
// queue; once it holds 64 it gives the queue up during its gap like any
// host.
func TestMostWorkKeepsBigHost(t *testing.T) {
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	m := newMercator(t, frontier.Options{BackQueues: 1, FrontQueues: 1, Clock: clk,
		Politeness: frontier.Politeness{K: -1, MinDelay: time.Second}})
	var big []string
	for i := range 70 {
		big = append(big, fmt.Sprintf("http://big.test/%d", i))
	}
	mustAdd(t, m, big[0]) // big.test takes the back queue, the rest joins it
	mustAdd(t, m, big[1:]...)
	mustAdd(t, m, "http://small.test/1")
	done := func(l *frontier.Lease) {
		t.Helper()
		if err := m.Done(l, frontier.Result{}); err != nil {
			t.Fatal(err)
		}
	}
	l := poll(t, m, big[0])
	mustAdd(t, m, "http://big.test/new") // found on big.test/0
	done(l)
	// big.test holds 70, then 69 ... 65 URLs after each lease: it keeps
	// the queue, and small.test waits.
	for i := 1; i <= 6; i++ {
		if l, ready, _ := m.Poll(); l != nil || !ready.Equal(clk.Now().Add(time.Second)) {
			t.Fatalf("after %d leases: Poll = %v, ready %v; want big.test to keep the queue", i, l, ready)
		}
		clk.Advance(time.Second)
		done(poll(t, m, big[i]))
	}
	// Down to 64: the queue goes to small.test while big.test waits.
	done(poll(t, m, "http://small.test/1"))
	if l, _, _ := m.Poll(); l != nil {
		t.Fatalf("leased %s before big.test's gap was over", l.URL.URL)
	}
	clk.Advance(time.Second)
	poll(t, m, big[7])
}

// TestMakespan runs the makespan simulation of BenchmarkMakespan with 16
// workers, on the in-memory store and on a store that is not one (the
// path package frontier/diskq takes): MostWork ends within 20% of the
// bound, where the book's order needs about 40% more than the bound.
func TestMakespan(t *testing.T) {
	sc := schedScenarios()[1] // workers=16
	for _, tc := range []struct {
		name  string
		order frontier.HostOrder
		store bool
		max   float64
	}{
		{"MostWork", frontier.MostWork, false, 1.2},
		{"MostWork/store", frontier.MostWork, true, 1.2},
		{"EarliestContact", frontier.EarliestContact, false, 1.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sc.c
			c.opts = func(o *frontier.Options) {
				o.HostOrder = tc.order
				if tc.store {
					o.Store = frontiertest.NewFaultyStore(frontier.NewMemStore())
				}
			}
			r := simulateSchedule(t, c)
			ratio := float64(r.makespan) / float64(r.bound)
			t.Logf("makespan %v, bound %v: %.3f; t99 %.3f; robots.txt after %v", r.makespan, r.bound, ratio,
				float64(r.t99)/float64(r.bound), r.firstContact)
			if ratio > tc.max {
				t.Errorf("makespan/bound %.3f, want ≤ %.2f", ratio, tc.max)
			}
		})
	}
}
