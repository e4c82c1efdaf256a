package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/frontier"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func quietLogger() *slog.Logger {
	if os.Getenv("CLUSTER_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func TestRingErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []string
	}{
		{"none", nil},
		{"empty name", []string{"a", ""}},
		{"repeated", []string{"a", "b", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewRing(tc.nodes, 16); err == nil {
				t.Fatalf("NewRing(%q) succeeded", tc.nodes)
			}
		})
	}
}

// TestRingMovesOnlyTheNewNodesShare checks the rendezvous property: adding
// a node moves shards only to it, about 1/(n+1) of them, and the shards
// are spread evenly.
func TestRingMovesOnlyTheNewNodesShare(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var nodes []string
			for i := range n {
				nodes = append(nodes, fmt.Sprintf("node%d", i))
			}
			before, err := NewRing(nodes, 4096)
			if err != nil {
				t.Fatal(err)
			}
			after, err := NewRing(append(slices.Clone(nodes), "new"), 4096)
			if err != nil {
				t.Fatal(err)
			}
			moved := 0
			count := map[string]int{}
			for s := range before.Shards() {
				b, a := before.ShardOwner(s), after.ShardOwner(s)
				count[a]++
				if a != b {
					if a != "new" {
						t.Fatalf("shard %d moved from %s to %s, not to the new node", s, b, a)
					}
					moved++
				}
			}
			want := 4096.0 / float64(n+1)
			if f := float64(moved); f < 0.8*want || f > 1.2*want {
				t.Errorf("%d shards moved, want about %.0f", moved, want)
			}
			for node, c := range count {
				if f := float64(c); f < 0.75*want || f > 1.25*want {
					t.Errorf("node %s owns %d shards, want about %.0f", node, c, want)
				}
			}
		})
	}
}

func TestRingOrderIndependent(t *testing.T) {
	a, _ := NewRing([]string{"x", "y", "z"}, 0)
	b, _ := NewRing([]string{"z", "x", "y"}, 0)
	for i := range 1000 {
		h := fmt.Sprintf("h%03d.example", i)
		if a.HostOwner(h) != b.HostOwner(h) {
			t.Fatalf("host %s: owner depends on node order", h)
		}
		if a.FingerprintOwner(uint64(i)*0x9e3779b97f4a7c15) != b.FingerprintOwner(uint64(i)*0x9e3779b97f4a7c15) {
			t.Fatalf("fingerprint %d: owner depends on node order", i)
		}
	}
}

func TestURLsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		urls []frontier.URL
	}{
		{"empty", nil},
		{"one", []frontier.URL{{URL: "http://a.test/"}}},
		{"fields", []frontier.URL{
			{URL: "http://a.test/x?y=1", Depth: 3, Priority: 2, Source: "http://b.test/", Anchor: "the anchor"},
			{URL: "http://ü.test/ä", Depth: 1 << 30, Anchor: string(make([]byte, 300))},
			{URL: "http://c.test/sitemap.xml", Depth: 1, Sitemap: 2, ChangeFreq: frontier.FreqDaily},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeURLs(AppendURLs(nil, tc.urls))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.urls) {
				t.Fatalf("got %d URLs, want %d", len(got), len(tc.urls))
			}
			for i := range got {
				if got[i] != tc.urls[i] {
					t.Errorf("URL %d: got %+v, want %+v", i, got[i], tc.urls[i])
				}
			}
		})
	}
	// A batch as a node before sitemaps wrote it: kind 'U', no Sitemap
	// and ChangeFreq bytes.
	old := append([]byte{kindURLs, 1}, appendString(nil, "http://a.test/")...)
	old = append(old, 2, 0)
	old = appendString(old, "")
	old = appendString(old, "a")
	if got, err := DecodeURLs(old); err != nil || len(got) != 1 || got[0].URL != "http://a.test/" || got[0].Depth != 2 || got[0].Anchor != "a" {
		t.Errorf("an old batch: %+v, %v", got, err)
	}
	bad := AppendURLs(nil, []frontier.URL{{URL: "http://a.test/"}})
	bad[len(bad)-1] = 200 // no such ChangeFreq
	if _, err := DecodeURLs(bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ChangeFreq 200: %v, want ErrCorrupt", err)
	}
}

func TestDecodersRejectCorrupt(t *testing.T) {
	good := AppendURLs(nil, []frontier.URL{{URL: "http://a.test/", Source: "s"}})
	for _, tc := range []struct {
		name   string
		decode func([]byte) error
		data   []byte
	}{
		{"urls empty", func(b []byte) error { _, err := DecodeURLs(b); return err }, nil},
		{"urls wrong kind", func(b []byte) error { _, err := DecodeURLs(b); return err }, []byte{kindSeen, 0}},
		{"urls truncated", func(b []byte) error { _, err := DecodeURLs(b); return err }, good[:len(good)-1]},
		{"urls trailing", func(b []byte) error { _, err := DecodeURLs(b); return err }, append(slices.Clone(good), 0)},
		{"urls huge count", func(b []byte) error { _, err := DecodeURLs(b); return err }, []byte{kindURLs, 0xff, 0xff, 0xff, 0x0f}},
		{"seen truncated", func(b []byte) error { _, err := decodeSeen(b); return err }, []byte{kindSeen, 1, 1, 2, 3}},
		{"answer high bits", func(b []byte) error { _, _, err := decodeSeenAnswer(b); return err }, []byte{kindSeenAns, 1, 0x02}},
		{"answer missing url", func(b []byte) error { _, _, err := decodeSeenAnswer(b); return err }, []byte{kindSeenAns, 1, 0x01}},
		{"status trailing", func(b []byte) error { _, err := decodeStatus(b); return err }, []byte{kindStatus, 0, 0, 0, 0}},
		{"status no flags", func(b []byte) error { _, err := decodeStatus(b); return err }, []byte{kindStatus, 0, 0}},
		{"status bad flags", func(b []byte) error { _, err := decodeStatus(b); return err }, []byte{kindStatus, 0, 0, 2}},
		{"leave bad name", func(b []byte) error { _, _, err := decodeLeave(b); return err }, appendLeave(nil, "a.b", Status{})},
		{"leave no status", func(b []byte) error { _, _, err := decodeLeave(b); return err }, []byte{kindLeave, 1, 'a'}},
		{"forget short", func(b []byte) error { _, err := decodeForget(b); return err }, []byte{kindForget, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode(tc.data)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
			var e *Error
			if !errors.As(err, &e) || e.Op == "" {
				t.Fatalf("error %v is not a *Error with an Op", err)
			}
		})
	}
}

func TestSeenAnswerRoundTrip(t *testing.T) {
	for n := range 20 {
		seen, urls := make([]bool, n), make([]string, n)
		for i := range seen {
			if i%3 == 1 {
				seen[i], urls[i] = true, fmt.Sprintf("http://x.test/%d", i)
			}
		}
		s, u, err := decodeSeenAnswer(appendSeenAnswer(nil, seen, urls))
		if err != nil {
			t.Fatal(n, err)
		}
		if !slices.Equal(s, seen) || !slices.Equal(u, urls) {
			t.Fatalf("n=%d: got %v %q", n, s, u)
		}
	}
}

// memNodes returns n nodes over one Mem transport.
func memNodes(t *testing.T, n int, mod func(*Options)) ([]*Node, *Mem) {
	t.Helper()
	tr := NewMem()
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("n%d", i))
	}
	var nodes []*Node
	for _, name := range names {
		o := Options{Name: name, Nodes: names, Transport: tr, Logger: quietLogger(), Shards: 64}
		if mod != nil {
			mod(&o)
		}
		nd, err := NewNode(context.Background(), &o)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, nd)
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.Close()
		}
		tr.Close()
	})
	return nodes, tr
}

// TestContentSeenPartitioned checks that a text seen on one node is a
// duplicate on every other, that concurrent lookups of the same text
// yield exactly one "new", that lookups are batched, and Forget.
func TestContentSeenPartitioned(t *testing.T) {
	nodes, _ := memNodes(t, 3, func(o *Options) { o.LookupBatch = 16; o.LookupDelay = 20 * time.Millisecond })
	ctx := context.Background()
	const docs = 60
	var fresh atomic.Int64
	var wg sync.WaitGroup
	for i := range docs {
		for j, nd := range nodes {
			wg.Go(func() {
				m, err := nd.ContentSeen().Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://h%d.test/%d", j, i), Text: []byte(fmt.Sprintf("Text number %d.", i))})
				if err != nil {
					t.Error(err)
					return
				}
				if m.Fingerprint != dedup.TextFingerprint([]byte(fmt.Sprintf("text NUMBER %d", i))) {
					t.Errorf("fingerprint %x is not the text's", m.Fingerprint)
				}
				if !m.Seen {
					fresh.Add(1)
				} else if m.URL == "" || m.Of != m.Fingerprint {
					t.Errorf("seen without URL or fingerprint: %+v", m)
				}
			})
		}
	}
	wg.Wait()
	if fresh.Load() != docs {
		t.Fatalf("%d lookups were new, want %d (one per text)", fresh.Load(), docs)
	}
	total := 0
	for _, nd := range nodes {
		total += nd.ContentSeen().Len()
		if nd.ContentSeen().Len() == docs {
			t.Errorf("node %s holds every fingerprint: not partitioned", nd.opts.Name)
		}
	}
	if total != docs {
		t.Fatalf("partitions hold %d fingerprints, want %d", total, docs)
	}
	msgs, _ := nodes[0].Traffic()
	if msgs == 0 || msgs >= 2*docs {
		t.Errorf("node 0 sent %d messages for %d lookups: not batched", msgs, docs)
	}
	// Forget on any node removes the fingerprint at its owner.
	text := []byte("Text number 7.")
	if err := nodes[1].ContentSeen().Forget(ctx, dedup.TextFingerprint(text)); err != nil {
		t.Fatal(err)
	}
	m, err := nodes[2].ContentSeen().Seen(ctx, dedup.Doc{URL: "http://new.test/", Text: text})
	if err != nil || m.Seen {
		t.Fatalf("after Forget: %+v, %v; want not seen", m, err)
	}
}

// TestContentPartitionLog: a node's partition, logged as the crawler
// does (dedup.Durable), comes back in a node started anew from the log,
// with the fingerprints other nodes recorded there and the forgotten one
// gone.
func TestContentPartitionLog(t *testing.T) {
	nodes, tr := memNodes(t, 2, nil)
	ctx := context.Background()
	var log bytes.Buffer
	var d dedup.Durable = nodes[0].ContentSeen()
	d.LogTo(&log)
	var texts []string
	for i := 0; len(texts) < 6; i++ {
		text := fmt.Sprintf("text number %d", i)
		if nodes[0].Ring().FingerprintOwner(dedup.TextFingerprint([]byte(text))) == "n0" {
			texts = append(texts, text)
		}
	}
	for i, text := range texts {
		nd := nodes[i%2] // recorded locally on n0 or through a lookup from n1
		if m, err := nd.ContentSeen().Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://first/%d", i), Text: []byte(text)}); err != nil || m.Seen {
			t.Fatalf("%q: %+v, %v", text, m, err)
		}
	}
	if err := nodes[1].ContentSeen().Forget(ctx, dedup.TextFingerprint([]byte(texts[5]))); err != nil {
		t.Fatal(err)
	}
	d.LogTo(nil)
	nodes[0].Close()

	again, err := NewNode(ctx, &Options{Name: "n0", Nodes: []string{"n0", "n1"}, Transport: tr, Logger: quietLogger(), Shards: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.ContentSeen().Replay(&log); err != nil {
		t.Fatal(err)
	}
	if again.ContentSeen().Len() != 5 {
		t.Errorf("the replayed partition holds %d fingerprints, want 5", again.ContentSeen().Len())
	}
	for i, text := range texts {
		m, err := nodes[1].ContentSeen().Seen(ctx, dedup.Doc{URL: "http://copy/", Text: []byte(text)})
		if err != nil {
			t.Fatal(err)
		}
		if want := i != 5; m.Seen != want || want && m.URL != fmt.Sprintf("http://first/%d", i) {
			t.Errorf("%q after the restart: %+v", text, m)
		}
	}
}

// TestSplitterBatches checks that Send groups URLs per destination and
// publishes on size and on delay, and that Local follows the ring.
func TestSplitterBatches(t *testing.T) {
	nodes, tr := memNodes(t, 3, func(o *Options) { o.BatchSize = 10; o.BatchDelay = 30 * time.Millisecond })
	sp := nodes[0].Splitter()
	ring := nodes[0].Ring()
	var remote []frontier.URL
	for i := 0; len(remote) < 95; i++ {
		u := fmt.Sprintf("http://h%d.test/p", i)
		local := sp.Local(frontier.HostKey(u))
		if local != (ring.HostOwner(frontier.HostKey(u)) == "n0") {
			t.Fatal("Local disagrees with the ring")
		}
		if !local {
			remote = append(remote, frontier.URL{URL: u, Depth: 2})
		}
	}
	if err := sp.Send(context.Background(), remote); err != nil {
		t.Fatal(err)
	}
	bl, _ := tr.Backlog(context.Background())
	if bl.Published < 8 || sp.Buffered() == 0 || sp.Buffered() >= 20 {
		t.Fatalf("after Send: published %d, buffered %d; want full batches out and the rest buffered", bl.Published, sp.Buffered())
	}
	deadline := time.Now().Add(5 * time.Second)
	for sp.Buffered() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("buffer not flushed after BatchDelay")
		}
		time.Sleep(5 * time.Millisecond)
	}
	st := sp.Stats()
	if st.URLs != 95 || st.Messages < 9 || st.Messages > 12 {
		t.Fatalf("stats %+v, want 95 URLs in about 10 messages", st)
	}
	// Every URL reached its owner's inbox.
	got := map[string]int{}
	var mu sync.Mutex
	var closers []io.Closer
	for _, nd := range nodes[1:] {
		name := nd.opts.Name
		c, err := tr.Consume(name, func(ctx context.Context, d []byte) error {
			urls, err := DecodeURLs(d)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, u := range urls {
				if owner := ring.HostOwner(frontier.HostKey(u.URL)); owner != name || u.Depth != 2 {
					t.Errorf("%s (depth %d) delivered to %s, owner %s", u.URL, u.Depth, name, owner)
				}
				got[u.URL]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		closers = append(closers, c)
	}
	for {
		bl, _ := tr.Backlog(context.Background())
		if bl.Pending == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, c := range closers {
		c.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 95 {
		t.Fatalf("%d distinct URLs delivered, want 95", len(got))
	}
	for u, n := range got {
		if n != 1 {
			t.Errorf("%s delivered %d times", u, n)
		}
	}
}

// freePorts returns n loopback ports free at the time of the call.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}
