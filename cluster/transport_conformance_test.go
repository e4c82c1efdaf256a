package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/crawlkit/crawlkit/cluster"
	"github.com/crawlkit/crawlkit/cluster/transporttest"
	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

func newMem(t *testing.T) *cluster.Mem {
	m := cluster.NewMem()
	m.RedeliverDelay = 10 * time.Millisecond
	t.Cleanup(func() { m.Close() })
	return m
}

func TestMemTransportConformance(t *testing.T) {
	transporttest.Run(t, transporttest.Harness{
		New: func(t *testing.T) cluster.Transport { return newMem(t) },
	})
}

func TestMeterTransportConformance(t *testing.T) {
	transporttest.Run(t, transporttest.Harness{
		New: func(t *testing.T) cluster.Transport { return &cluster.Meter{T: newMem(t)} },
	})
}

// natsServer starts an embedded NATS server on 127.0.0.1 for the test.
func natsServer(t *testing.T) *server.Server {
	t.Helper()
	s, err := cluster.StartServer(&cluster.ServerOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

var natsSeq atomic.Int64

// natsHarness makes transports with a stream and prefix of their own on
// one server, and peers that share them.
type natsHarness struct {
	url  string
	mu   sync.Mutex
	opts map[cluster.Transport]cluster.NATSOptions
}

func newNATSHarness(t *testing.T) *natsHarness {
	return &natsHarness{url: natsServer(t).ClientURL(), opts: map[cluster.Transport]cluster.NATSOptions{}}
}

func (h *natsHarness) dial(t *testing.T, o cluster.NATSOptions) *cluster.NATS {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr, err := cluster.DialNATS(ctx, h.url, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	h.mu.Lock()
	h.opts[tr] = o
	h.mu.Unlock()
	return tr
}

func (h *natsHarness) New(t *testing.T) cluster.Transport {
	n := natsSeq.Add(1)
	// A short AckWait: messages a closed consumer had fetched come back
	// to the next one after it.
	return h.dial(t, cluster.NATSOptions{Prefix: fmt.Sprintf("c%d", n), Stream: fmt.Sprintf("C%d", n),
		Memory: true, AckWait: time.Second, RedeliverDelay: 10 * time.Millisecond})
}

func (h *natsHarness) Peer(t *testing.T, tr cluster.Transport) cluster.Transport {
	h.mu.Lock()
	o := h.opts[tr]
	h.mu.Unlock()
	return h.dial(t, o)
}

func TestNATSTransportConformance(t *testing.T) {
	h := newNATSHarness(t)
	transporttest.Run(t, transporttest.Harness{New: h.New, Peer: h.Peer})
}

// TestIndexTransportConformance runs the index.Transport suite on
// IndexTransport: the node's Handler is served on the subject
// IndexTransport asks, over Mem and over NATS.
func TestIndexTransportConformance(t *testing.T) {
	serve := func(t *testing.T, tr, peer cluster.Transport, node *index.Handler) index.Transport {
		c, err := peer.Serve("index.n1", node.RoundTrip)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return cluster.IndexTransport(tr, "n1")
	}
	t.Run("Mem", func(t *testing.T) {
		indextest.TestTransport(t, indextest.TransportHarness{
			New: func(t *testing.T, node *index.Handler) index.Transport {
				m := newMem(t)
				return serve(t, m, m, node)
			},
			Unreachable: func(t *testing.T) index.Transport { return cluster.IndexTransport(newMem(t), "n1") },
		})
	})
	t.Run("NATS", func(t *testing.T) {
		h := newNATSHarness(t)
		indextest.TestTransport(t, indextest.TransportHarness{
			New: func(t *testing.T, node *index.Handler) index.Transport {
				tr := h.New(t)
				return serve(t, tr, h.Peer(t, tr), node)
			},
			Unreachable: func(t *testing.T) index.Transport { return cluster.IndexTransport(h.New(t), "n1") },
		})
	})
}
