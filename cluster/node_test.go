package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup"
)

func TestNewNodeErrors(t *testing.T) {
	tr := NewMem()
	defer tr.Close()
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"not in list", Options{Name: "x", Nodes: []string{"a", "b"}, Transport: tr}},
		{"bad token", Options{Name: "a.b", Nodes: []string{"a.b"}, Transport: tr}},
		{"bad other", Options{Name: "a", Nodes: []string{"a", "b*"}, Transport: tr}},
		{"no transport", Options{Name: "a", Nodes: []string{"a"}}},
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
	a, err := NewNode(ctx, Options{Name: "a", Nodes: names, EmbedAddr: "127.0.0.1:0", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.ClientURL() == "" {
		t.Fatal("no ClientURL")
	}
	b, err := NewNode(ctx, Options{Name: "b", Nodes: names, NATSURL: a.ClientURL(), Logger: quietLogger()})
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

// TestQuiescence checks that idle nodes agree the cluster is idle, and
// that a node that stops answering makes the others busy again.
func TestQuiescence(t *testing.T) {
	nodes, tr := memNodes(t, 3, func(o *Options) { o.StatusInterval = 10 * time.Millisecond })
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
	// A node that is gone is not idle.
	nodes[2].Close()
	waitIdle(nodes[0], false)
	waitIdle(nodes[1], false)
}
