package statetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/frontier"
)

// Harness tells Run how to make the State under test.
type Harness struct {
	// New returns an empty State. The suite closes it.
	New func(t *testing.T) crawlkit.State
	// Reopen, if set, closes s and returns a State with what s held, as
	// a new process would find it (a durable State reopened on the same
	// directory). When nil, the restart tests are skipped.
	Reopen func(t *testing.T, s crawlkit.State) crawlkit.State
}

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"Empty", testEmpty},
		{"AddDonePut", testAddDonePut},
		{"Keys", testKeys},
		{"Progress", testProgress},
		{"ManyPending", testMany},
		{"ConcurrentLookups", testConcurrent},
		{"Restart", testRestart},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

func open(t *testing.T, h Harness) crawlkit.State {
	t.Helper()
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	return s
}

func commit(t *testing.T, s crawlkit.State, txn crawlkit.Txn) {
	t.Helper()
	if err := s.Commit(context.Background(), &txn); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// load returns the pending records by URL and the progress.
func load(t *testing.T, s crawlkit.State) (map[string]crawlkit.Pending, []byte) {
	t.Helper()
	m := make(map[string]crawlkit.Pending)
	prog, err := s.Load(context.Background(), func(p crawlkit.Pending) error {
		if _, dup := m[p.URL.URL]; dup {
			t.Errorf("Load reported %s twice", p.URL.URL)
		}
		m[p.URL.URL] = p
		return nil
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return m, prog
}

func lookup(t *testing.T, s crawlkit.State, q *crawlkit.Lookup) {
	t.Helper()
	if err := s.Lookup(context.Background(), q); err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	if len(q.Seen) != len(q.URLs) || len(q.Records) != len(q.Keys) || len(q.Found) != len(q.Pending) || len(q.PendingRecords) != len(q.Pending) {
		t.Fatalf("Lookup answered %d/%d/%d/%d for %d URLs, %d keys, %d pending", len(q.Seen), len(q.Records), len(q.Found), len(q.PendingRecords), len(q.URLs), len(q.Keys), len(q.Pending))
	}
}

func fps(urls ...string) []uint64 {
	out := make([]uint64, len(urls))
	for i, u := range urls {
		out[i] = dedup.Fingerprint(u)
	}
	return out
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testEmpty(t *testing.T, h Harness) {
	s := open(t, h)
	m, prog := load(t, s)
	if len(m) != 0 || prog != nil {
		t.Errorf("a new State loads %d pending URLs and progress %q", len(m), prog)
	}
	q := &crawlkit.Lookup{URLs: fps("http://a.test/"), Keys: []string{"h:a.test"}, Pending: []string{"http://a.test/"}}
	lookup(t, s, q)
	if q.Seen[0] || q.Records[0] != (crawlkit.KeyRecord{}) || q.Found[0] {
		t.Errorf("a new State answers %+v", q)
	}
}

func testAddDonePut(t *testing.T, h Harness) {
	s := open(t, h)
	a := frontier.URL{URL: "http://a.test/", Depth: 2, Fingerprint: 7,
		History: frontier.History{Fetches: 3, Changes: 1, First: epoch, Last: epoch.Add(time.Hour)}, Due: epoch.Add(2 * time.Hour),
		Anchor: "not kept", Source: "http://src.test/"}
	b := frontier.URL{URL: "http://b.test/x?y=1", Depth: 1}
	commit(t, s, crawlkit.Txn{Add: []crawlkit.Pending{{URL: a}, {URL: b, Retries: 1}}})
	m, _ := load(t, s)
	want := a
	want.Anchor, want.Source = "", ""
	if got := m[a.URL]; !sameURL(got.URL, want) || got.Retries != 0 {
		t.Errorf("pending %s = %+v, want %+v", a.URL, got, want)
	}
	if got := m[b.URL]; !sameURL(got.URL, b) || got.Retries != 1 {
		t.Errorf("pending %s = %+v, want %+v with 1 retry", b.URL, got, b)
	}
	// Put replaces a pending record; Done removes one, which stays seen.
	b2 := b
	b2.Due = epoch.Add(time.Minute)
	commit(t, s, crawlkit.Txn{Put: []crawlkit.Pending{{URL: b2, Retries: 2}}, Done: []string{a.URL}})
	q := &crawlkit.Lookup{URLs: fps(a.URL, b.URL, "http://c.test/"), Pending: []string{a.URL, b.URL, "http://c.test/"}}
	lookup(t, s, q)
	if !slices.Equal(q.Seen, []bool{true, true, false}) {
		t.Errorf("Seen = %v, want [true true false]", q.Seen)
	}
	if !slices.Equal(q.Found, []bool{false, true, false}) {
		t.Errorf("Found = %v, want [false true false]", q.Found)
	}
	if p := q.PendingRecords[1]; p.Retries != 2 || !p.URL.Due.Equal(b2.Due) {
		t.Errorf("after Put, pending %s = %+v, want 2 retries and due %v", b.URL, p, b2.Due)
	}
	m, _ = load(t, s)
	if len(m) != 1 {
		t.Errorf("Load after Done reports %d pending, want 1", len(m))
	}
}

// sameURL compares the fields a State keeps.
func sameURL(a, b frontier.URL) bool {
	return a.URL == b.URL && a.Depth == b.Depth && a.Fingerprint == b.Fingerprint && a.History.Fetches == b.History.Fetches &&
		a.History.Changes == b.History.Changes && a.History.First.Equal(b.History.First) && a.History.Last.Equal(b.History.Last) &&
		a.Due.Equal(b.Due)
}

func testKeys(t *testing.T, h Harness) {
	s := open(t, h)
	t1, t2 := epoch.Add(time.Second), epoch.Add(time.Minute)
	commit(t, s, crawlkit.Txn{Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 3}, {Key: "d:a.test", Admitted: 3}, {Key: "h:a.test", Admitted: 2, Next: t1}}})
	commit(t, s, crawlkit.Txn{Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Next: t2, Gap: 3 * time.Second}, {Key: "d:a.test", Admitted: 1}}})
	commit(t, s, crawlkit.Txn{Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 1}}}) // a zero Next keeps the stored one
	q := &crawlkit.Lookup{Keys: []string{"h:a.test", "d:a.test", "h:b.test"}}
	lookup(t, s, q)
	want := []crawlkit.KeyRecord{{Admitted: 6, Next: t2, Gap: 3 * time.Second}, {Admitted: 4}, {}}
	for i := range want {
		if got := q.Records[i]; got.Admitted != want[i].Admitted || !got.Next.Equal(want[i].Next) || got.Gap != want[i].Gap {
			t.Errorf("record %s = %+v, want %+v", q.Keys[i], got, want[i])
		}
	}
}

func testProgress(t *testing.T, h Harness) {
	s := open(t, h)
	commit(t, s, crawlkit.Txn{Progress: []byte("one")})
	commit(t, s, crawlkit.Txn{Add: []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/"}}}}) // nil Progress keeps it
	if _, prog := load(t, s); string(prog) != "one" {
		t.Errorf("progress = %q, want %q", prog, "one")
	}
	commit(t, s, crawlkit.Txn{Progress: []byte("two")})
	if _, prog := load(t, s); string(prog) != "two" {
		t.Errorf("progress = %q, want %q", prog, "two")
	}
}

func testMany(t *testing.T, h Harness) {
	s := open(t, h)
	const n, per = 20000, 500
	for i := 0; i < n; i += per {
		var txn crawlkit.Txn
		for j := i; j < i+per; j++ {
			txn.Add = append(txn.Add, crawlkit.Pending{URL: frontier.URL{URL: fmt.Sprintf("http://h%d.test/p%d", j%97, j), Depth: j % 5}})
		}
		if i >= per {
			// Finish the previous batch's even URLs.
			for j := i - per; j < i; j += 2 {
				txn.Done = append(txn.Done, fmt.Sprintf("http://h%d.test/p%d", j%97, j))
			}
		}
		commit(t, s, txn)
	}
	m, _ := load(t, s)
	if want := n - (n-per)/2; len(m) != want {
		t.Errorf("Load reports %d pending, want %d", len(m), want)
	}
	for j := 0; j < n; j++ {
		u := fmt.Sprintf("http://h%d.test/p%d", j%97, j)
		_, ok := m[u]
		if wantDone := j < n-per && j%2 == 0; ok == wantDone {
			t.Fatalf("%s pending = %v, want %v", u, ok, !wantDone)
		}
	}
}

func testConcurrent(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			q := &crawlkit.Lookup{URLs: fps("http://a.test/0", "http://a.test/1"), Keys: []string{"h:a.test"}, Pending: []string{"http://a.test/0"}}
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := s.Lookup(ctx, q); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := range 200 {
		u := fmt.Sprintf("http://a.test/%d", i)
		commit(t, s, crawlkit.Txn{Add: []crawlkit.Pending{{URL: frontier.URL{URL: u}}}, Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 1}}})
	}
	close(stop)
	wg.Wait()
	q := &crawlkit.Lookup{Keys: []string{"h:a.test"}}
	lookup(t, s, q)
	if q.Records[0].Admitted != 200 {
		t.Errorf("admitted %d, want 200", q.Records[0].Admitted)
	}
}

func testRestart(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("the State does not outlive its process")
	}
	s := h.New(t)
	next := epoch.Add(time.Hour)
	commit(t, s, crawlkit.Txn{
		Add:      []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/", Depth: 1}}, {URL: frontier.URL{URL: "http://a.test/done"}}},
		Keys:     []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 2, Next: next, Gap: time.Second}},
		Progress: []byte("saved"),
	})
	commit(t, s, crawlkit.Txn{Done: []string{"http://a.test/done"}, Put: []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/", Depth: 1}, Retries: 1}}})
	s = h.Reopen(t, s)
	t.Cleanup(func() { s.Close() })
	m, prog := load(t, s)
	if string(prog) != "saved" || len(m) != 1 || m["http://a.test/"].Retries != 1 || m["http://a.test/"].URL.Depth != 1 {
		t.Errorf("after a restart: progress %q, pending %+v", prog, m)
	}
	q := &crawlkit.Lookup{URLs: fps("http://a.test/", "http://a.test/done", "http://b.test/"), Keys: []string{"h:a.test"}}
	lookup(t, s, q)
	if !slices.Equal(q.Seen, []bool{true, true, false}) || q.Records[0].Admitted != 2 || !q.Records[0].Next.Equal(next) || q.Records[0].Gap != time.Second {
		t.Errorf("after a restart: seen %v, record %+v", q.Seen, q.Records[0])
	}
}

func testClosed(t *testing.T, h Harness) {
	s := h.New(t)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := context.Background()
	if err := s.Commit(ctx, &crawlkit.Txn{Progress: []byte("x")}); err == nil {
		t.Error("Commit after Close succeeded")
	}
	if err := s.Lookup(ctx, &crawlkit.Lookup{}); err == nil {
		t.Error("Lookup after Close succeeded")
	}
	if _, err := s.Load(ctx, func(crawlkit.Pending) error { return nil }); err == nil {
		t.Error("Load after Close succeeded")
	}
	if err := s.Close(); err != nil && !errors.Is(err, crawlkit.ErrStateClosed) {
		t.Logf("second Close: %v", err)
	}
}
