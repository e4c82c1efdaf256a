package frontiertest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// StoreHarness tells RunStore how to make the store under test.
type StoreHarness struct {
	// New returns an empty store. The suite closes it.
	New func(t *testing.T) frontier.Store
	// Reopen, for a frontier.DurableStore, returns a store opened on what
	// s left behind, as a process that stopped at this moment would find
	// it: s may still be open (a crash: its files taken as they are) or
	// closed. s is not used afterwards; the suite closes both. Without
	// Reopen the durability checks skip.
	Reopen func(t *testing.T, s frontier.Store) frontier.Store
	// Skip names subtests the implementation is known to fail, each with
	// the reason, which the subtest reports as it skips.
	Skip map[string]string
}

// RunStore runs the conformance suite of frontier.Store as subtests of t:
// each queue is first in, first out and independent of the others, with
// Len and Queues in step; every stored field comes back as it went in
// (Anchor and Source excepted); deferred URLs come back from Due earliest
// first, only once due and at most max at a time, with NextDue and
// Deferred in step; Scan sees every URL held, queued or deferred, once,
// without taking any, and stops when told; Close succeeds. When the
// store is a frontier.DurableStore and h.Reopen is set, it also checks
// that a store reopened after Sync(leased) holds the queues, the deferred
// URLs and the leased URLs (queued again in the queue their Priority
// names), that a later Sync replaces the leases of an earlier one, and
// that the content survives Close without the leases of the last Sync
// (a frontier pushes its leases back before it closes the store).
func RunStore(t *testing.T, h StoreHarness) {
	tests := []struct {
		name string
		fn   func(*testing.T, StoreHarness)
	}{
		{"FIFO", testStoreFIFO},
		{"Model", testStoreModel},
		{"Fields", testStoreFields},
		{"LenQueues", testStoreLen},
		{"Deferred", testStoreDeferred},
		{"DueLimits", testStoreDueLimits},
		{"Scan", testStoreScan},
		{"Close", testStoreClose},
		{"SyncReopen", testStoreSyncReopen},
		{"SyncReplacesLeases", testStoreSyncReplaces},
		{"CloseReopen", testStoreCloseReopen},
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

// testedStore is a store the suite closes when the test ends, unless the
// test closed it.
type testedStore struct {
	frontier.Store
	closed bool
}

func (s *testedStore) close(t *testing.T) {
	t.Helper()
	if s.closed {
		return
	}
	s.closed = true
	if err := s.Store.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func openStore(t *testing.T, h StoreHarness) *testedStore {
	t.Helper()
	s := &testedStore{Store: h.New(t)}
	t.Cleanup(func() { s.close(t) })
	return s
}

// reopenStore is h.Reopen, with the new store closed at the end, after
// the old one if the test left it open.
func reopenStore(t *testing.T, h StoreHarness, s *testedStore) *testedStore {
	t.Helper()
	r := &testedStore{Store: h.Reopen(t, s.Store)}
	t.Cleanup(func() { r.close(t) })
	return r
}

// durable skips the test unless the store is durable and can be reopened.
func durable(t *testing.T, h StoreHarness) (*testedStore, frontier.DurableStore) {
	t.Helper()
	s := openStore(t, h)
	ds, ok := s.Store.(frontier.DurableStore)
	if !ok {
		t.Skip("not a frontier.DurableStore")
	}
	if h.Reopen == nil {
		t.Skip("StoreHarness.Reopen not set")
	}
	return s, ds
}

// storeURL returns a URL with every stored field set from i.
func storeURL(i int) frontier.URL {
	first := Epoch.Add(time.Duration(i) * time.Second)
	return frontier.URL{
		URL:         fmt.Sprintf("http://s%d.test/p%d?q=%d", i%7, i, i),
		Key:         fmt.Sprintf("s%d.test", i%7),
		Priority:    i % 5,
		Depth:       i % 11,
		Fingerprint: uint64(i)*0x9e3779b97f4a7c15 + 1,
		History: frontier.History{
			Fetches: uint32(i%4 + 1), Changes: uint32(i % 2),
			First: first, Last: first.Add(time.Duration(i)*time.Hour + 123456789),
		},
		Anchor: "anchor text", Source: "http://src.test/",
	}
}

// sameURL reports how got differs from want in a stored field, "" if not.
func sameURL(got, want frontier.URL) string {
	switch {
	case got.URL != want.URL:
		return fmt.Sprintf("URL %q, want %q", got.URL, want.URL)
	case got.Key != want.Key:
		return fmt.Sprintf("%s: Key %q, want %q", want.URL, got.Key, want.Key)
	case got.Priority != want.Priority:
		return fmt.Sprintf("%s: Priority %d, want %d", want.URL, got.Priority, want.Priority)
	case got.Depth != want.Depth:
		return fmt.Sprintf("%s: Depth %d, want %d", want.URL, got.Depth, want.Depth)
	case got.Fingerprint != want.Fingerprint:
		return fmt.Sprintf("%s: Fingerprint %#x, want %#x", want.URL, got.Fingerprint, want.Fingerprint)
	case got.History.Fetches != want.History.Fetches || got.History.Changes != want.History.Changes ||
		!got.History.First.Equal(want.History.First) || !got.History.Last.Equal(want.History.Last):
		return fmt.Sprintf("%s: History %+v, want %+v", want.URL, got.History, want.History)
	case !got.Due.Equal(want.Due):
		return fmt.Sprintf("%s: Due %v, want %v", want.URL, got.Due, want.Due)
	}
	return ""
}

func push(t *testing.T, s frontier.Store, q int, us ...frontier.URL) {
	t.Helper()
	if err := s.Push(q, us...); err != nil {
		t.Fatalf("Push(%d, %d URLs): %v", q, len(us), err)
	}
}

// popWant pops queue q and checks it yields want, then nothing.
func popWant(t *testing.T, s frontier.Store, q int, want []frontier.URL) {
	t.Helper()
	for i, w := range want {
		u, ok, err := s.Pop(q)
		if err != nil || !ok {
			t.Fatalf("queue %d, pop %d of %d: ok %v, err %v", q, i+1, len(want), ok, err)
		}
		if d := sameURL(u, w); d != "" {
			t.Fatalf("queue %d, pop %d: %s", q, i+1, d)
		}
	}
	u, ok, err := s.Pop(q)
	if err != nil || ok {
		t.Fatalf("queue %d after its %d URLs: Pop = %q, %v, %v; want nothing", q, len(want), u.URL, ok, err)
	}
}

func deferURLs(t *testing.T, s frontier.Store, us ...frontier.URL) {
	t.Helper()
	if err := s.Defer(us...); err != nil {
		t.Fatalf("Defer(%d URLs): %v", len(us), err)
	}
}

func testStoreFIFO(t *testing.T, h StoreHarness) {
	s := openStore(t, h)
	var in [4][]frontier.URL
	n := 0
	next := func(k int) []frontier.URL {
		us := make([]frontier.URL, k)
		for i := range us {
			us[i] = storeURL(n)
			n++
		}
		return us
	}
	// Interleaved pushes of one and many to queues 0, 1 and 3; 2 is never
	// pushed to.
	for round := range 40 {
		for _, q := range []int{0, 1, 3} {
			us := next(round%5 + q)
			if len(us) == 1 {
				push(t, s, q, us[0])
			} else {
				push(t, s, q, us...)
			}
			in[q] = append(in[q], us...)
		}
		// Pop some of queue 1 as we go: its head moves while its tail
		// grows.
		for range round % 3 {
			if len(in[1]) == 0 {
				break
			}
			u, ok, err := s.Pop(1)
			if err != nil || !ok {
				t.Fatalf("Pop(1): ok %v, err %v", ok, err)
			}
			if d := sameURL(u, in[1][0]); d != "" {
				t.Fatalf("queue 1 mid-way: %s", d)
			}
			in[1] = in[1][1:]
		}
	}
	for q := range in {
		if got := s.Len(q); got != len(in[q]) {
			t.Errorf("Len(%d) = %d, want %d", q, got, len(in[q]))
		}
	}
	for _, q := range []int{3, 2, 0, 1} {
		popWant(t, s, q, in[q])
	}
	if u, ok, err := s.Pop(100); ok || err != nil {
		t.Errorf("Pop of a queue never pushed to = %q, %v, %v", u.URL, ok, err)
	}
	// Empty queues work again.
	us := next(3)
	push(t, s, 0, us...)
	popWant(t, s, 0, us)
}

// testStoreModel runs random pushes and pops over a few queues against a
// slice model, long enough to pass any buffer of the store several times.
func testStoreModel(t *testing.T, h StoreHarness) {
	s := openStore(t, h)
	rng := rand.New(rand.NewPCG(3, 4))
	model := make([][]frontier.URL, 5)
	n := 0
	for op := range 3000 {
		q := rng.IntN(len(model))
		if rng.IntN(5) < 3 {
			us := make([]frontier.URL, 1+rng.IntN(12))
			for i := range us {
				us[i] = storeURL(n)
				n++
			}
			push(t, s, q, us...)
			model[q] = append(model[q], us...)
		} else {
			for range 1 + rng.IntN(15) {
				u, ok, err := s.Pop(q)
				if err != nil {
					t.Fatalf("op %d: Pop(%d): %v", op, q, err)
				}
				if len(model[q]) == 0 {
					if ok {
						t.Fatalf("op %d: Pop(%d) of an empty queue gave %s", op, q, u.URL)
					}
					break
				}
				if !ok {
					t.Fatalf("op %d: Pop(%d) gave nothing, %d URLs queued", op, q, len(model[q]))
				}
				if d := sameURL(u, model[q][0]); d != "" {
					t.Fatalf("op %d: queue %d: %s", op, q, d)
				}
				model[q] = model[q][1:]
			}
		}
		if got := s.Len(q); got != len(model[q]) {
			t.Fatalf("op %d: Len(%d) = %d, want %d", op, q, got, len(model[q]))
		}
	}
	for q := range model {
		popWant(t, s, q, model[q])
	}
}

func testStoreFields(t *testing.T, h StoreHarness) {
	s := openStore(t, h)
	var queued, deferred []frontier.URL
	for i := range 20 {
		queued = append(queued, storeURL(i))
		u := storeURL(100 + i)
		u.Due = Epoch.Add(time.Duration(i)*time.Minute + 987654321)
		deferred = append(deferred, u)
	}
	// Zero fields stay zero.
	queued = append(queued, frontier.URL{URL: "http://zero.test/", Key: "zero.test"})
	push(t, s, 0, queued...)
	deferURLs(t, s, deferred...)
	seen := 0
	if err := s.Scan(func(u frontier.URL) bool {
		seen++
		for _, w := range slices.Concat(queued, deferred) {
			if w.URL == u.URL {
				if d := sameURL(u, w); d != "" {
					t.Errorf("Scan: %s", d)
				}
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if seen != len(queued)+len(deferred) {
		t.Errorf("Scan saw %d URLs, want %d", seen, len(queued)+len(deferred))
	}
	popWant(t, s, 0, queued)
	got, err := s.Due(Epoch.Add(24*time.Hour), len(deferred)+1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(deferred) {
		t.Fatalf("Due gave %d URLs, want %d", len(got), len(deferred))
	}
	for i := range got {
		if d := sameURL(got[i], deferred[i]); d != "" {
			t.Errorf("Due: %s", d)
		}
	}
}

func testStoreLen(t *testing.T, h StoreHarness) {
	s := openStore(t, h)
	if s.Queues() != 0 || s.Len(0) != 0 || s.Len(7) != 0 || s.Deferred() != 0 {
		t.Fatalf("new store: Queues %d, Len(0) %d, Len(7) %d, Deferred %d; want all 0",
			s.Queues(), s.Len(0), s.Len(7), s.Deferred())
	}
	if _, ok := s.NextDue(); ok {
		t.Error("new store: NextDue reports a deferred URL")
	}
	push(t, s, 4, storeURL(1), storeURL(2))
	if s.Queues() != 5 || s.Len(4) != 2 || s.Len(3) != 0 || s.Len(5) != 0 {
		t.Errorf("after 2 pushes to queue 4: Queues %d, Len(4) %d, Len(3) %d, Len(5) %d; want 5, 2, 0, 0",
			s.Queues(), s.Len(4), s.Len(3), s.Len(5))
	}
	push(t, s, 2, storeURL(3))
	if s.Queues() != 5 {
		t.Errorf("after a push to queue 2: Queues %d, want 5", s.Queues())
	}
	u := storeURL(4)
	u.Due = Epoch.Add(time.Hour)
	deferURLs(t, s, u)
	if s.Deferred() != 1 || s.Len(4) != 2 || s.Len(2) != 1 {
		t.Errorf("Defer: Deferred %d, Len(4) %d, Len(2) %d; want 1, 2, 1", s.Deferred(), s.Len(4), s.Len(2))
	}
	for range 3 {
		s.Pop(4)
	}
	if s.Queues() != 5 || s.Len(4) != 0 || s.Deferred() != 1 {
		t.Errorf("queue 4 emptied: Queues %d (a queue once pushed to counts), Len(4) %d, Deferred %d; want 5, 0, 1",
			s.Queues(), s.Len(4), s.Deferred())
	}
}

// dueURL returns a deferred URL due at Epoch + d.
func dueURL(name string, d time.Duration) frontier.URL {
	return frontier.URL{URL: "http://due.test/" + name, Key: "due.test", Due: Epoch.Add(d)}
}

func testStoreDeferred(t *testing.T, h StoreHarness) {
	s := openStore(t, h)
	var all []frontier.URL
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		// Ties, and times on either side of the Unix epoch.
		d := time.Duration(rng.IntN(50)) * time.Minute
		if i%50 == 0 {
			d = -Epoch.Sub(time.Unix(0, 0)) - time.Duration(i+1)*time.Hour
		}
		all = append(all, dueURL(fmt.Sprint(i), d))
	}
	deferURLs(t, s, all[:100]...)
	for _, u := range all[100:] {
		deferURLs(t, s, u)
	}
	if s.Deferred() != len(all) {
		t.Fatalf("Deferred = %d, want %d", s.Deferred(), len(all))
	}
	sorted := slices.Clone(all)
	slices.SortStableFunc(sorted, func(a, b frontier.URL) int { return a.Due.Compare(b.Due) })
	nextDue := func(step string, want time.Time, wantOK bool) {
		t.Helper()
		if d, ok := s.NextDue(); ok != wantOK || !d.Equal(want) {
			t.Errorf("%s: NextDue = %v, %v; want %v, %v", step, d, ok, want, wantOK)
		}
	}
	nextDue("after Defer", sorted[0].Due, true)
	if got, err := s.Due(sorted[0].Due.Add(-1), 10, nil); err != nil || len(got) != 0 {
		t.Errorf("Due before the earliest = %d URLs, %v; want none", len(got), err)
	}
	// Take them in steps of a few minutes, a few at a time.
	taken, early := 0, false
	for now := Epoch; taken < len(sorted); now = now.Add(7 * time.Minute) {
		if now.Before(sorted[0].Due) {
			now = sorted[0].Due
		}
		for {
			got, err := s.Due(now, 9, nil)
			if err != nil {
				t.Fatalf("Due(%v): %v", now, err)
			}
			if len(got) > 9 {
				t.Fatalf("Due(max 9) gave %d URLs", len(got))
			}
			for i, u := range got {
				if u.Due.After(now) {
					t.Fatalf("Due(%v) gave %s due at %v", now, u.URL, u.Due)
				}
				if !u.Due.Equal(sorted[taken+i].Due) {
					t.Fatalf("Due gave %s due at %v; the earliest left is due at %v", u.URL, u.Due, sorted[taken+i].Due)
				}
			}
			taken += len(got)
			if s.Deferred() != len(sorted)-taken {
				t.Fatalf("Deferred = %d after %d of %d taken", s.Deferred(), taken, len(sorted))
			}
			if len(got) < 9 {
				break
			}
		}
		if taken < len(sorted) {
			if sorted[taken].Due.Compare(now) <= 0 {
				t.Fatalf("Due(%v) left %s due at %v", now, sorted[taken].URL, sorted[taken].Due)
			}
			nextDue(fmt.Sprintf("%d taken", taken), sorted[taken].Due, true)
		}
		if taken >= len(sorted)/2 && !early {
			// A URL due before everything left, and before some of what
			// was taken, is found next.
			early = true
			u := dueURL("early", -time.Hour)
			deferURLs(t, s, u)
			nextDue("an early URL deferred", u.Due, true)
			got, err := s.Due(u.Due, 5, nil)
			if err != nil || len(got) != 1 || got[0].URL != u.URL {
				t.Fatalf("Due after an early Defer = %v, %v; want %s", urlsOf(got), err, u.URL)
			}
		}
	}
	nextDue("all taken", time.Time{}, false)
	if s.Deferred() != 0 {
		t.Errorf("Deferred = %d when all were taken", s.Deferred())
	}
}

func testStoreDueLimits(t *testing.T, h StoreHarness) {
	s := openStore(t, h)
	for i := range 10 {
		deferURLs(t, s, dueURL(fmt.Sprint(i), time.Duration(i)*time.Second))
	}
	for _, max := range []int{0, -1} {
		if got, err := s.Due(Epoch.Add(time.Hour), max, nil); err != nil || len(got) != 0 {
			t.Errorf("Due(max %d) = %d URLs, %v; want none", max, len(got), err)
		}
	}
	dst := []frontier.URL{{URL: "http://kept.test/"}}
	dst, err := s.Due(Epoch.Add(time.Hour), 3, dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(dst) != 4 || dst[0].URL != "http://kept.test/" || dst[1].URL != "http://due.test/0" || dst[3].URL != "http://due.test/2" {
		t.Errorf("Due(max 3) onto a slice of 1 = %v; want it kept, then due.test/0..2", urlsOf(dst))
	}
	if s.Deferred() != 7 {
		t.Errorf("Deferred = %d after 3 of 10 taken", s.Deferred())
	}
	got, err := s.Due(Epoch.Add(5*time.Second), 100, nil)
	if err != nil || len(got) != 3 {
		t.Errorf("Due(Epoch+5s, max 100) = %v, %v; want due.test/3..5 (due exactly now counts)", urlsOf(got), err)
	}
}

func urlsOf(us []frontier.URL) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.URL
	}
	return out
}

// fill puts URLs in queues 0..2 and the deferred set, pops and takes a
// few, and returns what the store holds: per queue and deferred.
func fill(t *testing.T, s frontier.Store, n int) (queues [][]frontier.URL, deferred []frontier.URL) {
	t.Helper()
	queues = make([][]frontier.URL, 3)
	for i := range n {
		q := i % 3
		u := storeURL(i)
		queues[q] = append(queues[q], u)
		push(t, s, q, u)
		if i%4 == 0 {
			d := storeURL(10000 + i)
			d.Due = Epoch.Add(time.Duration(i) * time.Second)
			deferred = append(deferred, d)
			deferURLs(t, s, d)
		}
	}
	for q := range queues {
		for range len(queues[q]) / 4 {
			u, ok, err := s.Pop(q)
			if err != nil || !ok {
				t.Fatalf("Pop(%d): %v, %v", q, ok, err)
			}
			if d := sameURL(u, queues[q][0]); d != "" {
				t.Fatalf("queue %d: %s", q, d)
			}
			queues[q] = queues[q][1:]
		}
	}
	got, err := s.Due(deferred[len(deferred)/3].Due, len(deferred), nil)
	if err != nil {
		t.Fatal(err)
	}
	deferred = deferred[len(got):]
	return queues, deferred
}

func testStoreScan(t *testing.T, h StoreHarness) {
	s := openStore(t, h)
	if err := s.Scan(func(u frontier.URL) bool {
		t.Errorf("Scan of an empty store saw %s", u.URL)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	queues, deferred := fill(t, s, 300)
	want := map[string]int{}
	for _, u := range slices.Concat(append(queues, deferred)...) {
		want[u.URL]++
	}
	got := map[string]int{}
	if err := s.Scan(func(u frontier.URL) bool { got[u.URL]++; return true }); err != nil {
		t.Fatal(err)
	}
	for u, n := range want {
		if got[u] != n {
			t.Errorf("Scan saw %s %d times, want %d", u, got[u], n)
		}
	}
	for u := range got {
		if want[u] == 0 {
			t.Errorf("Scan saw %s, which the store does not hold", u)
		}
	}
	calls := 0
	if err := s.Scan(func(frontier.URL) bool { calls++; return calls < 3 }); err != nil {
		t.Fatal(err)
	}
	if calls != 3 {
		t.Errorf("Scan went on for %d calls after yield returned false at the 3rd", calls)
	}
	// Scan took nothing.
	for q := range queues {
		if s.Len(q) != len(queues[q]) {
			t.Errorf("Len(%d) = %d after Scan, want %d", q, s.Len(q), len(queues[q]))
		}
		popWant(t, s, q, queues[q])
	}
	if s.Deferred() != len(deferred) {
		t.Errorf("Deferred = %d after Scan, want %d", s.Deferred(), len(deferred))
	}
	if got, err := s.Due(Epoch.Add(time.Hour), len(deferred)+1, nil); err != nil || len(got) != len(deferred) {
		t.Errorf("Due after Scan gave %d URLs, %v; want %d", len(got), err, len(deferred))
	}
}

func testStoreClose(t *testing.T, h StoreHarness) {
	s := openStore(t, h)
	fill(t, s, 100)
	s.closed = true
	if err := s.Store.Close(); err != nil {
		t.Errorf("Close of a store holding URLs: %v", err)
	}
}

// checkReopened checks that r holds queues (each queue in order, with the
// URLs of leased whose Priority names it anywhere in it) and deferred.
func checkReopened(t *testing.T, r frontier.Store, queues [][]frontier.URL, leased, deferred []frontier.URL) {
	t.Helper()
	nq := len(queues)
	for _, u := range leased {
		nq = max(nq, u.Priority+1)
	}
	if r.Queues() < nq {
		t.Errorf("reopened: Queues() = %d, want ≥ %d", r.Queues(), nq)
	}
	for q := range nq {
		var want, back []frontier.URL
		if q < len(queues) {
			want = queues[q]
		}
		for _, u := range leased {
			if u.Priority == q {
				back = append(back, u)
			}
		}
		if got := r.Len(q); got != len(want)+len(back) {
			t.Errorf("reopened: Len(%d) = %d, want %d queued + %d leased", q, got, len(want), len(back))
		}
		for {
			u, ok, err := r.Pop(q)
			if err != nil {
				t.Fatalf("reopened: Pop(%d): %v", q, err)
			}
			if !ok {
				break
			}
			if i := slices.IndexFunc(back, func(b frontier.URL) bool { return b.URL == u.URL }); i >= 0 {
				if d := sameURL(u, back[i]); d != "" {
					t.Errorf("reopened: leased URL: %s", d)
				}
				back = slices.Delete(back, i, i+1)
				continue
			}
			if len(want) == 0 {
				t.Errorf("reopened: queue %d holds %s, not queued there", q, u.URL)
				continue
			}
			if d := sameURL(u, want[0]); d != "" {
				t.Errorf("reopened: queue %d: %s", q, d)
			}
			want = want[1:]
		}
		if len(want) > 0 || len(back) > 0 {
			t.Errorf("reopened: queue %d lacks %d queued and %d leased URLs, first %v", q, len(want), len(back), urlsOf(append(want, back...))[:1])
		}
	}
	if r.Deferred() != len(deferred) {
		t.Errorf("reopened: Deferred = %d, want %d", r.Deferred(), len(deferred))
	}
	if len(deferred) > 0 {
		if d, ok := r.NextDue(); !ok || !d.Equal(deferred[0].Due) {
			t.Errorf("reopened: NextDue = %v, %v; want %v", d, ok, deferred[0].Due)
		}
	}
	got, err := r.Due(Epoch.Add(24*time.Hour), len(deferred)+1, nil)
	if err != nil {
		t.Fatalf("reopened: Due: %v", err)
	}
	if len(got) != len(deferred) {
		t.Fatalf("reopened: Due gave %d URLs, want %d", len(got), len(deferred))
	}
	for i := range got {
		if d := sameURL(got[i], deferred[i]); d != "" {
			t.Errorf("reopened: deferred: %s", d)
		}
	}
}

func leasedURLs(n, base int, prios ...int) []frontier.URL {
	out := make([]frontier.URL, n)
	for i := range out {
		out[i] = storeURL(base + i)
		out[i].Priority = prios[i%len(prios)]
	}
	return out
}

func testStoreSyncReopen(t *testing.T, h StoreHarness) {
	s, ds := durable(t, h)
	queues, deferred := fill(t, s, 300)
	// Leases go back to the queue their Priority names, one beyond the
	// queues in use included.
	leased := leasedURLs(7, 20000, 0, 2, 5)
	if err := ds.Sync(leased); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	r := reopenStore(t, h, s)
	checkReopened(t, r, queues, leased, deferred)
}

func testStoreSyncReplaces(t *testing.T, h StoreHarness) {
	s, ds := durable(t, h)
	queues, deferred := fill(t, s, 60)
	if err := ds.Sync(leasedURLs(5, 30000, 1)); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	later := leasedURLs(2, 40000, 0)
	if err := ds.Sync(later); err != nil {
		t.Fatalf("second Sync: %v", err)
	}
	r := reopenStore(t, h, s)
	checkReopened(t, r, queues, later, deferred)
	// The reopened store holds no lease any more: it syncs without them.
	if rd, ok := r.Store.(frontier.DurableStore); ok {
		if err := rd.Sync(nil); err != nil {
			t.Fatalf("Sync of the reopened store: %v", err)
		}
	}
}

func testStoreCloseReopen(t *testing.T, h StoreHarness) {
	s, ds := durable(t, h)
	queues, deferred := fill(t, s, 120)
	if err := ds.Sync(leasedURLs(4, 50000, 0, 1)); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	// After the Sync, more changes: Close keeps them all.
	more := storeURL(60000)
	push(t, s, 1, more)
	queues[1] = append(queues[1], more)
	s.closed = true
	if err := s.Store.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	r := reopenStore(t, h, s)
	checkReopened(t, r, queues, nil, deferred)
}
