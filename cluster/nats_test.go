package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

var streamSeq atomic.Int64

// natsOptions returns options with a stream and prefix of their own, so
// tests can share a server.
func natsOptions() NATSOptions {
	n := streamSeq.Add(1)
	return NATSOptions{Prefix: fmt.Sprintf("t%d", n), Stream: fmt.Sprintf("T%d", n), AckWait: 2 * time.Second, RedeliverDelay: 10 * time.Millisecond}
}

func startTestServer(t testing.TB) *server.Server {
	t.Helper()
	s, err := StartServer(&ServerOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

func dialTest(t testing.TB, url string, opts NATSOptions) *NATS {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr, err := DialNATS(ctx, url, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestStartServerNil checks that nil options, which lack the required
// StoreDir, fail with an *Error.
func TestStartServerNil(t *testing.T) {
	var e *Error
	if s, err := StartServer(nil); !errors.As(err, &e) {
		if s != nil {
			s.Shutdown()
		}
		t.Fatalf("StartServer(nil) = %v, want an *Error", err)
	}
}

// startNATSCluster starts n NATS servers with JetStream routed to each
// other on loopback and returns them; they are shut down at the end of
// the test (shutting one down earlier is allowed).
func startNATSCluster(t testing.TB, n int) []*server.Server {
	t.Helper()
	ports := freePorts(t, n)
	var servers []*server.Server
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	for i, p := range ports {
		s, err := StartServer(&ServerOptions{
			StoreDir: t.TempDir(), Name: fmt.Sprintf("s%d", i),
			Cluster: "crawlkit-test", ClusterAddr: fmt.Sprintf("127.0.0.1:%d", p), Routes: routes,
			// Three JetStream servers starting under -race beside other
			// test binaries can take over 10 s on a loaded machine.
			ReadyTimeout: time.Minute,
		})
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	t.Cleanup(func() {
		for _, s := range servers {
			s.Shutdown()
			s.WaitForShutdown()
		}
	})
	return servers
}

// dialCluster connects to urls (a client fails over between them) with
// opts, retrying until the JetStream meta group has a leader and the
// stream could be created.
func dialCluster(t testing.TB, urls string, opts NATSOptions) *NATS {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		tr, err := DialNATS(ctx, urls, &opts)
		cancel()
		if err == nil {
			return tr
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestNATSClusterSurvivesServerShutdown runs three NATS servers routed
// to each other on loopback, a stream replicated three times, and one
// producer and one consumer connected to different servers; the server
// the consumer is on is shut down halfway, and every message still
// arrives, and requests are still answered.
func TestNATSClusterSurvivesServerShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: forms a three-server JetStream cluster (a few seconds)")
	}
	servers := startNATSCluster(t, 3)
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.ClientURL())
	}
	opts := natsOptions()
	opts.Replicas = 3
	// The JetStream meta group needs a leader before a stream can be
	// created: dialCluster retries until it has one.
	prod := dialCluster(t, strings.Join(urls, ","), opts)
	deadline := time.Now().Add(20 * time.Second)
	defer prod.Close()
	// The consumer connects to server 2 first: the one shut down below.
	cons := dialTest(t, urls[2]+","+urls[0]+","+urls[1], opts)
	defer cons.Close()
	srv, err := cons.Serve("ping", func(ctx context.Context, req []byte) ([]byte, error) { return []byte("pong"), nil })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	const total = 200
	var mu sync.Mutex
	got := map[int]bool{}
	all := make(chan struct{})
	c, err := cons.Consume("n1", func(ctx context.Context, d []byte) error {
		var i int
		fmt.Sscan(string(d), &i)
		mu.Lock()
		defer mu.Unlock()
		got[i] = true
		if len(got) == total {
			close(all)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				err := prod.Publish(ctx, "n1", []byte(fmt.Sprint(i)))
				cancel()
				if err == nil {
					break
				}
				if time.Now().After(deadline.Add(20 * time.Second)) {
					t.Fatalf("publish %d: %v", i, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	publish(0, total/2)
	servers[2].Shutdown()
	servers[2].WaitForShutdown()
	publish(total/2, total)
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		mu.Lock()
		t.Fatalf("%d of %d messages arrived after a server's shutdown", len(got), total)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		resp, err := prod.Request(ctx, "ping", nil)
		if err == nil && string(resp) == "pong" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("request after shutdown: %q, %v", resp, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestNATSLongHandlerKeepsMessage: a handler that runs longer than
// AckWait keeps its message (the consumer tells the server it is in
// progress), so it is not delivered a second time meanwhile. Without
// that, it was delivered 4 times.
func TestNATSLongHandlerKeepsMessage(t *testing.T) {
	tr, ctx := ackWaitTransport(t, 300*time.Millisecond)
	if err := tr.Publish(ctx, "n1", []byte("batch")); err != nil {
		t.Fatal(err)
	}
	var deliveries atomic.Int32
	handled := make(chan struct{})
	cons, err := tr.Consume("n1", func(ctx context.Context, data []byte) error {
		if deliveries.Add(1) == 1 {
			time.Sleep(4 * tr.opts.AckWait) // longer than AckWait
			close(handled)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	select {
	case <-handled:
	case <-ctx.Done():
		t.Fatal("the message was never handled")
	}
	time.Sleep(2 * tr.opts.AckWait) // a redelivery would have come by now
	if n := deliveries.Load(); n != 1 {
		t.Errorf("delivered %d times, want once: the server took the running handler's message back", n)
	}
}

// TestNATSCloseGivesBack: the messages a consumer pulled ahead of its
// handler come back as soon as it is closed, not after AckWait (30 s
// here: the test would time out).
func TestNATSCloseGivesBack(t *testing.T) {
	tr, ctx := ackWaitTransport(t, 30*time.Second)
	const n = 10
	for i := range n {
		if err := tr.Publish(ctx, "n1", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	started := make(chan struct{})
	first, err := tr.Consume("n1", func(hctx context.Context, data []byte) error {
		select {
		case started <- struct{}{}:
		default:
		}
		<-hctx.Done() // held until Close
		return hctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("nothing delivered")
	}
	time.Sleep(100 * time.Millisecond) // the rest is pulled ahead meanwhile
	first.Close()

	got := make(chan byte, n)
	second, err := tr.Consume("n1", func(_ context.Context, data []byte) error {
		got <- data[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	seen := map[byte]bool{}
	deadline := time.After(5 * time.Second)
	for len(seen) < n {
		select {
		case b := <-got:
			seen[b] = true
		case <-deadline:
			t.Fatalf("%d of %d messages back 5 s after the first consumer closed (AckWait 30 s)", len(seen), n)
		}
	}
}

// ackWaitTransport is a NATS transport with AckWait ackWait on a server
// of its own, and a context that ends after 10 s or with the test.
func ackWaitTransport(t *testing.T, ackWait time.Duration) (*NATS, context.Context) {
	t.Helper()
	s := startTestServer(t)
	opts := natsOptions()
	opts.AckWait = ackWait
	tr := dialTest(t, s.ClientURL(), opts)
	t.Cleanup(func() { tr.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return tr, ctx
}
