package indextest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/index"
)

// TransportHarness tells TestTransport how to reach a node through the
// index.Transport under test.
type TransportHarness struct {
	// New returns a Transport whose round trips are answered by node (the
	// in-process loopback returns node itself; a network transport serves
	// node.RoundTrip on the other side). It is called once per subtest;
	// cleanup belongs in t.Cleanup.
	New func(t *testing.T, node *index.Handler) index.Transport
	// Unreachable, if set, returns a Transport of the same kind to a node
	// that is not there (never started, or gone): its round trips must
	// fail with an error, not a reply. nil skips that check.
	Unreachable func(t *testing.T) index.Transport
	// Synchronous says the Transport calls the node in the caller's
	// goroutine and returns with it (the in-process loopback): a node
	// that ignores its context holds the call, so the suite does not ask
	// such a Transport to return before the node does.
	Synchronous bool
	// Skip names subtests that the implementation is known to fail, each
	// with the reason, which the subtest reports as it skips.
	Skip map[string]string
}

// errNode is the failure of the suite's failing node.
var errNode = errors.New("indextest: node failure")

// TestTransport is the conformance suite every index.Transport must
// pass. It puts an index.Handler over a shard of a generated collection
// (and over nodes that fail or block) behind the Transport and checks:
//   - Replies: every request, well-formed or not, comes back with the
//     node's reply byte for byte and no error, and an index.Remote over
//     the Transport answers as one over the node;
//   - NodeErrors: an error of the node travels in its reply (RoundTrip
//     returns no error) and index.Remote returns it as an *index.Error
//     with the node's message;
//   - Unreachable (if the harness gives one): a node that is not there
//     is an error of RoundTrip, which index.Remote wraps in an
//     *index.Error;
//   - Canceled: a canceled or expired context fails the call;
//   - CancelDuring: a call whose context is canceled, or expires, while
//     the node works returns an error within a second; unless the
//     harness says the Transport is Synchronous, even if the node goes
//     on working;
//   - Concurrent: 16 goroutines' round trips each get their own reply.
func TestTransport(t *testing.T, h TransportHarness) {
	t.Helper()
	cfg := Config{Seed: 43, Docs: 200, Vocab: 1500, MeanLen: 25}
	docs := Corpus(cfg)
	shard := index.NewShard(nil)
	ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 1})
	for _, d := range docs {
		if _, err := shard.Add(d); err != nil {
			t.Fatal(err)
		}
		if _, err := ti.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	node := &index.Handler{Searcher: shard, Postings: ti.Shard(0)}
	reqs := requests(t, node, cfg)
	tests := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"Replies", func(t *testing.T) { testReplies(t, h, node, reqs, cfg) }},
		{"NodeErrors", func(t *testing.T) { testNodeErrors(t, h) }},
		{"Unreachable", func(t *testing.T) { testUnreachable(t, h) }},
		{"Canceled", func(t *testing.T) { testCanceled(t, h, node) }},
		{"CancelDuring", func(t *testing.T) { testCancelDuring(t, h) }},
		{"Concurrent", func(t *testing.T) { testConcurrentTrips(t, h, node, reqs) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if reason, ok := h.Skip[tc.name]; ok {
				t.Skip("known deviation: " + reason)
			}
			tc.fn(t)
		})
	}
}

// requests returns request messages of every kind, as index.Remote
// writes them, and malformed ones.
func requests(t *testing.T, node *index.Handler, cfg Config) [][]byte {
	var out [][]byte
	rec := index.NewRemote(index.TransportFunc(func(ctx context.Context, req []byte) ([]byte, error) {
		out = append(out, bytes.Clone(req))
		return node.RoundTrip(ctx, req)
	}))
	ctx := context.Background()
	for i, text := range QueryLog(cfg, 24) {
		op := []index.Op{index.Or, index.And}[i%2]
		q := index.ParseQuery(nil, text, op, []int{1, 10, 50}[i%3])
		if _, err := rec.Search(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := rec.Stats(ctx, q.Terms); err != nil {
			t.Fatal(err)
		}
		if _, err := rec.Postings(ctx, append(q.Terms, "absent")); err != nil {
			t.Fatal(err)
		}
	}
	global := &index.Stats{Docs: 1000, Length: 30000, DF: map[string]int64{Word(3): 200, Word(40): 10}}
	if _, err := rec.Search(ctx, index.Query{Terms: []string{Word(3), Word(40)}, K: 5}, global); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Stats(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return append(out,
		nil, []byte{}, []byte{1}, []byte{1, 99}, []byte{42, 1}, // malformed
		append(bytes.Clone(out[0]), 0), // trailing byte
	)
}

// want returns the node's own replies to reqs.
func want(t *testing.T, node *index.Handler, reqs [][]byte) [][]byte {
	var out [][]byte
	for _, req := range reqs {
		resp, err := node.RoundTrip(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, resp)
	}
	return out
}

func testReplies(t *testing.T, h TransportHarness, node *index.Handler, reqs [][]byte, cfg Config) {
	tr := h.New(t, node)
	ctx := context.Background()
	for i, w := range want(t, node, reqs) {
		got, err := tr.RoundTrip(ctx, reqs[i])
		if err != nil {
			t.Errorf("request %d (kind %v): %v", i, head(reqs[i]), err)
			continue
		}
		if !bytes.Equal(got, w) {
			t.Errorf("request %d (kind %v): reply of %d bytes differs from the node's %d", i, head(reqs[i]), len(got), len(w))
		}
	}
	// The answers through the transport are the node's.
	remote, direct := index.NewRemote(tr), index.NewRemote(node)
	var qs []index.Query
	for i, text := range QueryLog(cfg, 12) {
		qs = append(qs, index.ParseQuery(nil, text, []index.Op{index.Or, index.And}[i%2], 10))
	}
	Compare(t, direct, remote, qs, nil)
	terms := []string{Word(1), Word(30), "absent"}
	got, err := remote.Postings(ctx, terms)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := direct.Postings(ctx, terms)
	for i := range w {
		if got[i].Term != w[i].Term || (got[i].Docs == nil) != (w[i].Docs == nil) ||
			got[i].Docs != nil && !got[i].Docs.Equals(w[i].Docs) || fmt.Sprint(got[i].Freqs) != fmt.Sprint(w[i].Freqs) {
			t.Errorf("postings of %q through the transport differ from the node's", terms[i])
		}
	}
}

// head describes a request by its first bytes.
func head(req []byte) []byte { return req[:min(len(req), 2)] }

// failing is a node whose every call fails.
type failing struct{}

func (failing) Search(context.Context, index.Query, *index.Stats) (*index.Result, error) {
	return nil, errNode
}
func (failing) Stats(context.Context, []string) (*index.Stats, error) { return nil, errNode }
func (failing) Postings(context.Context, []string) ([]index.PostingList, error) {
	return nil, errNode
}

func testNodeErrors(t *testing.T, h TransportHarness) {
	node := &index.Handler{Searcher: failing{}, Postings: failing{}}
	tr := h.New(t, node)
	ctx := context.Background()
	r := index.NewRemote(tr)
	calls := map[string]func() error{
		"search":   func() error { _, err := r.Search(ctx, index.Query{Terms: []string{"x"}, K: 3}, nil); return err },
		"stats":    func() error { _, err := r.Stats(ctx, []string{"x"}); return err },
		"postings": func() error { _, err := r.Postings(ctx, []string{"x"}); return err },
	}
	for op, call := range calls {
		err := call()
		var ie *index.Error
		if !errors.As(err, &ie) || ie.Op != op || !strings.Contains(err.Error(), errNode.Error()) {
			t.Errorf("%s on a failing node: %v; want an *index.Error of op %q carrying %q", op, err, op, errNode)
		}
		if errors.Is(err, index.ErrCorrupt) {
			t.Errorf("%s on a failing node: %v is ErrCorrupt: the error reply was damaged", op, err)
		}
	}
	// At the Transport's level the failure is a reply, not an error.
	req := []byte{9, 1} // unknown kind: the node answers with an error
	resp, err := tr.RoundTrip(ctx, req)
	w, _ := node.RoundTrip(ctx, req)
	if err != nil || !bytes.Equal(resp, w) {
		t.Errorf("RoundTrip of a request the node refuses = %q, %v; want the node's error reply %q and no error", resp, err, w)
	}
}

func testUnreachable(t *testing.T, h TransportHarness) {
	if h.Unreachable == nil {
		t.Skip("the harness has no unreachable node")
	}
	tr := h.Unreachable(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := tr.RoundTrip(ctx, []byte{2, 1, 0})
	if err == nil {
		t.Fatalf("RoundTrip to an unreachable node = %q and no error", resp)
	}
	_, rerr := index.NewRemote(tr).Stats(ctx, nil)
	var ie *index.Error
	if !errors.As(rerr, &ie) || ie.Op != "stats" || ie.Unwrap() == nil || errors.Is(rerr, index.ErrCorrupt) {
		t.Errorf("Remote.Stats over an unreachable node: %v; want an *index.Error wrapping the transport's error", rerr)
	}
}

func testCanceled(t *testing.T, h TransportHarness, node *index.Handler) {
	tr := h.New(t, node)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	r := index.NewRemote(tr)
	q := index.Query{Terms: []string{Word(2)}, K: 10}
	for name, ctx := range map[string]context.Context{"canceled": canceled, "expired": expired} {
		if res, err := r.Search(ctx, q, nil); err == nil {
			t.Errorf("Search with a %s context = %d hits and no error", name, len(res.Hits))
		}
		if _, err := r.Postings(ctx, q.Terms); err == nil {
			t.Errorf("Postings with a %s context succeeded", name)
		}
	}
	if _, err := r.Search(context.Background(), q, nil); err != nil {
		t.Errorf("Search after canceled calls: %v", err)
	}
}

// blocking is a node that works until its context is done or the suite
// releases it, and says when it started.
type blocking struct {
	started chan struct{}
	once    sync.Once
	release chan struct{}
	honour  bool // return when the context is done
}

func (b *blocking) Search(ctx context.Context, _ index.Query, _ *index.Stats) (*index.Result, error) {
	b.once.Do(func() { close(b.started) })
	done := ctx.Done()
	if !b.honour {
		done = nil
	}
	select {
	case <-done:
		return nil, ctx.Err()
	case <-b.release:
		return &index.Result{}, nil
	}
}

func (b *blocking) Stats(context.Context, []string) (*index.Stats, error) {
	return &index.Stats{DF: map[string]int64{}}, nil
}

func testCancelDuring(t *testing.T, h TransportHarness) {
	for _, tc := range []struct {
		name     string
		honour   bool
		deadline bool
	}{
		{"canceled, node honours it", true, false},
		{"canceled, node ignores it", false, false},
		{"deadline, node honours it", true, true},
		{"deadline, node ignores it", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.honour && h.Synchronous {
				t.Skip("a synchronous Transport returns with its node")
			}
			b := &blocking{started: make(chan struct{}), release: make(chan struct{}), honour: tc.honour}
			// Released when the subtest returns, before the harness's
			// cleanup, which may wait for the node.
			defer close(b.release)
			tr := h.New(t, &index.Handler{Searcher: b})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.deadline {
				ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
			}
			errc := make(chan error, 1)
			go func() {
				_, err := index.NewRemote(tr).Search(ctx, index.Query{Terms: []string{"x"}, K: 1}, nil)
				errc <- err
			}()
			select {
			case <-b.started:
			case err := <-errc:
				t.Fatalf("Search returned %v before the node was asked", err)
			case <-time.After(10 * time.Second):
				t.Fatal("the node was not asked within 10 s")
			}
			if !tc.deadline {
				cancel()
			}
			select {
			case err := <-errc:
				if err == nil {
					t.Error("Search returned no error")
				}
			case <-time.After(time.Second + 200*time.Millisecond):
				t.Error("Search did not return within a second of its context's end")
			}
		})
	}
}

func testConcurrentTrips(t *testing.T, h TransportHarness, node *index.Handler, reqs [][]byte) {
	tr := h.New(t, node)
	wants := want(t, node, reqs)
	const workers, rounds = 16, 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				for k := range reqs {
					i := (k*7 + w*3 + r) % len(reqs)
					got, err := tr.RoundTrip(context.Background(), reqs[i])
					if err != nil {
						t.Errorf("worker %d, request %d: %v", w, i, err)
						return
					}
					if !bytes.Equal(got, wants[i]) {
						t.Errorf("worker %d, request %d: got another reply (%d bytes, want %d)", w, i, len(got), len(wants[i]))
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
