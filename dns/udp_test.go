package dns

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// TestUDPMatching plays a nameserver by hand to check that the shared
// socket hands an answer only to the query it answers.
func TestUDPMatching(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	u, err := dialUDP(pc.LocalAddr().String(), 512, newFlow(100*time.Millisecond, time.Second, 256))
	if err != nil {
		t.Fatal(err)
	}
	defer u.close()

	tests := []struct {
		name   string
		craft  func(q *mdns.Msg) []byte // bad packet sent before the real answer
		result error                    // what exchange returns
	}{
		{"good answer only", nil, nil},
		{"wrong ID first", func(q *mdns.Msg) []byte {
			m := new(mdns.Msg).SetReply(q)
			m.Id++
			b, _ := m.Pack()
			return b
		}, nil},
		{"wrong question first", func(q *mdns.Msg) []byte {
			m := new(mdns.Msg).SetReply(q)
			m.Question[0].Name = "evil.test."
			b, _ := m.Pack()
			return b
		}, nil},
		{"query echoed first", func(q *mdns.Msg) []byte {
			b, _ := q.Pack() // QR bit clear
			return b
		}, nil},
		{"short packet first", func(q *mdns.Msg) []byte { return []byte{1, 2, 3} }, nil},
		{"garbage with the right ID", func(q *mdns.Msg) []byte {
			return []byte{byte(q.Id >> 8), byte(q.Id), 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0, 0xff}
		}, errBadResponse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srvErr := make(chan error, 1)
			go func() {
				buf := make([]byte, 512)
				pc.SetReadDeadline(time.Now().Add(2 * time.Second))
				n, from, err := pc.ReadFrom(buf)
				if err != nil {
					srvErr <- err
					return
				}
				q := new(mdns.Msg)
				if err := q.Unpack(buf[:n]); err != nil {
					srvErr <- err
					return
				}
				if tc.craft != nil {
					pc.WriteTo(tc.craft(q), from)
				}
				good, _ := new(mdns.Msg).SetReply(q).Pack()
				_, err = pc.WriteTo(good, from)
				srvErr <- err
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			q := new(mdns.Msg).SetQuestion("a.test.", mdns.TypeA)
			m, err := u.exchange(ctx, q, 2*time.Second)
			if !errors.Is(err, tc.result) || (tc.result == nil && (m == nil || m.Id != q.Id || !m.Response)) {
				t.Fatalf("got %v, %v; want error %v", m, err, tc.result)
			}
			if err := <-srvErr; err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond) // let a late duplicate arrive; it must be dropped
			u.mu.Lock()
			n := len(u.pending)
			u.mu.Unlock()
			if n != 0 {
				t.Errorf("%d queries still pending", n)
			}
		})
	}
}

func TestUDPTimeoutForgets(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0") // never answers
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	u, err := dialUDP(pc.LocalAddr().String(), 512, newFlow(100*time.Millisecond, time.Second, 256))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.exchange(context.Background(), new(mdns.Msg).SetQuestion("a.test.", mdns.TypeA), 20*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := u.exchange(ctx, new(mdns.Msg).SetQuestion("a.test.", mdns.TypeA), time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if len(u.pending) != 0 {
		t.Error("timed-out query still pending")
	}
	u.close()
	if _, err := u.exchange(context.Background(), new(mdns.Msg).SetQuestion("a.test.", mdns.TypeA), time.Second); !errors.Is(err, ErrClosed) {
		t.Errorf("after close: %v", err)
	}
}
