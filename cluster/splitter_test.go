package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// gatedTransport's Publish waits for a value on release, and fails with
// the error it reads.
type gatedTransport struct {
	Transport // only Publish is used
	started   chan struct{}
	release   chan error
}

func (g *gatedTransport) Publish(ctx context.Context, node string, data []byte) error {
	g.started <- struct{}{}
	select {
	case err := <-g.release:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestSplitterFlushWaits: Flush waits for a publish a full batch started
// before it, returns nil once it stored, and ErrNotStored when it failed
// (its URLs back in the buffer) or ctx ended first.
func TestSplitterFlushWaits(t *testing.T) {
	ring, err := NewRing([]string{"a", "b"}, 16)
	if err != nil {
		t.Fatal(err)
	}
	var remote string // a host b owns
	for i := 0; remote == ""; i++ {
		h := "h" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".test"
		if ring.HostOwner(h) == "b" {
			remote = h
		}
	}
	for _, tc := range []struct {
		name    string
		publish error // the result of the publish Flush waits for
		cancel  bool  // ctx ends while Flush waits
		wantErr bool
	}{
		{"stored", nil, false, false},
		{"failed", errors.New("store down"), false, true},
		{"ctx ends", nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gatedTransport{started: make(chan struct{}, 4), release: make(chan error, 4)}
			s := newSplitter(ring, "a", g, 1, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
			sent := make(chan error, 1)
			go func() { sent <- s.Send(context.Background(), []frontier.URL{{URL: "http://" + remote + "/x"}}) }()
			<-g.started // the full batch is being published by Send
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			flushed := make(chan error, 1)
			go func() { flushed <- s.Flush(ctx) }()
			select {
			case err := <-flushed:
				t.Fatalf("Flush returned %v while a publish started before it was under way", err)
			case <-time.After(50 * time.Millisecond):
			}
			if tc.cancel {
				cancel()
			} else {
				g.release <- tc.publish
			}
			err := <-flushed
			if (err != nil) != tc.wantErr || err != nil && !errors.Is(err, ErrNotStored) {
				t.Errorf("Flush = %v, want an error %v (ErrNotStored)", err, tc.wantErr)
			}
			if tc.cancel {
				g.release <- nil
			}
			<-sent
			if tc.publish != nil && s.Buffered() != 1 {
				t.Errorf("after a failed publish %d URLs buffered, want 1", s.Buffered())
			}
		})
	}
}
