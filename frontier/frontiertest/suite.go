package frontiertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// Harness tells Run how to make the frontier under test.
type Harness struct {
	// New returns an empty frontier configured with o. The suite sets
	// Clock, Politeness, Workers, FrontQueues and Seed; New may set
	// anything else (a Store, for instance). Frontiers that implement
	// io.Closer are closed when the test ends.
	New func(t *testing.T, o frontier.Options) frontier.Frontier
	// Reopen, if set, stops f and returns a frontier with f's content as a
	// restart would see it (a persistent store reopened). When nil and f
	// is a frontier.Checkpointer, the suite checkpoints f into memory,
	// closes it, and restores into a new one; when neither, the restart
	// tests are skipped.
	Reopen func(t *testing.T, f frontier.Frontier, o frontier.Options) frontier.Frontier
	// Prioritized says the frontier honours priorities (the URL's Depth,
	// through the default Depth prioritizer); the priority bias test is
	// skipped otherwise.
	Prioritized bool
	// Crash, if set, returns a frontier opened on what f made durable, as
	// a process that crashed at this moment would find it (a persistent
	// store copied while open, then reopened). f is left open; the suite
	// closes it. The Sync test uses it to check that a frontier.Syncer
	// brings back every URL not finished before its last Sync; without
	// it, that part is skipped.
	Crash func(t *testing.T, f frontier.Frontier, o frontier.Options) frontier.Frontier
	// Skip names subtests the implementation is known to fail, each with
	// the reason, which the subtest reports as it skips.
	Skip map[string]string
}

// Epoch is the start time of the suite's fake clocks.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"NoLossNoDuplicates", testNoLoss},
		{"OneLeasePerKey", testOneLease},
		{"GapsHonoured", testGaps},
		{"GapFromFetchEnd", testGapFromEnd},
		{"SkippedNoGap", testSkipped},
		{"PriorityBias", testPriority},
		{"NextUnblocksOnCancel", testCancel},
		{"NextUnblocksOnAdd", testUnblockAdd},
		{"Race64", testRace64},
		{"Revisit", testRevisit},
		{"Requeue", testRequeue},
		{"Hold", testHold},
		{"HoldWhileLeased", testHoldLeased},
		{"Poll", testPoll},
		{"Stats", testStats},
		{"Sync", testSync},
		{"DoneErrors", testDoneErrors},
		{"CheckpointRestore", testRestart},
		{"Close", testClose},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if reason, ok := h.Skip[tc.name]; ok {
				t.Skip("known deviation: " + reason)
			}
			tc.fn(t, h)
		})
	}
}

func opts(clk frontier.Clock) frontier.Options {
	return frontier.Options{Clock: clk, Workers: 4, FrontQueues: 8, Seed: 7, Politeness: frontier.Politeness{K: -1}}
}

func open(t *testing.T, h Harness, o frontier.Options) frontier.Frontier {
	t.Helper()
	f := h.New(t, o)
	t.Cleanup(func() { closeF(t, f) })
	return f
}

func closeF(t *testing.T, f frontier.Frontier) {
	if c, ok := f.(io.Closer); ok {
		if err := c.Close(); err != nil && !errors.Is(err, frontier.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	}
}

// urls returns n URLs spread round-robin over hosts hosts.
func urls(n, hosts int, prefix string) []frontier.URL {
	us := make([]frontier.URL, n)
	for i := range us {
		us[i] = frontier.URL{URL: fmt.Sprintf("http://%s%d.test/p%d", prefix, i%hosts, i)}
	}
	return us
}

// drain leases and finishes want URLs with workers goroutines and returns
// how often each URL was leased.
func drain(t *testing.T, f frontier.Frontier, want, workers int) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	seen := make(map[string]int)
	var done atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for done.Load() < int64(want) {
				l, err := f.Next(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				seen[l.URL.URL]++
				mu.Unlock()
				if err := f.Done(l, frontier.Result{}); err != nil {
					t.Errorf("Done: %v", err)
				}
				if done.Add(1) >= int64(want) {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	if n := done.Load(); n < int64(want) {
		t.Fatalf("drained %d of %d URLs before the deadline", n, want)
	}
	return seen
}

func checkExactlyOnce(t *testing.T, seen map[string]int, want []frontier.URL) {
	t.Helper()
	for _, u := range want {
		if seen[u.URL] != 1 {
			t.Errorf("%s leased %d times, want 1", u.URL, seen[u.URL])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("leased %d distinct URLs, want %d", len(seen), len(want))
	}
}

func testNoLoss(t *testing.T, h Harness) {
	for _, tc := range []struct{ n, hosts, workers int }{
		{1, 1, 1}, {100, 1, 4}, {3000, 37, 8}, {500, 500, 3},
	} {
		t.Run(fmt.Sprintf("n%d_hosts%d", tc.n, tc.hosts), func(t *testing.T) {
			f := open(t, h, opts(NewFakeClock(Epoch)))
			us := urls(tc.n, tc.hosts, "h")
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(us), func(i, j int) { us[i], us[j] = us[j], us[i] })
			for i := 0; i < len(us); i += 100 {
				if err := f.Add(context.Background(), us[i:min(i+100, len(us))]...); err != nil {
					t.Fatal(err)
				}
			}
			checkExactlyOnce(t, drain(t, f, tc.n, tc.workers), us)
			if s, ok := f.(frontier.Stater); ok {
				if st := s.Stats(); st.Pending() != 0 || st.Leases != uint64(tc.n) {
					t.Errorf("Stats after drain = %+v", st)
				}
			}
		})
	}
}

func testOneLease(t *testing.T, h Harness) {
	f := open(t, h, opts(NewFakeClock(Epoch)))
	const n, hosts = 2000, 5
	us := urls(n, hosts, "k")
	if err := f.Add(context.Background(), us...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	active := make(map[string]int)
	var done, violations atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for done.Load() < n {
				l, err := f.Next(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				active[l.URL.Key]++
				if active[l.URL.Key] > 1 {
					violations.Add(1)
				}
				mu.Unlock()
				runtime.Gosched()
				mu.Lock()
				active[l.URL.Key]--
				mu.Unlock()
				if err := f.Done(l, frontier.Result{}); err != nil {
					t.Errorf("Done: %v", err)
				}
				if done.Add(1) == n {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	if v := violations.Load(); v > 0 {
		t.Errorf("%d times two leases were out for one key", v)
	}
	if done.Load() != n {
		t.Errorf("finished %d of %d", done.Load(), n)
	}
}

// nextOn calls f.Next and, while it blocks on a timer, moves clk to the
// timer's deadline: the frontier's waiting is done in fake time.
func nextOn(t *testing.T, f frontier.Frontier, clk *FakeClock) *frontier.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type res struct {
		l   *frontier.Lease
		err error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := f.Next(ctx)
		ch <- res{l, err}
	}()
	for {
		select {
		case r := <-ch:
			if r.err != nil {
				t.Fatalf("Next: %v", r.err)
			}
			return r.l
		case <-time.After(200 * time.Microsecond):
			if d, ok := clk.NextDeadline(); ok {
				clk.Set(d)
			}
		}
	}
}

func testGaps(t *testing.T, h Harness) {
	const fetch = 3 * time.Millisecond
	for _, tc := range []struct {
		name string
		pol  frontier.Politeness
		res  frontier.Result
		gap  time.Duration
	}{
		{"k10", frontier.Politeness{K: 10}, frontier.Result{Duration: fetch}, 30 * time.Millisecond},
		{"min-delay", frontier.Politeness{K: 2, MinDelay: 50 * time.Millisecond}, frontier.Result{Duration: fetch}, 50 * time.Millisecond},
		{"crawl-delay", frontier.Politeness{K: 10}, frontier.Result{Duration: fetch, CrawlDelay: time.Second}, time.Second},
		{"retry-after", frontier.Politeness{K: 10}, frontier.Result{Duration: fetch, Status: 429, RetryAfter: 2 * time.Second}, 2 * time.Second},
		{"max-delay", frontier.Politeness{K: 10, MaxDelay: 500 * time.Millisecond}, frontier.Result{Duration: fetch, RetryAfter: time.Hour}, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := NewFakeClock(Epoch)
			o := opts(clk)
			o.Politeness = tc.pol
			f := open(t, h, o)
			const hosts, per = 3, 4
			if err := f.Add(context.Background(), urls(hosts*per, hosts, "g")...); err != nil {
				t.Fatal(err)
			}
			last := make(map[string]time.Time)
			for range hosts * per {
				l := nextOn(t, f, clk)
				now := clk.Now()
				if prev, ok := last[l.URL.Key]; ok && now.Sub(prev) < tc.gap {
					t.Errorf("%s contacted %v after the previous fetch ended, want ≥ %v", l.URL.Key, now.Sub(prev), tc.gap)
				}
				if l.Time.After(now) {
					t.Errorf("lease time %v after clock %v", l.Time, now)
				}
				clk.Advance(fetch)
				last[l.URL.Key] = clk.Now()
				if err := f.Done(l, tc.res); err != nil {
					t.Fatal(err)
				}
			}
			// Work conservation: with 3 hosts in rotation the crawl takes
			// about per gaps, not hosts × per.
			if el, bound := clk.Now().Sub(Epoch), time.Duration(per)*(tc.gap+fetch)+tc.gap; el > bound && h.Prioritized {
				t.Errorf("crawl took %v of fake time, want ≤ %v", el, bound)
			}
		})
	}
}

// testGapFromEnd checks that the gap runs from Result.Ended, the end of
// the fetch, not from Done, which comes after the page was parsed and
// committed: the host has been idle since Ended. An Ended in the future
// counts as Done's time.
func testGapFromEnd(t *testing.T, h Harness) {
	const fetch, work = 3 * time.Millisecond, 20 * time.Millisecond
	const gap = 10 * fetch // K = 10
	for _, tc := range []struct {
		name  string
		ended func(end, done time.Time) time.Time
		from  func(end, done time.Time) time.Time // when the gap starts
	}{
		{"ended", func(end, _ time.Time) time.Time { return end }, func(end, _ time.Time) time.Time { return end }},
		{"zero", func(time.Time, time.Time) time.Time { return time.Time{} }, func(_, done time.Time) time.Time { return done }},
		{"future", func(_, done time.Time) time.Time { return done.Add(time.Hour) }, func(_, done time.Time) time.Time { return done }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := NewFakeClock(Epoch)
			o := opts(clk)
			o.Politeness = frontier.Politeness{K: 10}
			f := open(t, h, o)
			if err := f.Add(context.Background(), urls(2, 1, "e")...); err != nil {
				t.Fatal(err)
			}
			l := nextOn(t, f, clk)
			clk.Advance(fetch)
			end := clk.Now()
			clk.Advance(work)
			done := clk.Now()
			if err := f.Done(l, frontier.Result{Duration: fetch, Ended: tc.ended(end, done)}); err != nil {
				t.Fatal(err)
			}
			l = nextOn(t, f, clk)
			if got, want := clk.Now(), tc.from(end, done).Add(gap); !got.Equal(want) {
				t.Errorf("next contact %v after the fetch ended, want %v", got.Sub(end), want.Sub(end))
			}
			if err := f.Done(l, frontier.Result{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// testSkipped checks that a lease done with Result.Skipped (the key was
// not contacted) leaves the key's next contact where it was: the key's
// next URL comes at once, not a gap later.
func testSkipped(t *testing.T, h Harness) {
	clk := NewFakeClock(Epoch)
	o := opts(clk)
	o.Politeness = frontier.Politeness{K: 10, MinDelay: time.Second}
	f := open(t, h, o)
	if err := f.Add(context.Background(), urls(3, 1, "s")...); err != nil {
		t.Fatal(err)
	}
	l := nextOn(t, f, clk)
	clk.Advance(time.Millisecond)
	if err := f.Done(l, frontier.Result{Skipped: true, Duration: time.Hour, RetryAfter: time.Hour}); err != nil {
		t.Fatal(err)
	}
	done := clk.Now()
	l = nextOn(t, f, clk)
	if got := clk.Now(); !got.Equal(done) {
		t.Errorf("after a skipped lease the key came back %v later, want at once", got.Sub(done))
	}
	clk.Advance(time.Millisecond)
	end := clk.Now()
	if err := f.Done(l, frontier.Result{Duration: time.Millisecond, Ended: end}); err != nil {
		t.Fatal(err)
	}
	nextOn(t, f, clk)
	if got := clk.Now(); got.Sub(end) < time.Second {
		t.Errorf("after a fetch the key came back %v later, want the 1s gap", got.Sub(end))
	}
}

// testRequeue hands every URL back once with Result.Requeue (a robots.txt
// fetch, a 429) before finishing it: each comes back exactly once more,
// never before its key's gap, and nothing is lost.
func testRequeue(t *testing.T, h Harness) {
	const fetch, gap = 2 * time.Millisecond, 40 * time.Millisecond
	clk := NewFakeClock(Epoch)
	o := opts(clk)
	o.Politeness = frontier.Politeness{K: 20}
	f := open(t, h, o)
	const hosts, per = 3, 3
	us := urls(hosts*per, hosts, "rq")
	if err := f.Add(context.Background(), us...); err != nil {
		t.Fatal(err)
	}
	leased := make(map[string]int)
	last := make(map[string]time.Time)
	requeued := make(map[string]string) // key → URL handed back, not leased since
	for range 2 * hosts * per {
		l := nextOn(t, f, clk)
		now := clk.Now()
		if prev, ok := last[l.URL.Key]; ok && now.Sub(prev) < gap {
			t.Errorf("%s contacted %v after the previous request ended, want ≥ %v", l.URL.Key, now.Sub(prev), gap)
		}
		if u, ok := requeued[l.URL.Key]; ok && u != l.URL.URL {
			t.Errorf("%s: %s was handed back, but %s came out first", l.URL.Key, u, l.URL.URL)
		}
		delete(requeued, l.URL.Key)
		leased[l.URL.URL]++
		if leased[l.URL.URL] == 1 {
			requeued[l.URL.Key] = l.URL.URL
		}
		clk.Advance(fetch)
		last[l.URL.Key] = clk.Now()
		res := frontier.Result{Duration: fetch, Requeue: leased[l.URL.URL] == 1}
		if err := f.Done(l, res); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range us {
		if leased[u.URL] != 2 {
			t.Errorf("%s leased %d times, want 2 (once requeued, once finished)", u.URL, leased[u.URL])
		}
	}
	if s, ok := f.(frontier.Stater); ok {
		if st := s.Stats(); st.Pending() != 0 {
			t.Errorf("Stats after drain = %+v, want nothing pending", st)
		}
	}
}

// testHold: a held key is not leased before its time, whether its URLs
// were queued before the hold or after; other keys are not delayed (but
// by a FIFO's head of line, which the suite allows unless Prioritized).
func testHold(t *testing.T, h Harness) {
	clk := NewFakeClock(Epoch)
	f := open(t, h, opts(clk))
	hf, ok := f.(frontier.Holder)
	if !ok {
		t.Skip("frontier does not implement frontier.Holder")
	}
	ctx := context.Background()
	before := []frontier.URL{{URL: "http://held.test/a"}, {URL: "http://free.test/a"}}
	if err := f.Add(ctx, before...); err != nil {
		t.Fatal(err)
	}
	until := Epoch.Add(time.Minute)
	hf.Hold("held.test", until)
	hf.Hold("later.test", until)
	hf.Hold("held.test", Epoch.Add(time.Second)) // an earlier time changes nothing
	if err := f.Add(ctx, frontier.URL{URL: "http://later.test/a"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l := nextOn(t, f, clk)
		now := clk.Now()
		switch l.URL.Key {
		case "free.test":
			if now.After(Epoch) && h.Prioritized {
				t.Errorf("free.test waited until %v", now)
			}
		default:
			if now.Before(until) {
				t.Errorf("%s leased at %v, held until %v", l.URL.Key, now, until)
			}
		}
		if err := f.Done(l, frontier.Result{}); err != nil {
			t.Fatal(err)
		}
	}
}

func testPriority(t *testing.T, h Harness) {
	if !h.Prioritized {
		t.Skip("frontier does not prioritize")
	}
	f := open(t, h, opts(NewFakeClock(Epoch)))
	const n = 400
	var low, high []frontier.URL
	for i := range n {
		low = append(low, frontier.URL{URL: fmt.Sprintf("http://low%d.test/", i), Depth: 7})
		high = append(high, frontier.URL{URL: fmt.Sprintf("http://high%d.test/", i), Depth: 0})
	}
	ctx := context.Background()
	// Low priority first: a FIFO would hand all of them out first.
	if err := f.Add(ctx, low...); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(ctx, high...); err != nil {
		t.Fatal(err)
	}
	var sumLow, sumHigh float64
	for i := range 2 * n {
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if l.URL.Depth == 0 {
			sumHigh += float64(i)
		} else {
			sumLow += float64(i)
		}
		if err := f.Done(l, frontier.Result{}); err != nil {
			t.Fatal(err)
		}
	}
	mh, ml := sumHigh/n, sumLow/n
	t.Logf("mean rank: high %.0f, low %.0f", mh, ml)
	if mh > 0.75*ml {
		t.Errorf("high priority mean rank %.0f not well ahead of low %.0f", mh, ml)
	}
}

func testCancel(t *testing.T, h Harness) {
	for _, name := range []string{"empty", "waiting-for-gap"} {
		t.Run(name, func(t *testing.T) {
			clk := NewFakeClock(Epoch)
			o := opts(clk)
			o.Politeness = frontier.Politeness{MinDelay: time.Hour}
			f := open(t, h, o)
			if name != "empty" {
				ctx := context.Background()
				if err := f.Add(ctx, urls(2, 1, "c")...); err != nil {
					t.Fatal(err)
				}
				l, err := f.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Done(l, frontier.Result{}); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := f.Next(ctx)
				errc <- err
			}()
			time.Sleep(10 * time.Millisecond)
			cancel()
			select {
			case err := <-errc:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Next after cancel: %v, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Next did not return after cancel")
			}
		})
	}
}

func testUnblockAdd(t *testing.T, h Harness) {
	f := open(t, h, opts(NewFakeClock(Epoch)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	type res struct {
		l   *frontier.Lease
		err error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := f.Next(ctx)
		ch <- res{l, err}
	}()
	time.Sleep(10 * time.Millisecond)
	u := frontier.URL{URL: "http://late.test/x"}
	if err := f.Add(ctx, u); err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil || r.l.URL.URL != u.URL {
		t.Fatalf("Next = %v, %v; want a lease on %s", r.l, r.err, u.URL)
	}
}

// testRace64 runs a crawl-like workload: 64 workers, each leased URL
// adds its children, URLs over 200 keys.
func testRace64(t *testing.T, h Harness) {
	f := open(t, h, opts(NewFakeClock(Epoch)))
	const n, hosts = 4000, 200
	mk := func(i int) frontier.URL {
		return frontier.URL{URL: fmt.Sprintf("http://r%d.test/%d", i%hosts, i), Depth: min(i/100, 7)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := f.Add(ctx, mk(0), mk(1), mk(2)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := make(map[string]int)
	active := make(map[string]bool)
	var done atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for done.Load() < n {
				l, err := f.Next(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				seen[l.URL.URL]++
				if active[l.URL.Key] {
					t.Errorf("two leases on %s", l.URL.Key)
				}
				active[l.URL.Key] = true
				mu.Unlock()
				var i int
				fmt.Sscanf(l.URL.URL[len("http://"):], "r%d.test/%d", new(int), &i)
				var kids []frontier.URL
				for _, c := range []int{3*i + 3, 3*i + 4, 3*i + 5} {
					if c < n {
						kids = append(kids, mk(c))
					}
				}
				if err := f.Add(ctx, kids...); err != nil && ctx.Err() == nil {
					t.Errorf("Add: %v", err)
				}
				mu.Lock()
				active[l.URL.Key] = false
				mu.Unlock()
				if err := f.Done(l, frontier.Result{Duration: time.Millisecond}); err != nil {
					t.Errorf("Done: %v", err)
				}
				if done.Add(1) == n {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	if done.Load() != n {
		t.Fatalf("crawled %d of %d", done.Load(), n)
	}
	for i := range n {
		if c := seen[mk(i).URL]; c != 1 {
			t.Errorf("%s leased %d times", mk(i).URL, c)
		}
	}
}

func testRevisit(t *testing.T, h Harness) {
	clk := NewFakeClock(Epoch)
	f := open(t, h, opts(clk))
	ctx := context.Background()
	u := frontier.URL{URL: "http://rev.test/page"}
	if err := f.Add(ctx, u); err != nil {
		t.Fatal(err)
	}
	fps := []uint64{11, 11, 12}
	// Validators ride with the URL: a round that reports none (a 304
	// need not repeat them) keeps the previous ones.
	etags := []string{`"a"`, "", `"c"`}
	wantETag := []string{"", `"a"`, `"a"`, `"c"`}
	for round, fp := range fps {
		l := nextOn(t, f, clk)
		if l.URL.URL != u.URL {
			t.Fatalf("round %d: leased %s", round, l.URL.URL)
		}
		if round > 0 {
			if l.URL.Fingerprint != fps[round-1] {
				t.Errorf("round %d: Fingerprint %d, want %d", round, l.URL.Fingerprint, fps[round-1])
			}
			if got := l.URL.History.Fetches; got != uint32(round) {
				t.Errorf("round %d: Fetches %d", round, got)
			}
		}
		if l.URL.ETag != wantETag[round] {
			t.Errorf("round %d: ETag %q, want %q", round, l.URL.ETag, wantETag[round])
		}
		lastMod := ""
		if etags[round] != "" {
			lastMod = fmt.Sprintf("Mon, 0%d Nov 2026 10:00:00 GMT", round+1)
		}
		due := clk.Now().Add(time.Hour)
		if err := f.Done(l, frontier.Result{Fingerprint: fp, Revisit: due, ETag: etags[round], LastModified: lastMod}); err != nil {
			t.Fatal(err)
		}
		// Not before it is due.
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		if l, err := f.Next(short); err == nil {
			t.Errorf("round %d: %s handed out before due", round, l.URL.URL)
		}
		cancel()
		if clk.Now().Before(due.Add(-time.Minute)) {
			clk.Set(due.Add(-time.Minute))
		}
	}
	l := nextOn(t, f, clk)
	if h := l.URL.History; h.Fetches != 3 || h.Changes != 1 {
		t.Errorf("History after fingerprints %v = %+v, want 3 fetches, 1 change", fps, h)
	}
	if l.URL.ETag != wantETag[3] || l.URL.LastModified != "Mon, 03 Nov 2026 10:00:00 GMT" {
		t.Errorf("validators after three rounds: %q, %q", l.URL.ETag, l.URL.LastModified)
	}
	if err := f.Done(l, frontier.Result{}); err != nil {
		t.Fatal(err)
	}
}

func testDoneErrors(t *testing.T, h Harness) {
	f := open(t, h, opts(NewFakeClock(Epoch)))
	g := open(t, h, opts(NewFakeClock(Epoch)))
	ctx := context.Background()
	if err := f.Add(ctx, urls(2, 2, "d")...); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(ctx, urls(1, 1, "e")...); err != nil {
		t.Fatal(err)
	}
	l, err := f.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, fn := range map[string]func() error{
		"nil":          func() error { return f.Done(nil, frontier.Result{}) },
		"foreign":      func() error { return f.Done(lg, frontier.Result{}) },
		"never leased": func() error { return f.Done(&frontier.Lease{URL: l.URL}, frontier.Result{}) },
	} {
		if err := fn(); !errors.Is(err, frontier.ErrUnknownLease) {
			t.Errorf("Done(%s) = %v, want ErrUnknownLease", name, err)
		}
	}
	if err := f.Done(l, frontier.Result{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Done(l, frontier.Result{}); !errors.Is(err, frontier.ErrUnknownLease) {
		t.Errorf("second Done = %v, want ErrUnknownLease", err)
	}
	if err := f.Add(ctx, frontier.URL{}); err == nil {
		t.Error("Add of an empty URL succeeded")
	}
}

// reopen restarts f the way the harness says.
func reopen(t *testing.T, h Harness, f frontier.Frontier, o frontier.Options) frontier.Frontier {
	t.Helper()
	if h.Reopen != nil {
		g := h.Reopen(t, f, o)
		t.Cleanup(func() { closeF(t, g) })
		return g
	}
	cp, ok := f.(frontier.Checkpointer)
	if !ok {
		t.Skip("frontier neither checkpoints nor reopens")
	}
	var buf bytes.Buffer
	if err := cp.Checkpoint(&buf); err != nil {
		t.Fatal(err)
	}
	closeF(t, f)
	g := open(t, h, o)
	if _, err := frontier.Restore(context.Background(), g, &buf); err != nil {
		t.Fatal(err)
	}
	return g
}

func testRestart(t *testing.T, h Harness) {
	if h.Reopen == nil {
		if _, ok := open(t, h, opts(NewFakeClock(Epoch))).(frontier.Checkpointer); !ok {
			t.Skip("frontier neither checkpoints nor reopens")
		}
	}
	clk := NewFakeClock(Epoch)
	o := opts(clk)
	f := h.New(t, o)
	reopened := false
	t.Cleanup(func() {
		if !reopened {
			closeF(t, f)
		}
	})
	ctx := context.Background()
	all := urls(600, 40, "s")
	if err := f.Add(ctx, all...); err != nil {
		t.Fatal(err)
	}
	done := make(map[string]bool)
	var revisit string
	for i := range 30 {
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i%3 == 0: // leased, never Done: must come back
		case i == 1:
			revisit = l.URL.URL
			if err := f.Done(l, frontier.Result{Revisit: clk.Now().Add(time.Hour), Fingerprint: 5}); err != nil {
				t.Fatal(err)
			}
		default:
			done[l.URL.URL] = true
			if err := f.Done(l, frontier.Result{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	reopened = true
	g := reopen(t, h, f, o)
	if s, ok := g.(frontier.Stater); ok {
		st := s.Stats()
		if st.Queued != len(all)-len(done)-1 || st.Waiting != 1 || st.Leased != 0 {
			t.Errorf("Stats after restart = %+v, want %d queued, 1 waiting", st, len(all)-len(done)-1)
		}
	}
	var want []frontier.URL
	for _, u := range all {
		if !done[u.URL] && u.URL != revisit {
			want = append(want, u)
		}
	}
	checkExactlyOnce(t, drain(t, g, len(want), 4), want)
	clk.Advance(2 * time.Hour)
	l := nextOn(t, g, clk)
	if l.URL.URL != revisit || l.URL.Fingerprint != 5 || l.URL.History.Fetches != 1 {
		t.Errorf("revisit after restart = %+v, want %s with fingerprint 5", l.URL, revisit)
	}
}

func testClose(t *testing.T, h Harness) {
	f := h.New(t, opts(NewFakeClock(Epoch)))
	c, ok := f.(io.Closer)
	if !ok {
		t.Skip("not an io.Closer")
	}
	errc := make(chan error, 1)
	go func() {
		_, err := f.Next(context.Background())
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, frontier.ErrClosed) {
			t.Errorf("blocked Next after Close = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Next")
	}
	if err := f.Add(context.Background(), frontier.URL{URL: "http://x.test/"}); !errors.Is(err, frontier.ErrClosed) {
		t.Errorf("Add after Close = %v, want ErrClosed", err)
	}
}
