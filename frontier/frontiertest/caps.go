package frontiertest

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// The checks of the optional capabilities (Holder, Poller, Stater,
// Syncer): each skips when the frontier does not implement its interface.

// testHoldLeased: a Hold made while the key is leased outlives the Done
// of that lease, whether the key has more URLs queued or gets them
// later; and a Hold never shortens the gap a Done set.
func testHoldLeased(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name   string
		before int             // URLs of the key queued before the lease
		res    frontier.Result // of the leased URL
		hold   time.Duration   // Hold(key, Epoch+hold) while leased
		want   time.Duration   // the next lease not before Epoch+want
	}{
		{"more-queued", 2, frontier.Result{}, time.Minute, time.Minute},
		{"added-after-done", 1, frontier.Result{}, time.Minute, time.Minute},
		{"gap-longer-than-hold", 2, frontier.Result{CrawlDelay: time.Hour}, time.Minute, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := NewFakeClock(Epoch)
			f := open(t, h, opts(clk))
			hf, ok := f.(frontier.Holder)
			if !ok {
				t.Skip("frontier does not implement frontier.Holder")
			}
			ctx := context.Background()
			us := urls(2, 1, "hl")
			if err := f.Add(ctx, us[:tc.before]...); err != nil {
				t.Fatal(err)
			}
			l := nextOn(t, f, clk)
			hf.Hold(l.URL.Key, Epoch.Add(tc.hold))
			if err := f.Done(l, tc.res); err != nil {
				t.Fatal(err)
			}
			if tc.before < 2 {
				if err := f.Add(ctx, us[1]); err != nil {
					t.Fatal(err)
				}
			}
			l = nextOn(t, f, clk)
			if now := clk.Now(); now.Before(Epoch.Add(tc.want)) {
				t.Errorf("%s leased %v after the start, want ≥ %v (Hold until +%v while leased, Done %+v)",
					l.URL.URL, now.Sub(Epoch), tc.want, tc.hold, tc.res)
			}
			if err := f.Done(l, frontier.Result{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// pollNow calls p.Poll and fails the test if it blocks.
func pollNow(t *testing.T, p frontier.Poller) (*frontier.Lease, time.Time, error) {
	t.Helper()
	type res struct {
		l     *frontier.Lease
		ready time.Time
		err   error
	}
	ch := make(chan res, 1)
	go func() {
		l, ready, err := p.Poll()
		ch <- res{l, ready, err}
	}()
	select {
	case r := <-ch:
		return r.l, r.ready, r.err
	case <-time.After(5 * time.Second):
		t.Fatal("Poll blocked")
		return nil, time.Time{}, nil
	}
}

// testPoll: Poll hands out leases without blocking, the same leases Next
// would (one per key, in the key's order, Done-able), and when nothing is
// ready says when something will be: the end of a key's gap or a
// revisit's due time, zero when the frontier holds nothing.
func testPoll(t *testing.T, h Harness) {
	clk := NewFakeClock(Epoch)
	o := opts(clk)
	o.Politeness = frontier.Politeness{K: -1, MinDelay: time.Second}
	f := open(t, h, o)
	p, ok := f.(frontier.Poller)
	if !ok {
		t.Skip("frontier does not implement frontier.Poller")
	}
	ctx := context.Background()
	want := func(step string, l *frontier.Lease, ready time.Time, err error, wantURL string, wantReady time.Time) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: Poll: %v", step, err)
		}
		switch {
		case wantURL == "" && l != nil:
			t.Fatalf("%s: Poll leased %s, want nothing", step, l.URL.URL)
		case wantURL != "" && l == nil:
			t.Fatalf("%s: Poll leased nothing (ready %v), want %s", step, ready, wantURL)
		case l != nil && l.URL.URL != wantURL:
			t.Fatalf("%s: Poll leased %s, want %s", step, l.URL.URL, wantURL)
		case l != nil && !l.Time.Equal(clk.Now()):
			t.Errorf("%s: lease time %v, clock %v", step, l.Time, clk.Now())
		case l == nil && !ready.Equal(wantReady):
			t.Errorf("%s: Poll ready = %v, want %v", step, ready, wantReady)
		}
	}
	l, ready, err := pollNow(t, p)
	want("empty", l, ready, err, "", time.Time{})

	rev := frontier.URL{URL: "http://poll-rev.test/", Due: Epoch.Add(time.Hour)}
	if err := f.Add(ctx, rev); err != nil {
		t.Fatal(err)
	}
	l, ready, err = pollNow(t, p)
	want("one URL due in 1h", l, ready, err, "", rev.Due)

	x1, x2 := "http://poll.test/1", "http://poll.test/2"
	if err := f.Add(ctx, frontier.URL{URL: x1}, frontier.URL{URL: x2}); err != nil {
		t.Fatal(err)
	}
	l1, ready, err := pollNow(t, p)
	want("two URLs of a key", l1, ready, err, x1, time.Time{})
	l, _, err = pollNow(t, p)
	if err != nil || l != nil {
		t.Fatalf("Poll with the key leased = %v, %v; want no lease", l, err)
	}
	if err := f.Done(l1, frontier.Result{}); err != nil {
		t.Fatalf("Done of a polled lease: %v", err)
	}
	l, ready, err = pollNow(t, p)
	want("in the key's 1s gap", l, ready, err, "", Epoch.Add(time.Second))
	clk.Set(Epoch.Add(time.Second))
	l2, ready, err := pollNow(t, p)
	want("gap over", l2, ready, err, x2, time.Time{})
	if err := f.Done(l2, frontier.Result{}); err != nil {
		t.Fatal(err)
	}
	l, ready, err = pollNow(t, p)
	want("only the revisit left", l, ready, err, "", rev.Due)
	clk.Set(rev.Due)
	l, ready, err = pollNow(t, p)
	want("revisit due", l, ready, err, rev.URL, time.Time{})
	if err := f.Done(l, frontier.Result{}); err != nil {
		t.Fatal(err)
	}
	l, ready, err = pollNow(t, p)
	want("drained", l, ready, err, "", time.Time{})

	if c, ok := f.(io.Closer); ok {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := pollNow(t, p); !errors.Is(err, frontier.ErrClosed) {
			t.Errorf("Poll after Close = %v, want ErrClosed", err)
		}
	}
}

// testStats follows Stats through Add, Next, Done, Requeue, Revisit and
// a failed fetch: Queued, Leased and Waiting move as the URLs do (so
// Pending is what the crawl still owes), and the counters count.
func testStats(t *testing.T, h Harness) {
	clk := NewFakeClock(Epoch)
	f := open(t, h, opts(clk))
	s, ok := f.(frontier.Stater)
	if !ok {
		t.Skip("frontier does not implement frontier.Stater")
	}
	ctx := context.Background()
	check := func(step string, queued, leased, waiting int, added, leases, errs uint64) {
		t.Helper()
		st := s.Stats()
		if st.Queued != queued || st.Leased != leased || st.Waiting != waiting ||
			st.Added != added || st.Leases != leases || st.Errors != errs {
			t.Errorf("%s: Stats = %+v, want Queued %d Leased %d Waiting %d Added %d Leases %d Errors %d",
				step, st, queued, leased, waiting, added, leases, errs)
		}
		if st.Pending() != queued+leased+waiting {
			t.Errorf("%s: Pending = %d, want %d", step, st.Pending(), queued+leased+waiting)
		}
	}
	check("new", 0, 0, 0, 0, 0, 0)
	us := urls(3, 3, "st")
	us = append(us, frontier.URL{URL: "http://st-later.test/", Due: Epoch.Add(time.Hour)})
	if err := f.Add(ctx, us...); err != nil {
		t.Fatal(err)
	}
	check("Add 3 + 1 due later", 3, 0, 1, 4, 0, 0)
	l := nextOn(t, f, clk)
	check("Next", 2, 1, 1, 4, 1, 0)
	if err := f.Done(l, frontier.Result{Requeue: true}); err != nil {
		t.Fatal(err)
	}
	check("Done with Requeue", 3, 0, 1, 4, 1, 0)
	l = nextOn(t, f, clk)
	check("Next after Requeue", 2, 1, 1, 4, 2, 0)
	if err := f.Done(l, frontier.Result{Err: errors.New("boom"), Status: 0}); err != nil {
		t.Fatal(err)
	}
	check("Done with Err", 2, 0, 1, 4, 2, 1)
	l = nextOn(t, f, clk)
	if err := f.Done(l, frontier.Result{Revisit: clk.Now().Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	check("Done with Revisit", 1, 0, 2, 4, 3, 1)
	l = nextOn(t, f, clk)
	check("Next of the last queued", 0, 1, 2, 4, 4, 1)
	if err := f.Done(l, frontier.Result{}); err != nil {
		t.Fatal(err)
	}
	check("Done", 0, 0, 2, 4, 4, 1)
	for i := range 2 {
		l = nextOn(t, f, clk) // moves the clock to the revisits
		if st := s.Stats(); st.Leased != 1 || st.Pending() != 2-i {
			t.Errorf("revisit %d leased: Stats = %+v, want 1 leased, %d pending", i, st, 2-i)
		}
		if err := f.Done(l, frontier.Result{}); err != nil {
			t.Fatal(err)
		}
	}
	check("drained", 0, 0, 0, 4, 6, 1)
}

// testSync: Sync succeeds with leases out and changes nothing a caller
// sees; with Harness.Crash, a frontier reopened after a crash that
// followed Sync holds every URL not finished before the Sync (the leased
// ones queued again) and its revisits, and none of the finished ones;
// after Close, Sync returns ErrClosed.
func testSync(t *testing.T, h Harness) {
	clk := NewFakeClock(Epoch)
	o := opts(clk)
	f := open(t, h, o)
	sy, ok := f.(frontier.Syncer)
	if !ok {
		t.Skip("frontier does not implement frontier.Syncer")
	}
	ctx := context.Background()
	all := urls(200, 40, "sy") // 30 leases reach no key twice: FIFO would wait
	if err := f.Add(ctx, all...); err != nil {
		t.Fatal(err)
	}
	done := make(map[string]bool)
	var leased []*frontier.Lease
	revisit := ""
	for i := range 30 {
		l := nextOn(t, f, clk)
		switch {
		case i%4 == 0:
			leased = append(leased, l)
		case i == 1:
			revisit = l.URL.URL
			if err := f.Done(l, frontier.Result{Revisit: Epoch.Add(time.Hour), Fingerprint: 9}); err != nil {
				t.Fatal(err)
			}
		default:
			done[l.URL.URL] = true
			if err := f.Done(l, frontier.Result{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var before frontier.Stats
	st, stater := f.(frontier.Stater)
	if stater {
		before = st.Stats()
	}
	if err := sy.Sync(); err != nil {
		t.Fatalf("Sync with %d leases out: %v", len(leased), err)
	}
	if stater {
		if after := st.Stats(); after != before {
			t.Errorf("Stats changed by Sync: %+v, before %+v", after, before)
		}
	}
	var want []frontier.URL
	for _, u := range all {
		if !done[u.URL] && u.URL != revisit {
			want = append(want, u)
		}
	}
	var g frontier.Frontier // f after a crash that followed the Sync
	if h.Crash != nil {
		g = h.Crash(t, f, o)
		t.Cleanup(func() { closeF(t, g) })
	}
	// The frontier synced goes on as if nothing happened.
	leasedURL := make(map[string]bool)
	for _, l := range leased {
		leasedURL[l.URL.URL] = true
		if err := f.Done(l, frontier.Result{}); err != nil {
			t.Errorf("Done of a lease taken before Sync: %v", err)
		}
	}
	var rest []frontier.URL
	for _, u := range want {
		if !leasedURL[u.URL] {
			rest = append(rest, u)
		}
	}
	checkExactlyOnce(t, drain(t, f, len(rest), 4), rest)
	if g != nil {
		if s, ok := g.(frontier.Stater); ok {
			if st := s.Stats(); st.Queued != len(want) || st.Waiting != 1 || st.Leased != 0 {
				t.Fatalf("Stats after a crash = %+v, want %d queued (%d of them leased at Sync), 1 waiting",
					st, len(want), len(leased))
			}
		}
		checkExactlyOnce(t, drain(t, g, len(want), 4), want)
		clk.Advance(2 * time.Hour)
		l := nextOn(t, g, clk)
		if l.URL.URL != revisit || l.URL.Fingerprint != 9 {
			t.Errorf("revisit after a crash = %+v, want %s with fingerprint 9", l.URL, revisit)
		}
	}
	if c, ok := f.(io.Closer); ok {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sy.Sync(); !errors.Is(err, frontier.ErrClosed) {
			t.Errorf("Sync after Close = %v, want ErrClosed", err)
		}
	}
}
