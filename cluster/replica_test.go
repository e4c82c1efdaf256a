package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/index"
)

// TestIndexReplica: two processes serving copies of one node's index
// shard under its name (ServeIndex on NATS, whose request subjects are
// served by a queue group) answer for it together; when one goes away
// (its connection closed, as a killed process's), queries keep their
// full answer from the other.
func TestIndexReplica(t *testing.T) {
	srv := startTestServer(t)
	opts := natsOptions()
	docs := func(node string) *index.Shard {
		s := index.NewShard(nil)
		for i := range 20 {
			if _, err := s.Add(index.Document{URL: fmt.Sprintf("http://%s.test/%d", node, i), Title: "river report",
				Text: fmt.Sprintf("the river %s page %d", node, i)}); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	a, b := docs("a"), docs("b")
	// Node a's shard is served twice (the second a copy of the first),
	// node b's once.
	primary, replica, other, client := dialTest(t, srv.ClientURL(), opts), dialTest(t, srv.ClientURL(), opts),
		dialTest(t, srv.ClientURL(), opts), dialTest(t, srv.ClientURL(), opts)
	defer client.Close()
	defer other.Close()
	defer replica.Close()
	for _, s := range []struct {
		t     *NATS
		node  string
		shard *index.Shard
	}{{primary, "a", a}, {replica, "a", docs("a")}, {other, "b", b}} {
		c, err := ServeIndex(s.t, s.node, s.shard)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	s := NewSearcher(client, []string{"a", "b"}, 2*time.Second)
	q := index.ParseQuery(a.Analyzer(), "river page", index.Or, 50)
	search := func(what string) {
		t.Helper()
		for range 10 { // the queue group picks a server at random
			res, err := s.Search(context.Background(), q, nil)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if len(res.Hits) != 40 {
				t.Fatalf("%s: %d hits, want 40", what, len(res.Hits))
			}
		}
	}
	search("with both copies of a")
	primary.Conn().Close() // the primary is gone, without unsubscribing
	// The server drops a closed connection's subscriptions when it sees
	// the close; on a loaded machine a request may reach the gone member
	// until then. Once it has, every search is answered by the replica.
	deadline := time.Now().Add(10 * time.Second)
	for ok := 0; ok < 10; {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, err := s.Search(ctx, q, nil)
		cancel()
		if ok++; err != nil {
			ok = 0
		}
		if time.Now().After(deadline) {
			t.Fatalf("not 10 answers in a row within 10 s of the primary's close: %v", err)
		}
	}
	search("with the replica of a alone")
}
