package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/frontier"
)

// textsOwnedBy returns n texts whose fingerprints node owns.
func textsOwnedBy(ring *Ring, node string, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		text := fmt.Sprintf("document text %d", i)
		if ring.FingerprintOwner(dedup.TextFingerprint([]byte(text))) == node {
			out = append(out, text)
		}
	}
	return out
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestContentOwnerAbsent: lookups of a gone owner's fingerprints answer
// at once from the hold table (new, then a duplicate of the held URL);
// when the owner is back the reconciler closes the circuit and hands it
// the held fingerprints, and the copy two nodes both took for new in the
// meantime is counted as a missed duplicate.
func TestContentOwnerAbsent(t *testing.T) {
	nodes, tr := memNodes(t, 3, func(o *Options) { o.LookupDelay = time.Millisecond })
	ctx := context.Background()
	ring := nodes[0].Ring()
	texts := textsOwnedBy(ring, "n2", 4)
	nodes[2].Close() // its content server is gone: no responder

	seen := func(nd *Node, url, text string) dedup.Match {
		t.Helper()
		start := time.Now()
		m, err := nd.ContentSeen().Seen(ctx, dedup.Doc{URL: url, Text: []byte(text)})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("lookup of an absent owner's fingerprint took %v", d)
		}
		return m
	}
	for i, text := range texts[:3] {
		if m := seen(nodes[0], fmt.Sprintf("http://a.test/%d", i), text); m.Seen {
			t.Fatalf("%q: %+v, want new", text, m)
		}
	}
	if m := seen(nodes[0], "http://copy.test/", texts[0]); !m.Seen || m.URL != "http://a.test/0" {
		t.Fatalf("copy of a held text: %+v, want a duplicate of http://a.test/0", m)
	}
	if m := seen(nodes[1], "http://b.test/2", texts[2]); m.Seen {
		t.Fatalf("n1 knows nothing of n0's hold table: %+v", m)
	}
	st := nodes[0].ContentSeen().Stats()
	if st.Held != 3 || !slices.Equal(st.Open, []string{"n2"}) || st.FailedOpen != 4 {
		t.Fatalf("n0 stats %+v, want 3 held, n2 open, 4 answered here", st)
	}

	back, err := NewNode(ctx, &Options{Name: "n2", Nodes: []string{"n0", "n1", "n2"}, Transport: tr, Logger: quietLogger(), Shards: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	waitFor(t, 10*time.Second, "held fingerprints not reconciled", func() bool {
		a, b := nodes[0].ContentSeen().Stats(), nodes[1].ContentSeen().Stats()
		return a.Held == 0 && b.Held == 0 && len(a.Open) == 0 && len(b.Open) == 0
	})
	if back.ContentSeen().Len() != 3 {
		t.Errorf("the owner holds %d fingerprints after reconciliation, want 3", back.ContentSeen().Len())
	}
	missed := nodes[0].ContentSeen().Stats().MissedDuplicates + nodes[1].ContentSeen().Stats().MissedDuplicates
	if missed != 1 {
		t.Errorf("%d missed duplicates counted, want 1 (texts[2] on n0 and n1)", missed)
	}
	// The owner answers for the reconciled fingerprints, to any node.
	if m := seen(nodes[1], "http://c.test/", texts[1]); !m.Seen || m.URL != "http://a.test/1" {
		t.Errorf("after reconciliation: %+v, want a duplicate of http://a.test/1", m)
	}
	if m := seen(nodes[1], "http://c.test/3", texts[3]); m.Seen {
		t.Errorf("a new text after reconciliation: %+v", m)
	}
}

// TestContentOwnerHangs: an owner that holds its requests without
// answering costs one LookupTimeout to the lookups under way, and nothing
// to those after (its circuit is open).
func TestContentOwnerHangs(t *testing.T) {
	const timeout = 200 * time.Millisecond
	nodes, tr := memNodes(t, 2, func(o *Options) { o.LookupDelay = time.Millisecond; o.LookupTimeout = timeout })
	ctx := context.Background()
	texts := textsOwnedBy(nodes[0].Ring(), "n1", 20)
	nodes[1].Close()
	release := make(chan struct{})
	hung, err := tr.Serve("content.n1", func(ctx context.Context, req []byte) ([]byte, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return nil, fmt.Errorf("released")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	defer close(release)
	var worst time.Duration
	for i, text := range texts {
		start := time.Now()
		m, err := nodes[0].ContentSeen().Seen(ctx, dedup.Doc{URL: fmt.Sprint("http://a.test/", i), Text: []byte(text)})
		d := time.Since(start)
		if err != nil || m.Seen {
			t.Fatalf("lookup %d: %+v, %v; want new", i, m, err)
		}
		if i == 0 {
			if d < timeout {
				t.Errorf("the first lookup returned after %v, before the timeout: nothing was asked", d)
			}
			continue
		}
		worst = max(worst, d)
	}
	if worst > 50*time.Millisecond {
		t.Errorf("a lookup after the circuit opened took %v", worst)
	}
}

// TestSplitterFillsBatches: while Sends keep coming, a destination's
// batch grows until BatchDelay (not a fixed time after its first URL);
// when they stop, what is buffered goes out within a few gaps.
func TestSplitterFillsBatches(t *testing.T) {
	const delay = 150 * time.Millisecond
	nodes, _ := memNodes(t, 2, func(o *Options) { o.BatchDelay = delay })
	sp := nodes[0].Splitter()
	var remote []frontier.URL
	for i := 0; len(remote) < 400; i++ {
		u := fmt.Sprintf("http://h%d.test/p", i)
		if !sp.Local(frontier.HostKey(u)) {
			remote = append(remote, frontier.URL{URL: u})
		}
	}
	// One URL every 2 ms for 600 ms: a steady stream.
	ctx := context.Background()
	for _, u := range remote[:300] {
		if err := sp.Send(ctx, []frontier.URL{u}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	waitFor(t, 5*time.Second, "stream not flushed", func() bool { return sp.Buffered() == 0 })
	st := sp.Stats()
	perBatch := float64(st.URLs) / float64(st.Messages)
	t.Logf("steady stream: %d URLs in %d batches (%.1f a batch)", st.URLs, st.Messages, perBatch)
	// A timer 20 ms after the first URL made batches of about 10 here;
	// BatchDelay's worth is about 75 (less on a loaded machine, whose
	// sleeps are longer).
	if perBatch < 20 {
		t.Errorf("%.1f URLs a batch in a steady stream, want batches filled up to BatchDelay", perBatch)
	}
	if st.URLs != 300 {
		t.Errorf("%d URLs published, want 300", st.URLs)
	}
}

// TestSplitterFlushesOnPause: when Sends stop, the buffers go out within
// a few of the gaps between them, long before a (here 3 s) BatchDelay.
func TestSplitterFlushesOnPause(t *testing.T) {
	nodes, _ := memNodes(t, 2, func(o *Options) { o.BatchDelay = 3 * time.Second })
	sp := nodes[0].Splitter()
	n := 0
	for i := 0; n < 20; i++ {
		u := fmt.Sprintf("http://h%d.test/p", i)
		if sp.Local(frontier.HostKey(u)) {
			continue
		}
		if err := sp.Send(context.Background(), []frontier.URL{{URL: u}}); err != nil {
			t.Fatal(err)
		}
		n++
		time.Sleep(3 * time.Millisecond)
	}
	last := time.Now()
	waitFor(t, 5*time.Second, "buffer not flushed", func() bool { return sp.Buffered() == 0 })
	if d := time.Since(last); d > time.Second {
		t.Errorf("the buffer went out %v after the last Send; want it soon after the traffic paused", d)
	}
}

// TestShutdownCutsLinger: Shutdown of a node that embeds the server and
// waits for another node to disconnect stops waiting when its context
// ends (a stop signal), where Close would wait up to Linger.
func TestShutdownCutsLinger(t *testing.T) {
	names := []string{"a", "b"}
	a, err := NewNode(context.Background(), &Options{Name: "a", Nodes: names, EmbedAddr: "127.0.0.1:0", StoreDir: t.TempDir(),
		Logger: quietLogger(), Linger: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewNode(context.Background(), &Options{Name: "b", Nodes: names, NATSURL: a.ClientURL(), Logger: quietLogger()})
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	defer b.Close()
	c, err := crawlkit.New(crawlkit.Config{Logger: quietLogger(), Splitter: a.Splitter(), Resolver: loopbackResolver()})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Shutdown(ctx)
	}()
	select {
	case <-done:
		t.Fatal("Shutdown returned with b still connected: no lingering to cut")
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown still lingering 5 s after its context ended")
	}
}
