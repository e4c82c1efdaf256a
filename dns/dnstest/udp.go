package dnstest

import (
	"errors"
	"net"
	"time"

	mdns "github.com/miekg/dns"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// batchConn reads and writes many datagrams per system call (recvmmsg and
// sendmmsg on Linux; one at a time elsewhere).
type batchConn interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

// udpBatch is the number of datagrams read or written per system call.
const udpBatch = 64

// serveUDP answers UDP queries until the socket is closed. One goroutine
// reads queries in batches, answers those without delay in place and sends
// the answers in batches; a delayed answer gets a goroutine of its own.
// Compared with a goroutine and two system calls per query, this keeps the
// server's share of the CPU small in benchmarks of the resolver that run
// on the same machine.
func (s *Server) serveUDP(pc net.PacketConn) {
	defer s.served.Done()
	var bc batchConn = ipv4.NewPacketConn(pc)
	if a, ok := pc.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() == nil {
		bc = ipv6.NewPacketConn(pc)
	}
	in := make([]ipv4.Message, udpBatch)
	for i := range in {
		in[i].Buffers = [][]byte{make([]byte, 4096)}
	}
	out := make([]ipv4.Message, 0, udpBatch)
	for {
		n, err := bc.ReadBatch(in, 0)
		if err != nil {
			var ne net.Error
			if errors.Is(err, net.ErrClosed) || !errors.As(err, &ne) || !ne.Timeout() {
				return
			}
			continue
		}
		out = out[:0]
		for i := range n {
			m := &in[i]
			req := new(mdns.Msg)
			if req.Unpack(m.Buffers[0][:m.N]) != nil || req.Response {
				continue // not a query
			}
			r, idx, at := s.begin(req, "udp")
			switch {
			case r.delay > 0:
				s.served.Add(1)
				go s.later(pc, m.Addr, r, idx, at)
			case r.msg == nil: // dropped, and logged so
			default:
				b, err := r.msg.Pack()
				if err != nil {
					s.finish(idx, at, reply{})
					continue
				}
				out = append(out, ipv4.Message{Buffers: [][]byte{b}, Addr: m.Addr})
			}
		}
		for len(out) > 0 {
			k, err := bc.WriteBatch(out, 0)
			if err != nil || k == 0 {
				break // loopback datagrams: nothing to retry
			}
			out = out[k:]
		}
	}
}

// later sends a delayed UDP answer, unless the server closes first.
func (s *Server) later(pc net.PacketConn, to net.Addr, r reply, idx int, at time.Time) {
	defer s.served.Done()
	if !s.wait(r.delay) {
		r.msg = nil
	}
	var b []byte
	if r.msg != nil {
		var err error
		if b, err = r.msg.Pack(); err != nil {
			r.msg = nil
		}
	}
	s.finish(idx, at, r)
	if r.msg != nil {
		if _, err := pc.WriteTo(b, to); err != nil {
			s.finish(idx, at, reply{delay: r.delay})
		}
	}
}
