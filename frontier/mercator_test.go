package frontier_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

func newMercator(t *testing.T, o frontier.Options) *frontier.Mercator {
	t.Helper()
	m, err := frontier.NewMercator(&o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func mustAdd(t *testing.T, f frontier.Frontier, raw ...string) {
	t.Helper()
	us := make([]frontier.URL, len(raw))
	for i, r := range raw {
		us[i] = frontier.URL{URL: r}
	}
	if err := f.Add(context.Background(), us...); err != nil {
		t.Fatal(err)
	}
}

// poll expects a lease on want now.
func poll(t *testing.T, p frontier.Poller, want string) *frontier.Lease {
	t.Helper()
	l, ready, err := p.Poll()
	if err != nil || l == nil {
		t.Fatalf("Poll = %v, ready %v, %v; want a lease on %s", l, ready, err, want)
	}
	if l.URL.URL != want {
		t.Fatalf("leased %s, want %s", l.URL.URL, want)
	}
	return l
}

// TestRefillByTheBook walks through the back queue refill of IIR §20.2.3
// with B = 2 in the book's host order: a front URL whose host has a back
// queue joins it, and the refill goes on until a new host fills the empty
// queue.
func TestRefillByTheBook(t *testing.T) {
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	m := newMercator(t, frontier.Options{BackQueues: 2, FrontQueues: 1, Clock: clk, HostOrder: frontier.EarliestContact,
		Politeness: frontier.Politeness{MinDelay: time.Hour, K: -1}})
	mustAdd(t, m, "http://a.test/1", "http://a.test/2", "http://b.test/1", "http://c.test/1", "http://a.test/3")
	// Back queue 0 took a.test; refilling queue 1 moved a/2 behind a/1
	// and stopped at b/1.
	if st := m.Stats(); st.Keys != 2 || st.Queued != 5 {
		t.Fatalf("after Add: %+v, want 2 keys", st)
	}
	done := func(l *frontier.Lease) {
		if err := m.Done(l, frontier.Result{}); err != nil {
			t.Fatal(err)
		}
	}
	done(poll(t, m, "http://a.test/1"))
	done(poll(t, m, "http://b.test/1")) // b's queue empties and takes c
	done(poll(t, m, "http://c.test/1")) // c's queue empties: a/3 joins a's queue, front runs dry
	if st := m.Stats(); st.Keys != 1 || st.Queued != 2 {
		t.Fatalf("after refills: %+v, want a.test alone with 2 URLs", st)
	}
	l, ready, err := m.Poll()
	if l != nil || err != nil || !ready.Equal(frontiertest.Epoch.Add(time.Hour)) {
		t.Fatalf("Poll = %v, %v, %v; want to wait for a.test until +1h", l, ready, err)
	}
	clk.Advance(time.Hour)
	done(poll(t, m, "http://a.test/2"))
	clk.Advance(time.Hour)
	done(poll(t, m, "http://a.test/3"))
	if st := m.Stats(); st.Pending() != 0 || st.Leases != 5 {
		t.Fatalf("at the end: %+v", st)
	}
}

// TestReturningHostKeepsItsGap: a host whose back queue emptied is still
// not contacted before its te when its URLs come back later.
func TestReturningHostKeepsItsGap(t *testing.T) {
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	m := newMercator(t, frontier.Options{BackQueues: 4, Clock: clk, Politeness: frontier.Politeness{K: 10}})
	mustAdd(t, m, "http://a.test/1")
	l := poll(t, m, "http://a.test/1")
	clk.Advance(time.Second)
	if err := m.Done(l, frontier.Result{Duration: time.Second}); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, m, "http://a.test/2")
	if l, ready, _ := m.Poll(); l != nil || !ready.Equal(clk.Now().Add(10*time.Second)) {
		t.Fatalf("Poll = %v, ready %v; want to wait 10 s", l, ready)
	}
	clk.Advance(10 * time.Second)
	poll(t, m, "http://a.test/2")
}

// TestSeededSelector: the biased front queue selector is random but
// repeatable from Options.Seed.
func TestSeededSelector(t *testing.T) {
	order := func(seed uint64) []string {
		m := newMercator(t, frontier.Options{BackQueues: 1, FrontQueues: 4, Seed: seed,
			Clock: frontiertest.NewFakeClock(frontiertest.Epoch), Politeness: frontier.Politeness{K: -1}})
		var us []frontier.URL
		for i := range 200 {
			us = append(us, frontier.URL{URL: fmt.Sprintf("http://h%d.test/", i), Depth: i % 4})
		}
		if err := m.Add(context.Background(), us...); err != nil {
			t.Fatal(err)
		}
		var got []string
		for range us {
			l, _, err := m.Poll()
			if err != nil || l == nil {
				t.Fatalf("Poll: %v %v", l, err)
			}
			got = append(got, l.URL.URL)
			m.Done(l, frontier.Result{})
		}
		return got
	}
	a, b, c := order(1), order(1), order(2)
	if !slices.Equal(a, b) {
		t.Error("same seed, different orders")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds, same order")
	}
}

func TestMemStore(t *testing.T) {
	s := frontier.NewMemStore()
	var want []string
	for i := range 300 { // several chunks
		u := frontier.URL{URL: fmt.Sprintf("http://x.test/%d", i)}
		s.Push(1, u)
		want = append(want, u.URL)
		if i%3 == 0 {
			v, ok, _ := s.Pop(1)
			if !ok || v.URL != want[0] {
				t.Fatalf("Pop = %q, want %q", v.URL, want[0])
			}
			want = want[1:]
		}
	}
	var scanned []string
	s.Scan(func(u frontier.URL) bool { scanned = append(scanned, u.URL); return true })
	if !slices.Equal(scanned, want) || s.Len(1) != len(want) || s.Len(0) != 0 || s.Queues() != 2 {
		t.Fatalf("Scan/Len disagree: %d scanned, Len %d, want %d", len(scanned), s.Len(1), len(want))
	}
	t0 := time.Unix(100, 0)
	for _, d := range []int{3, 1, 2} {
		s.Defer(frontier.URL{URL: fmt.Sprint(d), Due: t0.Add(time.Duration(d) * time.Second)})
	}
	if d, _ := s.NextDue(); !d.Equal(t0.Add(time.Second)) {
		t.Fatalf("NextDue %v", d)
	}
	got, _ := s.Due(t0.Add(2*time.Second), 10, nil)
	if len(got) != 2 || got[0].URL != "1" || got[1].URL != "2" || s.Deferred() != 1 {
		t.Fatalf("Due = %v", got)
	}
}

// TestSitemapAhead: with MostWork, a sitemap found for a host that has a
// back queue (robots.txt names it, or its guessed /sitemap.xml) comes
// out right after the URL handed back for robots.txt, ahead of the
// host's pages queued before it; a sitemap found in a sitemap index
// (Sitemap 2) waits its turn. A Checkpoint keeps the sitemap.
func TestSitemapAhead(t *testing.T) {
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	m := newMercator(t, frontier.Options{Clock: clk, Politeness: frontier.Politeness{MinDelay: time.Second, K: -1}})
	mustAdd(t, m, "http://a.test/", "http://a.test/1", "http://a.test/2")
	l := poll(t, m, "http://a.test/")
	// robots.txt came first: the URL goes back, and robots.txt names a
	// sitemap.
	if err := m.Add(context.Background(), frontier.URL{URL: "http://a.test/sitemap.xml", Sitemap: 1}); err != nil {
		t.Fatal(err)
	}
	if err := m.Done(l, frontier.Result{Requeue: true}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Checkpoint(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "http://a.test/sitemap.xml") {
		t.Error("the checkpoint lost the sitemap waiting ahead of the queue")
	}
	want := []string{"http://a.test/", "http://a.test/sitemap.xml", "http://a.test/1", "http://a.test/2", "http://a.test/s2.xml"}
	for i, w := range want {
		clk.Advance(time.Second)
		l := poll(t, m, w)
		if i == 1 {
			// The index names another sitemap: after the pages queued.
			if err := m.Add(context.Background(), frontier.URL{URL: "http://a.test/s2.xml", Sitemap: 2}); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Done(l, frontier.Result{}); err != nil {
			t.Fatal(err)
		}
	}
	if st := m.Stats(); st.Queued != 0 || st.Leased != 0 {
		t.Errorf("stats %+v, want nothing left", st)
	}
}

// TestNewHostAhead: with MostWork, the first URL of a host never seen
// takes the next back queue that comes free, ahead of the URLs of hosts
// already contacted that wait in the front queues for one, so that its
// robots.txt is fetched as soon as the host is seen. The book's order
// (EarliestContact) leaves it behind them.
func TestNewHostAhead(t *testing.T) {
	for _, tc := range []struct {
		order frontier.HostOrder
		most  int // leases before the new host's, at most
		least int // and at least
	}{
		{frontier.MostWork, 2, 0},
		{frontier.EarliestContact, 40, 10},
	} {
		t.Run(tc.order.String(), func(t *testing.T) {
			clk := frontiertest.NewFakeClock(frontiertest.Epoch)
			m := newMercator(t, frontier.Options{Clock: clk, BackQueues: 2, FrontQueues: 1, HostOrder: tc.order,
				Politeness: frontier.Politeness{MinDelay: time.Second, K: -1}})
			var urls []string
			for h := range 12 {
				for p := range 4 {
					urls = append(urls, fmt.Sprintf("http://k%d.test/%d", h, p))
				}
			}
			mustAdd(t, m, urls...)
			for range 12 {
				leaseDone(t, m, clk)
			}
			mustAdd(t, m, "http://new.test/")
			for n := 0; ; n++ {
				if leaseDone(t, m, clk) == "http://new.test/" {
					if n > tc.most || n < tc.least {
						t.Errorf("the new host's URL came after %d other leases, want %d to %d", n, tc.least, tc.most)
					}
					return
				}
				if n > 60 {
					t.Fatal("the new host's URL never came")
				}
			}
		})
	}
}

// TestLaneLeavesFrontATurn: while new hosts keep coming (each a URL in a
// lane), a host that gave its back queue up still gets one every fourth
// refill: its next URL does not wait for the new hosts to run out.
func TestLaneLeavesFrontATurn(t *testing.T) {
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	m := newMercator(t, frontier.Options{Clock: clk, BackQueues: 1, FrontQueues: 1,
		Politeness: frontier.Politeness{MinDelay: time.Second, K: -1}})
	mustAdd(t, m, "http://a.test/1", "http://a.test/2")
	for newHosts := 1; newHosts <= 200; newHosts++ {
		mustAdd(t, m, fmt.Sprintf("http://n%d.test/", newHosts))
		if leaseDone(t, m, clk) == "http://a.test/2" {
			if newHosts > 20 {
				t.Errorf("a.test/2 leased after %d new hosts were added", newHosts)
			}
			return
		}
	}
	t.Fatal("a.test/2 never leased while new hosts kept coming")
}

// leaseDone takes the next lease of m, moving clk on 100 ms at a time
// while every host waits out its gap, reports it done and returns its
// URL.
func leaseDone(t *testing.T, m *frontier.Mercator, clk *frontiertest.FakeClock) string {
	t.Helper()
	for range 1000 {
		l, _, err := m.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			clk.Advance(100 * time.Millisecond)
			continue
		}
		if err := m.Done(l, frontier.Result{}); err != nil {
			t.Fatal(err)
		}
		return l.URL.URL
	}
	t.Fatal("no lease")
	return ""
}
