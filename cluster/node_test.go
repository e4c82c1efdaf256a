package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
)

func TestNewNodeErrors(t *testing.T) {
	tr := NewMem()
	defer tr.Close()
	for _, tc := range []struct {
		name string
		opts *Options
	}{
		{"nil", nil},
		{"not in list", &Options{Name: "x", Nodes: []string{"a", "b"}, Transport: tr}},
		{"bad token", &Options{Name: "a.b", Nodes: []string{"a.b"}, Transport: tr}},
		{"bad other", &Options{Name: "a", Nodes: []string{"a", "b*"}, Transport: tr}},
		{"no transport", &Options{Name: "a", Nodes: []string{"a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := NewNode(context.Background(), tc.opts)
			if err == nil {
				n.Close()
				t.Fatal("NewNode succeeded")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%v is not a *Error", err)
			}
		})
	}
}

// TestEmbeddedNode starts a node with an embedded server and joins a
// second one to it by its ClientURL.
func TestEmbeddedNode(t *testing.T) {
	ctx := context.Background()
	names := []string{"a", "b"}
	a, err := NewNode(ctx, &Options{Name: "a", Nodes: names, EmbedAddr: "127.0.0.1:0", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.ClientURL() == "" {
		t.Fatal("no ClientURL")
	}
	b, err := NewNode(ctx, &Options{Name: "b", Nodes: names, NATSURL: a.ClientURL(), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 20 {
		text := []byte{byte('a' + i), ' ', 'x'}
		if m, err := a.ContentSeen().Seen(ctx, dedup.Doc{URL: "http://a.test/", Text: text}); err != nil || m.Seen {
			t.Fatalf("first: %+v, %v", m, err)
		}
		if m, err := b.ContentSeen().Seen(ctx, dedup.Doc{URL: "http://b.test/", Text: text}); err != nil || !m.Seen || m.URL != "http://a.test/" {
			t.Fatalf("second: %+v, %v", m, err)
		}
	}
	if a.ContentSeen().Len() == 0 || b.ContentSeen().Len() == 0 {
		t.Errorf("partitions hold %d and %d fingerprints; want both used", a.ContentSeen().Len(), b.ContentSeen().Len())
	}
}

// TestQuiescence checks that idle nodes agree the cluster is idle, that
// a node that stops answering makes the others busy again, and that one
// that said farewell with nothing to do does not.
func TestQuiescence(t *testing.T) {
	nodes, tr := memNodes(t, 4, func(o *Options) { o.StatusInterval = 10 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, nd := range nodes {
		c, err := crawlkit.New(crawlkit.Config{Logger: quietLogger(), Splitter: nd.Splitter(), Resolver: loopbackResolver()})
		if err != nil {
			t.Fatal(err)
		}
		if err := nd.Start(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle := func(nd *Node, want bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for nd.Splitter().Idle() != want {
			if time.Now().After(deadline) {
				t.Fatalf("node %s: Idle stayed %v", nd.opts.Name, !want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for _, nd := range nodes {
		waitIdle(nd, true)
	}
	// A message waiting in an inbox is work.
	if err := tr.Publish(ctx, "n9", AppendURLs(nil, nil)); err != nil {
		t.Fatal(err)
	}
	waitIdle(nodes[0], false)
	c, err := tr.Consume("n9", func(context.Context, []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(nodes[0], true)
	c.Close()
	// A node that left with nothing to do is quiet for good.
	if err := nodes[3].Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	for _, nd := range nodes[:3] {
		waitIdle(nd, true)
	}
	// A node that is gone without a farewell (killed) is not idle.
	nodes[2].shutdown(context.Background(), false)
	waitIdle(nodes[0], false)
	waitIdle(nodes[1], false)
}

// leaveWithWork starts nodes[0] and nodes[1] with crawlers, queues a URL
// on nodes[1] and closes it with that work undone.
func leaveWithWork(t *testing.T, ctx context.Context, nodes []*Node) {
	t.Helper()
	c0, err := crawlkit.New(crawlkit.Config{Logger: quietLogger(), Splitter: nodes[0].Splitter(), Resolver: loopbackResolver()})
	if err != nil {
		t.Fatal(err)
	}
	if err := nodes[0].Start(ctx, c0); err != nil {
		t.Fatal(err)
	}
	leaving := nodes[1]
	c1, err := crawlkit.New(crawlkit.Config{Logger: quietLogger(), Splitter: leaving.Splitter(), Resolver: loopbackResolver(),
		Seeds: []string{"http://x.test/"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := leaving.Start(ctx, c1); err != nil {
		t.Fatal(err)
	}
	if err := c1.Add(ctx, frontier.URL{URL: "http://x.test/a"}); err != nil {
		t.Fatal(err)
	}
	if err := leaving.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFarewellWithWork: a node that leaves with URLs still queued keeps
// the others waiting for its return; back, it counts as itself again.
func TestFarewellWithWork(t *testing.T) {
	nodes, tr := memNodes(t, 2, func(o *Options) { o.StatusInterval = 10 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	leaveWithWork(t, ctx, nodes)
	nodes[0].goneMu.Lock()
	fw, ok := nodes[0].gone["n1"]
	nodes[0].goneMu.Unlock()
	if !ok || fw.st.Busy == 0 || !fw.st.Leaving {
		t.Fatalf("n0 holds farewell %+v (%v); want n1's, busy", fw, ok)
	}
	time.Sleep(100 * time.Millisecond)
	if nodes[0].Splitter().Idle() {
		t.Fatal("idle while a node that left work behind is gone")
	}
	// n1 comes back with nothing to do: the cluster is idle.
	back, err := NewNode(context.Background(), &Options{Name: "n1", Nodes: []string{"n0", "n1"}, Transport: tr, Logger: quietLogger(),
		Shards: 64, StatusInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	c1, err := crawlkit.New(crawlkit.Config{Logger: quietLogger(), Splitter: back.Splitter(), Resolver: loopbackResolver()})
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Start(ctx, c1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !nodes[0].Splitter().Idle() {
		if time.Now().After(deadline) {
			t.Fatal("n0 not idle after n1 came back without work")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestNodesLeaveInAnyOrder crawls with two nodes on the server one of them
// embeds, the other slow to run its rounds, and closes each node as soon
// as its crawl ends: the slow node's crawl must still end (it once waited
// forever for a node that had left), and the embedding node keeps the
// server up until the other is gone.
func TestNodesLeaveInAnyOrder(t *testing.T) {
	web := simWeb()
	defer web.Close()
	names := []string{"a", "b"}
	a, err := NewNode(context.Background(), &Options{Name: "a", Nodes: names, EmbedAddr: "127.0.0.1:0", StoreDir: t.TempDir(),
		Logger: quietLogger(), Shards: 64, StatusInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewNode(context.Background(), &Options{Name: "b", Nodes: names, NATSURL: a.ClientURL(),
		Logger: quietLogger(), Shards: 64, StatusInterval: 400 * time.Millisecond})
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type ended struct {
		node string
		at   time.Time
		err  error
	}
	ends := make(chan ended, 2)
	for _, nd := range []*Node{a, b} {
		cfg := crawlConfig(web, "crawlkit-"+nd.opts.Name)
		nd.Configure(&cfg)
		c, err := crawlkit.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := nd.Start(ctx, c); err != nil {
			t.Fatal(err)
		}
		go func() {
			_, err := c.Run(ctx)
			if err == nil {
				err = ctx.Err() // the crawl ended only when the test gave up
			}
			closeErr := nd.Close()
			ends <- ended{nd.opts.Name, time.Now(), errors.Join(err, closeErr)}
		}()
	}
	first, second := <-ends, <-ends
	for _, e := range []ended{first, second} {
		if e.err != nil {
			t.Errorf("node %s: %v", e.node, e.err)
		}
	}
	if first.node != "b" {
		t.Errorf("node %s closed first; the embedding node a must outlast b", first.node)
	}
	if n := len(fetched(web, func(string) bool { return true })); n < 50 {
		t.Errorf("only %d pages fetched", n)
	}
}

// TestLinger: a node embedding the server and leaving with nothing to do
// keeps the server up while another node is connected (at most Linger);
// one leaving work behind does not wait.
func TestLinger(t *testing.T) {
	for _, busy := range []bool{false, true} {
		names := []string{"a", "b"}
		a, err := NewNode(context.Background(), &Options{Name: "a", Nodes: names, EmbedAddr: "127.0.0.1:0", StoreDir: t.TempDir(),
			Logger: quietLogger(), Linger: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewNode(context.Background(), &Options{Name: "b", Nodes: names, NATSURL: a.ClientURL(), Logger: quietLogger()})
		if err != nil {
			a.Close()
			t.Fatal(err)
		}
		c, err := crawlkit.New(crawlkit.Config{Logger: quietLogger(), Splitter: a.Splitter(), Resolver: loopbackResolver()})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Start(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		if busy {
			if err := c.Add(context.Background(), frontier.URL{URL: "http://" + hostOwnedBy(t, a, "a") + "/"}); err != nil {
				t.Fatal(err)
			}
		}
		closed := make(chan time.Time, 1)
		go func() {
			a.Close()
			closed <- time.Now()
		}()
		const hold = 500 * time.Millisecond
		time.Sleep(hold)
		bClosed := time.Now()
		b.Close()
		aClosed := <-closed
		if lingered := aClosed.After(bClosed); lingered == busy {
			t.Errorf("busy %v: a closed %v after b (want lingering only when not busy)", busy, aClosed.Sub(bClosed))
		}
		if d := aClosed.Sub(bClosed); !busy && d > 5*time.Second {
			t.Errorf("a lingered %v after b left (Linger 20 s): it waits for connections that are not nodes", d)
		}
	}
}

// hostOwnedBy returns a host name the ring gives to node.
func hostOwnedBy(t *testing.T, n *Node, node string) string {
	for i := range 1000 {
		h := fmt.Sprintf("h%d.test", i)
		if n.Ring().HostOwner(h) == node {
			return h
		}
	}
	t.Fatalf("no host of %s", node)
	return ""
}

// TestDeadAfter: a node that left with work undone, and URLs in its
// inbox, keeps the others waiting, until Options.DeadAfter; then they may
// end without it, the inbox kept for its return, and a node that comes
// back is waited for again.
func TestDeadAfter(t *testing.T) {
	const dead = 300 * time.Millisecond
	nodes, tr := memNodes(t, 2, func(o *Options) {
		o.StatusInterval = 10 * time.Millisecond
		o.DeadAfter = dead
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	leaveWithWork(t, ctx, nodes)
	// n0 finds a link to a host of n1's: it lands in n1's inbox.
	host := ""
	for i := 0; host == ""; i++ {
		if h := fmt.Sprintf("h%d.test", i); nodes[0].ring.HostOwner(h) == "n1" {
			host = h
		}
	}
	if err := nodes[0].Splitter().Send(ctx, []frontier.URL{{URL: "http://" + host + "/page"}}); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, cond func() bool) time.Duration {
		t.Helper()
		start := time.Now()
		for !cond() {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("%s: not within 10 s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Since(start)
	}
	waitFor("n1's inbox holds the URL", func() bool {
		bl, err := tr.Backlog(ctx)
		return err == nil && bl.ByNode["n1"] == 1
	})
	start := time.Now()
	waitFor("n0 idle after DeadAfter", nodes[0].Splitter().Idle)
	if waited := time.Since(start); waited < dead/2 {
		t.Errorf("n0 idle after %v, before DeadAfter %v", waited, dead)
	}
	if bl, _ := tr.Backlog(ctx); bl.ByNode["n1"] != 1 {
		t.Errorf("n1's inbox: %v, want its URL kept", bl.ByNode)
	}

	// n1 comes back: n0 waits for it again until it has done its work.
	back, err := NewNode(context.Background(), &Options{Name: "n1", Nodes: []string{"n0", "n1"}, Transport: tr, Logger: quietLogger(),
		Shards: 64, StatusInterval: 10 * time.Millisecond, DeadAfter: dead})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	got := make(chan string, 8)
	cb, err := crawlkit.New(crawlkit.Config{Logger: quietLogger(), Splitter: back.Splitter(), Resolver: loopbackResolver(),
		Fetcher: fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
			got <- req.URL.String()
			return &fetch.Response{URL: req.URL, Status: 404, Header: http.Header{}}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Start(ctx, cb); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := cb.Run(ctx); done <- err }()
	want := "http://" + host + "/page"
	waitFor("n1 fetches the URL its inbox kept", func() bool {
		for {
			select {
			case u := <-got:
				if u == want {
					return true
				}
			default:
				return false
			}
		}
	})
	waitFor("n0 idle again", nodes[0].Splitter().Idle)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
