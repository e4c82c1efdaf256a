//go:build linux

package dnstest

import (
	"net"
	"syscall"
	"testing"
)

// TestReadBuffer checks that Config.ReadBuffer sizes the UDP socket's
// receive buffer (Linux doubles the value asked for, up to rmem_max).
func TestReadBuffer(t *testing.T) {
	for _, tc := range []struct {
		ask, min int
	}{{212992, 2 * 212992}, {0, 2 * 212992}} { // the default, 4 MiB, is at least a stock rmem_max
		s := newTestServer(t, Config{ReadBuffer: tc.ask})
		rc, err := s.udp.(*net.UDPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var got int
		var serr error
		if err := rc.Control(func(fd uintptr) {
			got, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		}); err != nil || serr != nil {
			t.Fatal(err, serr)
		}
		if got < tc.min || (tc.ask > 0 && got != 2*tc.ask) {
			t.Errorf("ReadBuffer %d: SO_RCVBUF %d, want %d", tc.ask, got, max(tc.min, 2*tc.ask))
		}
	}
}
