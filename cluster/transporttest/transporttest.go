package transporttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/cluster"
)

// Harness tells Run how to make the transport under test.
type Harness struct {
	// New returns a transport over an empty medium: no message in any
	// inbox, no subject served, a zero Backlog. It is called once per
	// subtest; cleanup (Close, a server's shutdown) belongs in t.Cleanup.
	// A transport that redelivers failed messages after a delay should be
	// given a short one (tens of milliseconds): the suite waits for it.
	New func(t *testing.T) cluster.Transport
	// Peer, if set, returns another transport over the same medium as tr,
	// as another process of the cluster would open it (a second
	// connection to the same server). The suite publishes on one and
	// consumes or serves on the other. nil means tr is its own peer.
	Peer func(t *testing.T, tr cluster.Transport) cluster.Transport
	// Skip names subtests that the implementation is known to fail, each
	// with the reason, which the subtest reports as it skips.
	Skip map[string]string
}

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"Delivery", testDelivery},
		{"Order", testOrder},
		{"ConsumeClose", testConsumeClose},
		{"PublishCopies", testPublishCopies},
		{"Request", testRequest},
		{"ServeConcurrent", testServeConcurrent},
		{"ServeClose", testServeClose},
		{"Canceled", testCanceled},
		{"CancelDuringRequest", testCancelDuringRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if reason, ok := h.Skip[tc.name]; ok {
				t.Skip("known deviation: " + reason)
			}
			tc.fn(t, h)
		})
	}
}

// pair returns the transport under test and its peer.
func pair(t *testing.T, h Harness) (tr, peer cluster.Transport) {
	tr = h.New(t)
	peer = tr
	if h.Peer != nil {
		peer = h.Peer(t, tr)
	}
	return tr, peer
}

// eventually polls cond until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// closeWithin closes c and fails t unless Close returns within d.
func closeWithin(t *testing.T, c io.Closer, d time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Errorf("Close of the %s did not return within %v", what, d)
		<-done
	}
}

// testDelivery: every message delivered once, redelivery after a handler
// error and after a consumer closed in the middle of a handler, and the
// backlog.
func testDelivery(t *testing.T, h Harness) {
	tr, peer := pair(t, h)
	ctx := context.Background()
	for i := range 10 {
		if err := tr.Publish(ctx, "n1", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 { // another node's inbox, never consumed here
		if err := tr.Publish(ctx, "n2", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	bl, err := tr.Backlog(ctx)
	if err != nil || bl.Pending != 13 || bl.Published < 13 || bl.ByNode["n1"] != 10 || bl.ByNode["n2"] != 3 {
		t.Fatalf("Backlog = %+v, %v; want 13 published and pending, 10 for n1 and 3 for n2", bl, err)
	}
	var mu sync.Mutex
	var got []byte
	failed := false
	gotFive := make(chan struct{})
	c, err := peer.Consume("n1", func(ctx context.Context, d []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if d[0] == 3 && !failed {
			failed = true
			return errors.New("try again")
		}
		if len(got) == 5 {
			mu.Unlock()
			<-ctx.Done() // stuck until the consumer closes
			mu.Lock()
			return ctx.Err()
		}
		got = append(got, d[0])
		if len(got) == 5 {
			close(gotFive)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-gotFive:
	case <-time.After(10 * time.Second):
		c.Close()
		t.Fatal("five messages not delivered within 10 s")
	}
	closeWithin(t, c, 10*time.Second, "consumer whose handler is stuck on its context")
	mu.Lock()
	n := len(got)
	mu.Unlock()
	// A second consumer (the restarted node) gets the rest.
	done := make(chan struct{})
	c2, err := tr.Consume("n1", func(ctx context.Context, d []byte) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d[0])
		if len(got) == 10 {
			close(done)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the rest; an inbox emptied short of them lost some.
	lost := func() bool {
		bl, err := tr.Backlog(ctx)
		mu.Lock()
		defer mu.Unlock()
		return err == nil && bl.ByNode["n1"] == 0 && len(got) < 10
	}
	if !eventually(10*time.Second, func() bool {
		select {
		case <-done:
			return true
		default:
			if !lost() {
				return false
			}
			time.Sleep(20 * time.Millisecond) // not an acknowledgement racing the count
			return lost()
		}
	}) || lost() {
		mu.Lock()
		t.Errorf("only %d of 10 messages delivered (%d before the restart)", len(got), n)
		mu.Unlock()
	}
	c2.Close()
	mu.Lock()
	sorted := slices.Sorted(slices.Values(got))
	mu.Unlock()
	if !failed {
		t.Error("message 3 was never delivered to the first consumer")
	}
	if want := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}; !bytes.Equal(sorted, want) {
		t.Fatalf("delivered %v, want each of 0..9 once", sorted)
	}
	if !eventually(5*time.Second, func() bool {
		bl, err = tr.Backlog(ctx)
		return err == nil && bl.Pending == 3 && bl.ByNode["n1"] == 0 && bl.ByNode["n2"] == 3 && bl.Published >= 13
	}) {
		t.Fatalf("Backlog = %+v, %v after n1's messages were acknowledged; want 3 pending, all n2's", bl, err)
	}
}

// testOrder: without failures an inbox comes oldest first.
func testOrder(t *testing.T, h Harness) {
	tr, peer := pair(t, h)
	ctx := context.Background()
	const n = 50
	for i := range n {
		if err := tr.Publish(ctx, "n1", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var got []byte
	done := make(chan struct{})
	c, err := peer.Consume("n1", func(_ context.Context, d []byte) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d[0])
		if len(got) == n {
			close(done)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("inbox not delivered within 10 s")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, b := range got {
		if int(b) != i {
			t.Fatalf("delivered %v, want 0..%d in order", got, n-1)
		}
	}
}

// testConsumeClose: no handler after Close returns; later messages wait.
func testConsumeClose(t *testing.T, h Harness) {
	tr, peer := pair(t, h)
	ctx := context.Background()
	var closed atomic.Bool
	var count, late atomic.Int64
	c, err := peer.Consume("n1", func(context.Context, []byte) error {
		if closed.Load() {
			late.Add(1)
		}
		count.Add(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := tr.Publish(ctx, "n1", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if !eventually(10*time.Second, func() bool { return count.Load() == 3 }) {
		t.Fatalf("%d of 3 messages delivered", count.Load())
	}
	closeWithin(t, c, 10*time.Second, "consumer")
	closed.Store(true)
	for i := range 2 {
		if err := tr.Publish(ctx, "n1", []byte{byte(10 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if late.Load() != 0 {
		t.Errorf("%d messages handled after the consumer's Close returned", late.Load())
	}
	var bl cluster.Backlog
	if !eventually(5*time.Second, func() bool {
		bl, err = tr.Backlog(ctx)
		return err == nil && bl.Pending == 2 && bl.ByNode["n1"] == 2
	}) {
		t.Errorf("Backlog = %+v, %v; want the 2 messages published after Close pending for n1", bl, err)
	}
}

// testPublishCopies: the caller may reuse its buffer once Publish returns.
func testPublishCopies(t *testing.T, h Harness) {
	tr, peer := pair(t, h)
	buf := []byte("original")
	if err := tr.Publish(context.Background(), "n1", buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXXXXX")
	got := make(chan string, 1)
	c, err := peer.Consume("n1", func(_ context.Context, d []byte) error {
		select {
		case got <- string(d):
		default:
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case s := <-got:
		if s != "original" {
			t.Errorf("delivered %q, want %q as published: the message shares the publisher's buffer", s, "original")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("message not delivered within 10 s")
	}
}

func echo(_ context.Context, req []byte) ([]byte, error) {
	if string(req) == "fail" {
		return nil, errors.New("boom")
	}
	return append([]byte("re:"), req...), nil
}

// testRequest: no responder, a reply, a remote error, and a request that
// the handler may keep.
func testRequest(t *testing.T, h Harness) {
	tr, peer := pair(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tr.Request(ctx, "echo", []byte("x")); !errors.Is(err, cluster.ErrNoResponder) {
		t.Fatalf("request without a server: %v, want ErrNoResponder", err)
	}
	kept := make(chan []byte, 1)
	s, err := peer.Serve("echo", func(ctx context.Context, req []byte) ([]byte, error) {
		if bytes.HasPrefix(req, []byte("keep")) {
			kept <- req // the handler's to keep
		}
		return echo(ctx, req)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := tr.Request(ctx, "echo", []byte("hi"))
	if err != nil || string(resp) != "re:hi" {
		t.Fatalf("Request = %q, %v; want \"re:hi\"", resp, err)
	}
	if resp, err := tr.Request(ctx, "echo", nil); err != nil || string(resp) != "re:" {
		t.Fatalf("empty Request = %q, %v; want \"re:\"", resp, err)
	}
	_, err = tr.Request(ctx, "echo", []byte("fail"))
	var ce *cluster.Error
	if !errors.Is(err, cluster.ErrRemote) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("failing handler: %v; want a *cluster.Error wrapping ErrRemote with the handler's message", err)
	}
	buf := []byte("keep me")
	if _, err := tr.Request(ctx, "echo", buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXXXX")
	if got := <-kept; string(got) != "keep me" {
		t.Errorf("the handler's request became %q after Request returned: it shares the caller's buffer", got)
	}
}

// testServeConcurrent: each of many concurrent requests gets its reply.
func testServeConcurrent(t *testing.T, h Harness) {
	tr, peer := pair(t, h)
	var running, most atomic.Int64
	s, err := peer.Serve("echo", func(ctx context.Context, req []byte) ([]byte, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
		return echo(ctx, req)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := range 10 {
				req := fmt.Sprintf("w%d-%d", w, i)
				resp, err := tr.Request(ctx, "echo", []byte(req))
				if err != nil || string(resp) != "re:"+req {
					t.Errorf("Request(%s) = %q, %v", req, resp, err)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("at most %d handlers ran at once", most.Load())
}

// testServeClose: Close waits for running handlers; then no responder.
func testServeClose(t *testing.T, h Harness) {
	tr, peer := pair(t, h)
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var running atomic.Int64
	s, err := peer.Serve("slow", func(ctx context.Context, req []byte) ([]byte, error) {
		running.Add(1)
		defer running.Add(-1)
		once.Do(func() { close(started) })
		<-release
		return []byte("done"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reqDone := make(chan struct{})
	go func() {
		defer close(reqDone)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tr.Request(ctx, "slow", []byte("x"))
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		close(release)
		s.Close()
		t.Fatal("the handler did not start within 10 s")
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
		t.Error("Close returned while a handler was running")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10 s of its handler's end")
	}
	if n := running.Load(); n != 0 {
		t.Errorf("%d handlers still running after Close returned", n)
	}
	<-reqDone
	var err2 error
	if !eventually(3*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err2 = tr.Request(ctx, "slow", []byte("y"))
		return errors.Is(err2, cluster.ErrNoResponder)
	}) {
		t.Errorf("Request after the server's Close: %v, want ErrNoResponder", err2)
	}
}

// testCanceled: a canceled context fails Publish and Request.
func testCanceled(t *testing.T, h Harness) {
	tr, peer := pair(t, h)
	s, err := peer.Serve("echo", echo)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tr.Publish(ctx, "n1", []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Publish with a canceled context: %v, want an error wrapping context.Canceled", err)
	}
	if _, err := tr.Request(ctx, "echo", []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Request with a canceled context: %v, want an error wrapping context.Canceled", err)
	}
}

// testCancelDuringRequest: a Request returns when its context ends, not
// when its handler does.
func testCancelDuringRequest(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name     string
		honour   bool
		deadline bool
	}{
		{"canceled, handler honours it", true, false},
		{"canceled, handler ignores it", false, false},
		{"deadline, handler ignores it", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, peer := pair(t, h)
			started, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			s, err := peer.Serve("slow", func(ctx context.Context, req []byte) ([]byte, error) {
				once.Do(func() { close(started) })
				done := ctx.Done()
				if !tc.honour {
					done = nil
				}
				select {
				case <-done:
					return nil, ctx.Err()
				case <-release:
					return []byte("late"), nil
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			defer close(release) // before Close, which waits for the handler
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.deadline {
				ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
			}
			errc := make(chan error, 1)
			go func() {
				_, err := tr.Request(ctx, "slow", []byte("x"))
				errc <- err
			}()
			select {
			case <-started:
			case err := <-errc:
				t.Fatalf("Request returned %v before its handler ran", err)
			case <-time.After(10 * time.Second):
				t.Fatal("the handler did not start within 10 s")
			}
			if !tc.deadline {
				cancel()
			}
			select {
			case err := <-errc:
				if !errors.Is(err, ctx.Err()) {
					t.Errorf("Request = %v, want an error wrapping %v", err, ctx.Err())
				}
			case <-time.After(time.Second + 200*time.Millisecond):
				t.Error("Request did not return within a second of its context's end")
			}
		})
	}
}
