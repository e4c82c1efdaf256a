//go:build linux

package fetch

import (
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestConnectTimeout makes a loopback port that never completes a TCP
// handshake: a listening socket with backlog 0 that never accepts, its queue
// filled by earlier connections, so the kernel drops further SYNs.
func TestConnectTimeout(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skipf("cannot set up the full-backlog listener this test needs on this kernel: %v", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Skipf("cannot set up the full-backlog listener this test needs on this kernel: %v", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Skipf("cannot set up the full-backlog listener this test needs on this kernel: %v", err)
	}
	sa, _ := syscall.Getsockname(fd)
	port := sa.(*syscall.SockaddrInet4).Port
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// Fill the accept queue.
	var fill []net.Conn
	defer func() {
		for _, c := range fill {
			c.Close()
		}
	}()
	for i := 0; i < 8; i++ {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			break // the queue is full: SYNs are dropped now
		}
		fill = append(fill, c)
	}
	if len(fill) == 8 {
		t.Skip("the kernel keeps accepting connections; cannot provoke a connect timeout")
	}
	f := NewHTTP(&Options{Resolver: newMapResolver(), AllowPrivate: true, ConnectTimeout: 150 * time.Millisecond})
	defer f.Close()
	start := time.Now()
	_, err = get(t, f, "http://"+addr+"/")
	wantKind(t, err, KindTimeout, ErrConnectTimeout)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}
