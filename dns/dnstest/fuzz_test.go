package dnstest

import (
	"net/netip"
	"testing"

	mdns "github.com/miekg/dns"
)

// FuzzRespond feeds arbitrary packets to the server's answering logic: for
// every message the DNS library can decode, respond must not panic, must
// return a message that packs, and a UDP answer must fit the size the query
// allows.
func FuzzRespond(f *testing.F) {
	for _, q := range []struct {
		name  string
		qtype uint16
		edns  bool
	}{
		{"a.test.", mdns.TypeA, false},
		{"big.test.", mdns.TypeA, false},
		{"x.sim.test.", mdns.TypeAAAA, true},
		{"loop1.test.", mdns.TypeA, false},
		{"flap.test.", mdns.TypeANY, true},
		{".", mdns.TypeSOA, false},
	} {
		m := new(mdns.Msg).SetQuestion(q.name, q.qtype)
		if q.edns {
			m.SetEdns0(1232, false)
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, true)
	}
	s := &Server{
		cfg:    Config{NegativeTTL: 60},
		names:  map[string][]mdns.RR{},
		faults: map[string]*faultState{},
	}
	lo := netip.MustParseAddr("127.0.0.1")
	s.AddAddr("a.test", 60, lo, netip.MustParseAddr("::1"))
	s.AddWildcard("sim.test", 60, lo)
	s.AddCNAME("loop1.test", 60, "loop2.test")
	s.AddCNAME("loop2.test", 60, "loop1.test")
	var many []netip.Addr
	for i := range 80 {
		many = append(many, netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}))
	}
	s.AddAddr("big.test", 60, many...)
	s.SetFault("flap.test", Fault{Mode: ServFail, Flap: true, Truncate: true})

	f.Fuzz(func(t *testing.T, packet []byte, udp bool) {
		req := new(mdns.Msg)
		if req.Unpack(packet) != nil {
			return
		}
		s.mu.Lock()
		r := s.respond(req, udp)
		s.mu.Unlock()
		if r.msg == nil {
			return
		}
		b, err := r.msg.Pack()
		if err != nil {
			t.Fatalf("answer does not pack: %v\n%v", err, r.msg)
		}
		limit := mdns.MinMsgSize
		if opt := req.IsEdns0(); opt != nil {
			limit = max(limit, int(opt.UDPSize()))
		}
		if udp && len(b) > limit {
			t.Fatalf("UDP answer of %d bytes exceeds %d", len(b), limit)
		}
	})
}
