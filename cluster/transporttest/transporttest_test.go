package transporttest_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/crawlkit/crawlkit/cluster"
	"github.com/crawlkit/crawlkit/cluster/transporttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newMem(t *testing.T) *cluster.Mem {
	m := cluster.NewMem()
	m.RedeliverDelay = 10 * time.Millisecond
	t.Cleanup(func() { m.Close() })
	return m
}

// TestMem runs the suite on the in-process transport (package cluster
// runs it on NATS and Meter too).
func TestMem(t *testing.T) {
	transporttest.Run(t, transporttest.Harness{
		New: func(t *testing.T) cluster.Transport { return newMem(t) },
	})
}

// broken breaks one rule of the Transport contract over a Mem.
type broken struct {
	how string
	cluster.Transport
}

func (b broken) Consume(node string, h func(ctx context.Context, data []byte) error) (io.Closer, error) {
	if b.how == "acks-failures" {
		inner := h
		h = func(ctx context.Context, data []byte) error {
			inner(ctx, data)
			return nil
		}
	}
	return b.Transport.Consume(node, h)
}

func (b broken) Request(ctx context.Context, subject string, req []byte) ([]byte, error) {
	resp, err := b.Transport.Request(ctx, subject, req)
	if err != nil && b.how == "bare-errors" {
		err = errors.New(err.Error())
	}
	return resp, err
}

type asyncCloser struct{ io.Closer }

func (c asyncCloser) Close() error {
	go c.Closer.Close()
	return nil
}

func (b broken) Serve(subject string, h func(ctx context.Context, req []byte) ([]byte, error)) (io.Closer, error) {
	c, err := b.Transport.Serve(subject, h)
	if err == nil && b.how == "close-does-not-wait" {
		c = asyncCloser{c}
	}
	return c, err
}

// TestBrokenTransportHelper is run by TestSuiteCatchesBrokenTransports
// in a child process.
func TestBrokenTransportHelper(t *testing.T) {
	how := os.Getenv("TRANSPORTTEST_BROKEN")
	if how == "" {
		t.Skip("a helper: TestSuiteCatchesBrokenTransports runs it in a child process with TRANSPORTTEST_BROKEN set")
	}
	transporttest.Run(t, transporttest.Harness{
		New: func(t *testing.T) cluster.Transport { return broken{how, newMem(t)} },
	})
}

// TestSuiteCatchesBrokenTransports checks the suite: a transport breaking
// one rule fails the check that covers it.
func TestSuiteCatchesBrokenTransports(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"acks-failures":       "Delivery",
		"bare-errors":         "Request",
		"close-does-not-wait": "ServeClose",
	} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenTransportHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "TRANSPORTTEST_BROKEN="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a transport that %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenTransportHelper/"+check) {
				t.Fatalf("the suite did not fail %s for %s:\n%s", check, how, out)
			}
		})
	}
}
