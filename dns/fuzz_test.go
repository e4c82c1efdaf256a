package dns

import (
	"net/netip"
	"strings"
	"testing"

	mdns "github.com/miekg/dns"
)

// FuzzExtract decodes arbitrary packets as answers to an A or AAAA query:
// extract must not panic, must respect the alias budget and must return
// addresses only of the asked family.
func FuzzExtract(f *testing.F) {
	for _, m := range seedAnswers() {
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, m.Question[0].Qtype == mdns.TypeAAAA)
	}
	f.Fuzz(func(t *testing.T, packet []byte, six bool) {
		m := new(mdns.Msg)
		if m.Unpack(packet) != nil || len(m.Question) == 0 {
			return
		}
		qtype := mdns.TypeA
		if six {
			qtype = mdns.TypeAAAA
		}
		name := strings.ToLower(mdns.Fqdn(m.Question[0].Name))
		seen := map[string]bool{name: true}
		a, err := extract(m, name, qtype, seen, 3)
		if a.hops > 3 {
			t.Fatalf("followed %d aliases, budget 3", a.hops)
		}
		if err != nil {
			return
		}
		for _, ip := range a.addrs {
			if ip.Is4() != !six {
				t.Fatalf("address %v for qtype %d", ip, qtype)
			}
		}
		if len(a.addrs) > 0 && (a.next != "" || a.nxdomain || a.nodata) {
			t.Fatalf("answer both positive and negative: %+v", a)
		}
		if len(a.addrs) == 0 && a.next == "" && !a.nxdomain && !a.nodata {
			t.Fatalf("empty answer without a verdict: %+v", a)
		}
	})
}

// seedAnswers are the answers the resolver meets: plain, chased chain,
// alias only, loop, NXDOMAIN with SOA, NODATA.
func seedAnswers() []*mdns.Msg {
	rr := func(s string) mdns.RR {
		r, err := mdns.NewRR(s)
		if err != nil {
			panic(err)
		}
		return r
	}
	q := func(name string, t uint16) *mdns.Msg {
		m := new(mdns.Msg).SetQuestion(name, t)
		m.Response = true
		return m
	}
	plain := q("a.test.", mdns.TypeA)
	plain.Answer = []mdns.RR{rr("a.test. 60 IN A 192.0.2.1"), rr("a.test. 30 IN A 192.0.2.2")}
	six := q("a.test.", mdns.TypeAAAA)
	six.Answer = []mdns.RR{rr("A.TEST. 60 IN AAAA 2001:db8::1")}
	chain := q("www.test.", mdns.TypeA)
	chain.Answer = []mdns.RR{rr("www.test. 60 IN CNAME b.test."), rr("b.test. 60 IN CNAME c.test."), rr("c.test. 5 IN A 192.0.2.3")}
	alias := q("www.test.", mdns.TypeA)
	alias.Answer = []mdns.RR{rr("www.test. 60 IN CNAME elsewhere.test.")}
	loop := q("l1.test.", mdns.TypeA)
	loop.Answer = []mdns.RR{rr("l1.test. 60 IN CNAME l2.test."), rr("l2.test. 60 IN CNAME l1.test.")}
	nx := q("no.test.", mdns.TypeA)
	nx.Rcode = mdns.RcodeNameError
	nx.Ns = []mdns.RR{rr("test. 300 IN SOA ns.test. hm.test. 1 7200 900 1209600 60")}
	nodata := q("a.test.", mdns.TypeAAAA)
	nodata.Ns = nx.Ns
	return []*mdns.Msg{plain, six, chain, alias, loop, nx, nodata}
}

// FuzzCanonicalHost checks the host-name classifier on arbitrary strings:
// canonical names are lower case, dotless at the end, idempotent and equal
// to the input up to case and one trailing dot.
func FuzzCanonicalHost(f *testing.F) {
	for _, s := range []string{"a.test", "A.Test.", "localhost", "x.LOCALHOST", "192.0.2.1", "::1", "fe80::1%eth0",
		"1.2.3.999", "a..b", "", ".", "-a-.b_c", strings.Repeat("a", 64), "ünï.test", "a.b.c.d.e.f.g"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		name, kind, addr, hash := canonicalHost(host, 7)
		switch kind {
		case hostName, hostLocalhost:
			if name != strings.ToLower(strings.TrimSuffix(host, ".")) || len(name) > 253 || name == "" || strings.HasSuffix(name, ".") {
				t.Fatalf("%q → %q", host, name)
			}
			if n2, k2, _, h2 := canonicalHost(name, 7); n2 != name || k2 != kind || h2 != hash {
				t.Fatalf("not idempotent: %q → %q (%d) → %q (%d)", host, name, kind, n2, k2)
			}
			if _, err := netip.ParseAddr(name); err == nil {
				t.Fatalf("IP literal %q classified as a name", host)
			}
		case hostLiteral:
			if !addr.IsValid() {
				t.Fatalf("%q: literal without address", host)
			}
		case hostInvalid:
			if name != "" {
				t.Fatalf("%q: invalid but named %q", host, name)
			}
		}
	})
}

// FuzzDeliver feeds arbitrary packets to the socket reader's dispatch,
// with a query pending: it must not panic, and it may wake the waiter only
// with a response to its question or with a decoding error.
func FuzzDeliver(f *testing.F) {
	for _, m := range seedAnswers() {
		m.Id = 0x1234
		b, _ := m.Pack()
		f.Add(b)
	}
	f.Add([]byte{0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, p []byte) {
		u := &udpConn{pending: map[uint16]*waiter{}}
		w := &waiter{name: "a.test.", qtype: mdns.TypeA, ch: make(chan udpResult, 1)}
		u.pending[0x1234] = w
		u.deliver(p)
		select {
		case r := <-w.ch:
			if r.err == nil && (!r.msg.Response || !strings.EqualFold(r.msg.Question[0].Name, "a.test.") || r.msg.Question[0].Qtype != mdns.TypeA) {
				t.Fatalf("delivered a non-matching message: %v", r.msg)
			}
			if len(u.pending) != 0 {
				t.Fatal("woken waiter still pending")
			}
		default:
			if len(u.pending) != 1 {
				t.Fatal("waiter lost without a result")
			}
		}
	})
}
