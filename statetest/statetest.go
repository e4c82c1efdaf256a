package statetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
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

// Run runs the conformance suite as subtests of t: the rules of
// crawlkit.State, then those of the optional capabilities
// (ContentStorer, QueueStorer, ContactRecorder, RuleStorer, Stager) when the State implements
// them; the subtest of a capability it lacks skips, saying so.
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
		{"ContentStorer", testContentStorer},
		{"QueueStorer", testQueueStorer},
		{"ContactRecorder", testContactRecorder},
		{"RuleStorer", testRuleStorer},
		{"Stager", testStager},
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
	// The page counts add up like Admitted, in one Txn and across Txns.
	commit(t, s, crawlkit.Txn{Keys: []crawlkit.KeyDelta{{Key: "h:c.test", Pages: 2}, {Key: "h:c.test", Alike: 5}, {Key: "n:c.test", Pages: 1}}})
	commit(t, s, crawlkit.Txn{Keys: []crawlkit.KeyDelta{{Key: "h:c.test", Pages: 1, Alike: 1 << 40}}})
	// A Backoff replaces the stored one; a nil one keeps it.
	bo1 := crawlkit.Backoff{Level: 2, Failures: 1, Last: t1}
	bo2 := crawlkit.Backoff{Level: 3, Last: t2}
	commit(t, s, crawlkit.Txn{Keys: []crawlkit.KeyDelta{{Key: "h:d.test", Backoff: &bo1}, {Key: "h:e.test", Admitted: 1, Backoff: &bo1}}})
	commit(t, s, crawlkit.Txn{Keys: []crawlkit.KeyDelta{{Key: "h:d.test", Backoff: &bo2}, {Key: "h:e.test", Admitted: 1}}})
	q := &crawlkit.Lookup{Keys: []string{"h:a.test", "d:a.test", "h:b.test", "h:c.test", "n:c.test", "h:d.test", "h:e.test"}}
	lookup(t, s, q)
	want := []crawlkit.KeyRecord{{Admitted: 6, Next: t2, Gap: 3 * time.Second}, {Admitted: 4}, {}, {Pages: 3, Alike: 1<<40 + 5}, {Pages: 1},
		{Backoff: bo2}, {Admitted: 2, Backoff: bo1}}
	for i := range want {
		if got := q.Records[i]; !sameRecord(got, want[i]) {
			t.Errorf("record %s = %+v, want %+v", q.Keys[i], got, want[i])
		}
	}
}

func sameRecord(a, b crawlkit.KeyRecord) bool {
	return a.Admitted == b.Admitted && a.Next.Equal(b.Next) && a.Gap == b.Gap && a.Pages == b.Pages && a.Alike == b.Alike &&
		a.Backoff.Level == b.Backoff.Level && a.Backoff.Failures == b.Backoff.Failures && a.Backoff.Last.Equal(b.Backoff.Last)
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
		Add: []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/", Depth: 1}}, {URL: frontier.URL{URL: "http://a.test/done"}},
			{URL: frontier.URL{URL: "http://www.a.test/x", Depth: 2}, Retries: 1, Parked: "http://a.test/x"}},
		Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 2, Next: next, Gap: time.Second, Pages: 7, Alike: 3,
			Backoff: &crawlkit.Backoff{Level: 4, Failures: 2, Last: next}}},
		Progress: []byte("saved"),
	})
	commit(t, s, crawlkit.Txn{Done: []string{"http://a.test/done"}, Put: []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/", Depth: 1}, Retries: 1}}})
	s = h.Reopen(t, s)
	t.Cleanup(func() { s.Close() })
	m, prog := load(t, s)
	if string(prog) != "saved" || len(m) != 2 || m["http://a.test/"].Retries != 1 || m["http://a.test/"].URL.Depth != 1 || m["http://a.test/"].Parked != "" {
		t.Errorf("after a restart: progress %q, pending %+v", prog, m)
	}
	if p := m["http://www.a.test/x"]; p.Parked != "http://a.test/x" || p.Retries != 1 || p.URL.Depth != 2 {
		t.Errorf("after a restart: parked URL %+v", p)
	}
	q := &crawlkit.Lookup{URLs: fps("http://a.test/", "http://a.test/done", "http://b.test/"), Keys: []string{"h:a.test"}}
	lookup(t, s, q)
	if !slices.Equal(q.Seen, []bool{true, true, false}) || !sameRecord(q.Records[0], crawlkit.KeyRecord{Admitted: 2, Next: next, Gap: time.Second, Pages: 7, Alike: 3,
		Backoff: crawlkit.Backoff{Level: 4, Failures: 2, Last: next}}) {
		t.Errorf("after a restart: seen %v, record %+v", q.Seen, q.Records[0])
	}
}

// testRuleStorer checks that Txn.Rules replaces the saved rules when it
// is not nil, survives a restart, and is nil in a new state.
func testRuleStorer(t *testing.T, h Harness) {
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	rs, ok := s.(crawlkit.RuleStorer)
	if !ok {
		t.Skip("the State is not a RuleStorer")
	}
	rules := func(want string) {
		t.Helper()
		got, err := rs.Rules()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want || (want == "" && got != nil) {
			t.Errorf("Rules() = %q, want %q", got, want)
		}
	}
	rules("")
	commit(t, s, crawlkit.Txn{Rules: []byte("one")})
	rules("one")
	commit(t, s, crawlkit.Txn{Done: []string{"http://a.test/"}})
	rules("one")
	commit(t, s, crawlkit.Txn{Rules: []byte("two"), Progress: []byte("p")})
	rules("two")
	if h.Reopen != nil {
		s = h.Reopen(t, s)
		t.Cleanup(func() { s.Close() })
		rs = s.(crawlkit.RuleStorer)
		rules("two")
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
	// A closed State hands out none of the resources it owns.
	if cs, ok := s.(crawlkit.ContentStorer); ok {
		if _, err := cs.ContentSeen(); err == nil {
			t.Error("ContentSeen after Close succeeded")
		}
		if _, err := cs.BodySeen(); err == nil {
			t.Error("BodySeen after Close succeeded")
		}
	}
	if qs, ok := s.(crawlkit.QueueStorer); ok {
		if st, err := qs.QueueStore(); err == nil {
			t.Error("QueueStore after Close succeeded")
			st.Close()
		}
	}
	if cr, ok := s.(crawlkit.ContactRecorder); ok {
		if err := cr.Contacting(0, crawlkit.Contact{Key: "h:a.test", At: epoch, Until: epoch}); err == nil {
			t.Error("Contacting after Close succeeded")
		}
		if _, err := cr.Contacts(); err == nil {
			t.Error("Contacts after Close succeeded")
		}
	}
	if err := s.Close(); err != nil && !errors.Is(err, crawlkit.ErrStateClosed) {
		t.Logf("second Close: %v", err)
	}
}

// reopen is h.Reopen, with the reopened State closed when the test ends.
func reopen(t *testing.T, h Harness, s crawlkit.State) crawlkit.State {
	t.Helper()
	s = h.Reopen(t, s)
	t.Cleanup(func() { s.Close() })
	return s
}

// same reports whether a and b are the same object.
func same(a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	if a == nil || !reflect.TypeOf(a).Comparable() {
		return a == nil && b == nil
	}
	return a == b
}

// testContentStorer: ContentSeen and BodySeen return the same sets on
// every call (the crawler may ask more than once; a page recorded in one
// set must be known to the next), the sets work, and a reopened State
// remembers what they recorded.
func testContentStorer(t *testing.T, h Harness) {
	s := open(t, h)
	cs, ok := s.(crawlkit.ContentStorer)
	if !ok {
		t.Skip("the State is not a ContentStorer")
	}
	ctx := context.Background()
	text, other := []byte(deduptest.Text(41, 200)), []byte(deduptest.Text(42, 200))
	const body = 0xb0d1e5
	c1, b1 := contentSets(t, cs)
	c2, b2 := contentSets(t, cs)
	if !same(c1, c2) {
		t.Errorf("ContentSeen returned %p, then %p: not the same set", c1, c2)
	}
	if !same(b1, b2) {
		t.Errorf("BodySeen returned %p, then %p: not the same set", b1, b2)
	}
	if m, err := c1.Seen(ctx, dedup.Doc{URL: "http://a.test/1", Text: text}); err != nil || m.Seen {
		t.Fatalf("ContentSeen: a new text: %+v, %v", m, err)
	}
	if m, err := c2.Seen(ctx, dedup.Doc{URL: "http://a.test/2", Text: text}); err != nil || !m.Seen || m.URL != "http://a.test/1" {
		t.Errorf("ContentSeen: the same text again: %+v, %v; want seen at http://a.test/1", m, err)
	}
	if m, err := c2.Seen(ctx, dedup.Doc{URL: "http://a.test/3", Text: other}); err != nil || m.Seen {
		t.Errorf("ContentSeen: another text: %+v, %v; want new", m, err)
	}
	if first, known, err := b1.Record(body, "http://a.test/img1"); err != nil || known || first != "http://a.test/img1" {
		t.Fatalf("BodySeen: a new body: %q, %v, %v", first, known, err)
	}
	if first, known, err := b2.Record(body, "http://a.test/img2"); err != nil || !known || first != "http://a.test/img1" {
		t.Errorf("BodySeen: the same body again: %q, %v, %v; want known at http://a.test/img1", first, known, err)
	}
	if h.Reopen == nil {
		return
	}
	s = reopen(t, h, s)
	cs, ok = s.(crawlkit.ContentStorer)
	if !ok {
		t.Fatalf("the reopened State, a %T, is not a ContentStorer", s)
	}
	c3, b3 := contentSets(t, cs)
	if m, err := c3.Seen(ctx, dedup.Doc{URL: "http://a.test/4", Text: text}); err != nil || !m.Seen || m.URL != "http://a.test/1" {
		t.Errorf("after a restart, ContentSeen: a text seen before: %+v, %v; want seen at http://a.test/1", m, err)
	}
	if first, known, err := b3.Record(body, "http://a.test/img3"); err != nil || !known || first != "http://a.test/img1" {
		t.Errorf("after a restart, BodySeen: a body seen before: %q, %v, %v; want known at http://a.test/img1", first, known, err)
	}
}

func contentSets(t *testing.T, cs crawlkit.ContentStorer) (dedup.ContentSeen, crawlkit.BodySeen) {
	t.Helper()
	c, err := cs.ContentSeen()
	if err != nil || c == nil {
		t.Fatalf("ContentSeen: %v, %v", c, err)
	}
	b, err := cs.BodySeen()
	if err != nil || b == nil {
		t.Fatalf("BodySeen: %v, %v", b, err)
	}
	return c, b
}

// testQueueStorer: a quick check of the frontier.Store QueueStore
// returns (Push, Pop, Defer, Due, Scan), which starts empty on every
// call, whatever the last one held, across a restart too; the caller
// (the frontier) closes it, and the State works on.
func testQueueStorer(t *testing.T, h Harness) {
	s := open(t, h)
	qs, ok := s.(crawlkit.QueueStorer)
	if !ok {
		t.Skip("the State is not a QueueStorer")
	}
	u := func(i int) frontier.URL {
		return frontier.URL{URL: fmt.Sprintf("http://q%d.test/%d", i%2, i), Key: fmt.Sprintf("q%d.test", i%2), Depth: i % 3, Fingerprint: uint64(i)}
	}
	st := queueStore(t, qs, "the first store")
	if err := st.Push(0, u(0), u(1)); err != nil {
		t.Fatalf("Push: %v", err)
	}
	if err := st.Push(2, u(2)); err != nil {
		t.Fatalf("Push: %v", err)
	}
	if st.Len(0) != 2 || st.Len(2) != 1 || st.Queues() != 3 {
		t.Errorf("after Push: Len(0) = %d, Len(2) = %d, Queues() = %d; want 2, 1, 3", st.Len(0), st.Len(2), st.Queues())
	}
	if got, ok, err := st.Pop(0); err != nil || !ok || got.URL != u(0).URL || got.Key != u(0).Key || got.Depth != u(0).Depth {
		t.Errorf("Pop(0) = %+v, %v, %v; want %+v", got, ok, err, u(0))
	}
	d := u(3)
	d.Due = epoch.Add(time.Hour)
	if err := st.Defer(d); err != nil {
		t.Fatalf("Defer: %v", err)
	}
	if next, ok := st.NextDue(); !ok || !next.Equal(d.Due) || st.Deferred() != 1 {
		t.Errorf("after Defer: NextDue() = %v, %v, Deferred() = %d; want %v, true, 1", next, ok, st.Deferred(), d.Due)
	}
	if due, err := st.Due(epoch, 10, nil); err != nil || len(due) != 0 {
		t.Errorf("Due before its time: %v, %v", due, err)
	}
	if due, err := st.Due(d.Due, 10, nil); err != nil || len(due) != 1 || due[0].URL != d.URL {
		t.Errorf("Due at its time: %v, %v; want %s", due, err, d.URL)
	}
	if held, want := scan(t, st), slices.Sorted(slices.Values([]string{u(1).URL, u(2).URL})); !slices.Equal(held, want) {
		t.Errorf("Scan = %v, want %v", held, want)
	}
	if err := st.Close(); err != nil {
		t.Errorf("closing the store: %v", err)
	}

	st = queueStore(t, qs, "a second store, after the first was closed holding two URLs")
	if err := st.Push(1, u(5)); err != nil {
		t.Fatalf("Push: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("closing the store: %v", err)
	}
	commit(t, s, crawlkit.Txn{Add: []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/"}}}})
	if m, _ := load(t, s); len(m) != 1 {
		t.Errorf("after its queue stores were closed, the State loads %d pending URLs, want 1", len(m))
	}
	if h.Reopen == nil {
		return
	}
	s = reopen(t, h, s)
	qs, ok = s.(crawlkit.QueueStorer)
	if !ok {
		t.Fatalf("the reopened State, a %T, is not a QueueStorer", s)
	}
	st = queueStore(t, qs, "a store after a restart")
	if err := st.Close(); err != nil {
		t.Errorf("closing the store: %v", err)
	}
}

// queueStore returns a new store of qs, checked empty.
func queueStore(t *testing.T, qs crawlkit.QueueStorer, what string) frontier.Store {
	t.Helper()
	st, err := qs.QueueStore()
	if err != nil || st == nil {
		t.Fatalf("QueueStore: %v, %v", st, err)
	}
	if n := st.Queues(); n != 0 {
		t.Errorf("%s: Queues() = %d, want 0", what, n)
	}
	for q := range 4 {
		if n := st.Len(q); n != 0 {
			t.Errorf("%s: Len(%d) = %d, want 0", what, q, n)
		}
	}
	if n := st.Deferred(); n != 0 {
		t.Errorf("%s: Deferred() = %d, want 0", what, n)
	}
	if _, ok := st.NextDue(); ok {
		t.Errorf("%s: NextDue reports a deferred URL", what)
	}
	if held := scan(t, st); len(held) != 0 {
		t.Errorf("%s holds %v", what, held)
	}
	return st
}

// scan returns the URLs st holds, sorted.
func scan(t *testing.T, st frontier.Store) []string {
	t.Helper()
	var out []string
	if err := st.Scan(func(u frontier.URL) bool { out = append(out, u.URL); return true }); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	slices.Sort(out)
	return out
}

// testContactRecorder: a new State has no contacts; workers record
// theirs at once, each in its own slot, the latest replacing the one
// before; a reopened State reports the latest of every worker, with At
// and Until.
func testContactRecorder(t *testing.T, h Harness) {
	s := open(t, h)
	cr, ok := s.(crawlkit.ContactRecorder)
	if !ok {
		t.Skip("the State is not a ContactRecorder")
	}
	if cs, err := cr.Contacts(); err != nil || len(cs) != 0 {
		t.Errorf("a new State reports contacts %v, %v", cs, err)
	}
	const workers = 6
	contact := func(w, round int) crawlkit.Contact {
		at := epoch.Add(time.Duration(round)*time.Minute + time.Duration(w)*time.Second + 123*time.Nanosecond)
		return crawlkit.Contact{Key: fmt.Sprintf("h:w%d-r%d.test", w, round), At: at, Until: at.Add(time.Duration(w+1) * time.Second)}
	}
	want := make([]crawlkit.Contact, workers)
	var wg sync.WaitGroup
	for w := range workers {
		rounds := 1 + w%3 // workers 1, 2, 4 and 5 contact more than once
		want[w] = contact(w, rounds-1)
		wg.Go(func() {
			for r := range rounds {
				if err := cr.Contacting(w, contact(w, r)); err != nil {
					t.Errorf("Contacting(%d): %v", w, err)
				}
			}
		})
	}
	wg.Wait()
	if h.Reopen == nil {
		return
	}
	s = reopen(t, h, s)
	cr, ok = s.(crawlkit.ContactRecorder)
	if !ok {
		t.Fatalf("the reopened State, a %T, is not a ContactRecorder", s)
	}
	got, err := cr.Contacts()
	if err != nil {
		t.Fatalf("Contacts: %v", err)
	}
	slices.SortFunc(got, func(a, b crawlkit.Contact) int { return strings.Compare(a.Key, b.Key) })
	slices.SortFunc(want, func(a, b crawlkit.Contact) int { return strings.Compare(a.Key, b.Key) })
	ok = len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = got[i].Key == want[i].Key && got[i].At.Equal(want[i].At) && got[i].Until.Equal(want[i].Until)
	}
	if !ok {
		t.Errorf("after a restart, Contacts() =\n\t%v\nwant the latest of each worker:\n\t%v", got, want)
	}
}

// RunBodySeen runs the conformance suite of crawlkit.BodySeen as
// subtests of t: Record keeps the first URL of a fingerprint and says it
// was known; Forget makes the fingerprint new again, and forgetting an
// unknown one is not an error; both are safe for concurrent use, each
// fingerprint new to exactly one of the racing Records. newSet returns
// an empty set each time it is called (once per subtest); cleanup
// (Close) belongs in t.Cleanup.
func RunBodySeen(t *testing.T, newSet func(t *testing.T) crawlkit.BodySeen) {
	tests := []struct {
		name string
		fn   func(*testing.T, crawlkit.BodySeen)
	}{
		{"Record", testBodyRecord},
		{"Forget", testBodyForget},
		{"Many", testBodyMany},
		{"Concurrent", testBodyConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newSet(t)) })
	}
}

// record calls b.Record and checks its answer.
func record(t *testing.T, b crawlkit.BodySeen, fp uint64, url, wantFirst string, wantKnown bool) {
	t.Helper()
	first, known, err := b.Record(fp, url)
	if err != nil || first != wantFirst || known != wantKnown {
		t.Errorf("Record(%#x, %.60q) = %.60q, %v, %v; want %.60q, %v", fp, url, first, known, err, wantFirst, wantKnown)
	}
}

func testBodyRecord(t *testing.T, b crawlkit.BodySeen) {
	long := "http://a.test/" + strings.Repeat("päge/", 800) // 4 KB, not ASCII
	for i, fp := range []uint64{0, 1, math.MaxUint64, dedup.Fingerprint("http://a.test/img.png")} {
		a, c := fmt.Sprintf("http://a.test/%d.png", i), fmt.Sprintf("http://c.test/%d.png", i)
		record(t, b, fp, a, a, false)
		record(t, b, fp, c, a, true)
		record(t, b, fp, a, a, true)
	}
	record(t, b, 2, long, long, false)
	record(t, b, 2, "http://a.test/", long, true)
}

func testBodyForget(t *testing.T, b crawlkit.BodySeen) {
	ctx := context.Background()
	record(t, b, 10, "http://a.test/1", "http://a.test/1", false)
	record(t, b, 11, "http://a.test/2", "http://a.test/2", false)
	if err := b.Forget(ctx, 10); err != nil {
		t.Fatalf("Forget: %v", err)
	}
	record(t, b, 10, "http://a.test/3", "http://a.test/3", false)
	record(t, b, 10, "http://a.test/1", "http://a.test/3", true)
	record(t, b, 11, "http://a.test/4", "http://a.test/2", true) // another fingerprint stays
	// An unknown fingerprint, then one forgotten twice.
	for _, fp := range []uint64{12, 11, 11} {
		if err := b.Forget(ctx, fp); err != nil {
			t.Errorf("Forget(%d): %v", fp, err)
		}
	}
	record(t, b, 11, "http://a.test/5", "http://a.test/5", false)
}

func testBodyMany(t *testing.T, b crawlkit.BodySeen) {
	const n = 5000
	fp := func(i int) uint64 { return uint64(i) * 0x9e3779b97f4a7c15 }
	for i := range n {
		u := fmt.Sprintf("http://h%d.test/%d", i%31, i)
		record(t, b, fp(i), u, u, false)
	}
	for i := range n {
		record(t, b, fp(i), "http://other.test/", fmt.Sprintf("http://h%d.test/%d", i%31, i), true)
		if t.Failed() {
			return
		}
	}
}

func testBodyConcurrent(t *testing.T, b crawlkit.BodySeen) {
	const workers, n = 8, 400
	ctx := context.Background()
	// race records fps from every worker at once, each in its own order
	// and with its own URLs, and checks that each fingerprint was new
	// to exactly one worker, whose URL all the others got.
	race := func(fps []uint64, round int) {
		var mu sync.Mutex
		firsts := map[uint64][]string{} // fp → the first URL each worker got
		news := map[uint64]string{}     // fp → URL of the worker it was new to
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				order := slices.Clone(fps)
				r := rand.New(rand.NewPCG(uint64(w), uint64(round)))
				r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for _, fp := range order {
					u := fmt.Sprintf("http://w%d.test/%d/%x", w, round, fp)
					first, known, err := b.Record(fp, u)
					if err != nil {
						t.Errorf("Record: %v", err)
						return
					}
					mu.Lock()
					firsts[fp] = append(firsts[fp], first)
					if !known {
						if prev, dup := news[fp]; dup {
							t.Errorf("round %d: %#x was new to two Records (%s and %s)", round, fp, prev, u)
						}
						news[fp] = u
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for _, fp := range fps {
			u, ok := news[fp]
			if !ok {
				t.Errorf("round %d: %#x was new to no Record", round, fp)
				continue
			}
			for _, f := range firsts[fp] {
				if f != u {
					t.Errorf("round %d: a Record of %#x answered first %s; it was recorded first at %s", round, fp, f, u)
					break
				}
			}
		}
	}
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = uint64(i+1) * 0x100000001b3
	}
	race(fps, 0)
	// Every worker forgets the even ones at once, then they race again.
	var even []uint64
	for i := 0; i < n; i += 2 {
		even = append(even, fps[i])
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for _, fp := range even {
				if err := b.Forget(ctx, fp); err != nil {
					t.Errorf("Forget: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	race(even, 1)
}

// testStager: a staged Txn is seen at once, whatever the caller does with
// the Txn after; Txns staged in order apply in order; each wait returns
// nil, and then the Txn is what a reopened State finds.
func testStager(t *testing.T, h Harness) {
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	st, ok := s.(crawlkit.Stager)
	if !ok {
		t.Skip("the State is not a Stager")
	}
	ctx := context.Background()
	var waits []func(context.Context) error
	stage := func(txn *crawlkit.Txn) {
		t.Helper()
		wait, err := st.Stage(ctx, txn)
		if err != nil {
			t.Fatalf("Stage: %v", err)
		}
		waits = append(waits, wait)
		txn.Reset() // the crawler reuses its Txn: the State keeps no part of it
		txn.Add = append(txn.Add, crawlkit.Pending{URL: frontier.URL{URL: "http://reused.test/"}})
	}
	a, b, c := "http://a.test/1", "http://a.test/2", "http://b.test/1"
	txn := &crawlkit.Txn{Add: []crawlkit.Pending{{URL: frontier.URL{URL: a}}, {URL: frontier.URL{URL: b}}},
		Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 2}}}
	stage(txn)
	// Seen at once, before any wait.
	q := &crawlkit.Lookup{URLs: []uint64{dedup.Fingerprint(a), dedup.Fingerprint("http://reused.test/")},
		Pending: []string{a}, Keys: []string{"h:a.test"}}
	if err := s.Lookup(ctx, q); err != nil {
		t.Fatal(err)
	}
	if !q.Seen[0] || q.Seen[1] || !q.Found[0] || q.Records[0].Admitted != 2 {
		t.Errorf("after Stage: seen %v, pending %v, admitted %d; want the staged Txn, not the reused one",
			q.Seen, q.Found, q.Records[0].Admitted)
	}
	*txn = crawlkit.Txn{Done: []string{a}, Add: []crawlkit.Pending{{URL: frontier.URL{URL: c}}},
		Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 1}}, Progress: []byte("two")}
	stage(txn)
	*txn = crawlkit.Txn{Put: []crawlkit.Pending{{URL: frontier.URL{URL: b}, Retries: 2}}, Progress: []byte("three")}
	stage(txn)
	for i := len(waits) - 1; i >= 0; i-- { // the last first: it stands for those before
		if waits[i] == nil {
			continue // durable when Stage returned
		}
		if err := waits[i](ctx); err != nil {
			t.Fatalf("wait %d: %v", i, err)
		}
	}
	check := func(s crawlkit.State) {
		t.Helper()
		pending, prog := load(t, s)
		if _, ok := pending[a]; ok || pending[b].Retries != 2 || len(pending) != 2 || string(prog) != "three" {
			t.Errorf("pending %v, progress %q; want %s with 2 retries and %s, progress \"three\"", pending, prog, b, c)
		}
		q := &crawlkit.Lookup{Keys: []string{"h:a.test"}}
		if err := s.Lookup(ctx, q); err != nil {
			t.Fatal(err)
		}
		if q.Records[0].Admitted != 3 {
			t.Errorf("admitted %d, want 3", q.Records[0].Admitted)
		}
	}
	check(s)
	if h.Reopen != nil {
		s = h.Reopen(t, s)
		t.Cleanup(func() { s.Close() })
		check(s)
	}
}
