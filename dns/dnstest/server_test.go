package dnstest

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	lo  = netip.MustParseAddr("127.0.0.1")
	lo2 = netip.MustParseAddr("127.0.0.2")
	lo6 = netip.MustParseAddr("::1")
)

// ask sends one query and returns the answer (nil on timeout).
func ask(t *testing.T, s *Server, net, name string, qtype uint16, timeout time.Duration) (*mdns.Msg, time.Duration, error) {
	t.Helper()
	c := &mdns.Client{Net: net, Timeout: timeout}
	m := new(mdns.Msg).SetQuestion(mdns.Fqdn(name), qtype)
	return c.Exchange(m, s.Addr())
}

func newTestServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	s := Start(t, cfg)
	s.AddAddr("a.test", 300, lo, lo6)
	s.AddAddr("b.test", 30, lo2)
	s.AddCNAME("alias.test", 120, "a.test")
	s.AddCNAME("alias2.test", 60, "alias.test")
	s.AddCNAME("loop1.test", 60, "loop2.test")
	s.AddCNAME("loop2.test", 60, "loop1.test")
	s.AddCNAME("dangling.test", 60, "nowhere.test")
	s.AddWildcard("sim.test", 600, lo)
	s.AddAddr("h1.sim.test", 5, lo2) // own records win over the wildcard
	return s
}

func addrs(m *mdns.Msg) []string {
	var out []string
	for _, rr := range m.Answer {
		switch rr := rr.(type) {
		case *mdns.A:
			out = append(out, rr.Header().Name+" A "+rr.A.String())
		case *mdns.AAAA:
			out = append(out, rr.Header().Name+" AAAA "+rr.AAAA.String())
		case *mdns.CNAME:
			out = append(out, rr.Header().Name+" CNAME "+rr.Target)
		}
	}
	return out
}

func TestAnswers(t *testing.T) {
	s := newTestServer(t, Config{NegativeTTL: 7})
	tests := []struct {
		name   string
		qname  string
		qtype  uint16
		rcode  int
		answer []string
		ttl    uint32 // of the first answer, or of the SOA for negative answers
	}{
		{"A", "a.test", mdns.TypeA, mdns.RcodeSuccess, []string{"a.test. A 127.0.0.1"}, 300},
		{"AAAA", "A.Test.", mdns.TypeAAAA, mdns.RcodeSuccess, []string{"a.test. AAAA ::1"}, 300},
		{"NODATA", "b.test", mdns.TypeAAAA, mdns.RcodeSuccess, nil, 7},
		{"NXDOMAIN", "nope.test", mdns.TypeA, mdns.RcodeNameError, nil, 7},
		{"CNAME chain", "alias2.test", mdns.TypeA, mdns.RcodeSuccess,
			[]string{"alias2.test. CNAME alias.test.", "alias.test. CNAME a.test.", "a.test. A 127.0.0.1"}, 60},
		{"CNAME asked", "alias.test", mdns.TypeCNAME, mdns.RcodeSuccess, []string{"alias.test. CNAME a.test."}, 120},
		{"CNAME loop", "loop1.test", mdns.TypeA, mdns.RcodeSuccess,
			[]string{"loop1.test. CNAME loop2.test.", "loop2.test. CNAME loop1.test."}, 60},
		{"CNAME to nowhere", "dangling.test", mdns.TypeA, mdns.RcodeNameError, []string{"dangling.test. CNAME nowhere.test."}, 60},
		{"wildcard", "h7.sim.test", mdns.TypeA, mdns.RcodeSuccess, []string{"h7.sim.test. A 127.0.0.1"}, 600},
		{"wildcard deep", "x.y.sim.test", mdns.TypeA, mdns.RcodeSuccess, []string{"x.y.sim.test. A 127.0.0.1"}, 600},
		{"wildcard not apex", "sim.test", mdns.TypeA, mdns.RcodeNameError, nil, 7},
		{"own beats wildcard", "h1.sim.test", mdns.TypeA, mdns.RcodeSuccess, []string{"h1.sim.test. A 127.0.0.2"}, 5},
		{"wildcard NODATA", "h7.sim.test", mdns.TypeAAAA, mdns.RcodeSuccess, nil, 7},
	}
	for _, tc := range tests {
		for _, net := range []string{"udp", "tcp"} {
			t.Run(tc.name+"/"+net, func(t *testing.T) {
				m, _, err := ask(t, s, net, tc.qname, tc.qtype, 2*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if m.Rcode != tc.rcode {
					t.Errorf("rcode %s, want %s", mdns.RcodeToString[m.Rcode], mdns.RcodeToString[tc.rcode])
				}
				if got := addrs(m); !slices.Equal(got, tc.answer) {
					t.Errorf("answer %q, want %q", got, tc.answer)
				}
				if !m.Authoritative || m.Truncated {
					t.Errorf("AA=%v TC=%v", m.Authoritative, m.Truncated)
				}
				var ttl uint32
				if len(m.Answer) > 0 {
					ttl = m.Answer[0].Header().Ttl
				}
				if len(tc.answer) == 0 || m.Rcode == mdns.RcodeNameError {
					if len(m.Ns) != 1 {
						t.Fatalf("negative answer without SOA: %v", m.Ns)
					}
					soa, ok := m.Ns[0].(*mdns.SOA)
					if !ok {
						t.Fatalf("authority %v, want SOA", m.Ns[0])
					}
					if len(tc.answer) == 0 {
						ttl = soa.Minttl
					}
				}
				if ttl != tc.ttl {
					t.Errorf("ttl %d, want %d", ttl, tc.ttl)
				}
			})
		}
	}
}

func TestNoCNAMEChase(t *testing.T) {
	s := newTestServer(t, Config{NoCNAMEChase: true})
	m, _, err := ask(t, s, "udp", "alias2.test", mdns.TypeA, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := addrs(m), []string{"alias2.test. CNAME alias.test."}; !slices.Equal(got, want) {
		t.Errorf("answer %q, want %q", got, want)
	}
}

func TestAddRR(t *testing.T) {
	s := Start(t, Config{})
	if err := s.AddRR(
		"zone.test. 300 IN SOA ns.zone.test. hm.zone.test. 1 7200 900 1209600 42",
		"mx.zone.test. 60 IN MX 10 mail.zone.test.",
		"*.wild.zone.test. 90 IN AAAA 2001:db8::1",
	); err != nil {
		t.Fatal(err)
	}
	if err := s.AddRR("bad record"); err == nil {
		t.Error("AddRR accepted garbage")
	}
	m, _, err := ask(t, s, "udp", "mx.zone.test", mdns.TypeMX, time.Second)
	if err != nil || len(m.Answer) != 1 {
		t.Fatalf("MX: %v %v", m, err)
	}
	m, _, err = ask(t, s, "udp", "q.wild.zone.test", mdns.TypeAAAA, time.Second)
	if err != nil || len(m.Answer) != 1 || m.Answer[0].(*mdns.AAAA).AAAA.String() != "2001:db8::1" {
		t.Fatalf("wildcard AAAA: %v %v", m, err)
	}
	m, _, err = ask(t, s, "udp", "missing.zone.test", mdns.TypeA, time.Second)
	if err != nil || m.Rcode != mdns.RcodeNameError || len(m.Ns) != 1 || m.Ns[0].(*mdns.SOA).Minttl != 42 {
		t.Fatalf("NXDOMAIN with the zone's SOA: %v %v", m, err)
	}
	s.Remove("mx.zone.test")
	m, _, _ = ask(t, s, "udp", "mx.zone.test", mdns.TypeMX, time.Second)
	if m.Rcode != mdns.RcodeNameError {
		t.Errorf("after Remove: %s", mdns.RcodeToString[m.Rcode])
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name      string
		fault     Fault
		net       string
		rcode     int
		answers   int
		truncated bool
		timeout   bool
		minDelay  time.Duration
	}{
		{"nxdomain", Fault{Mode: NXDomain}, "udp", mdns.RcodeNameError, 0, false, false, 0},
		{"servfail", Fault{Mode: ServFail}, "udp", mdns.RcodeServerFailure, 0, false, false, 0},
		{"refused", Fault{Mode: Refused}, "tcp", mdns.RcodeRefused, 0, false, false, 0},
		{"drop udp", Fault{Mode: Drop}, "udp", 0, 0, false, true, 0},
		{"drop tcp", Fault{Mode: Drop}, "tcp", 0, 0, false, true, 0},
		{"slow", Fault{Delay: 150 * time.Millisecond}, "udp", mdns.RcodeSuccess, 1, false, false, 150 * time.Millisecond},
		{"slow servfail", Fault{Mode: ServFail, Delay: 100 * time.Millisecond}, "udp", mdns.RcodeServerFailure, 0, false, false, 100 * time.Millisecond},
		{"truncate udp", Fault{Truncate: true}, "udp", mdns.RcodeSuccess, 0, true, false, 0},
		{"truncate tcp", Fault{Truncate: true}, "tcp", mdns.RcodeSuccess, 1, false, false, 0},
		{"other type only", Fault{Mode: Drop, Type: "AAAA"}, "udp", mdns.RcodeSuccess, 1, false, false, 0},
		{"this type only", Fault{Mode: ServFail, Type: "a"}, "udp", mdns.RcodeServerFailure, 0, false, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, Config{})
			s.SetFault("a.test", tc.fault)
			m, rtt, err := ask(t, s, tc.net, "a.test", mdns.TypeA, 400*time.Millisecond)
			if tc.timeout {
				if err == nil {
					t.Fatalf("got an answer %v, want a timeout", m)
				}
				log := s.Log()
				if len(log) != 1 || !log[0].Dropped {
					t.Fatalf("log %+v, want one dropped query", log)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Rcode != tc.rcode || len(m.Answer) != tc.answers || m.Truncated != tc.truncated {
				t.Errorf("rcode %s answers %d TC %v, want %s %d %v", mdns.RcodeToString[m.Rcode], len(m.Answer),
					m.Truncated, mdns.RcodeToString[tc.rcode], tc.answers, tc.truncated)
			}
			if rtt < tc.minDelay {
				t.Errorf("answered after %v, want ≥ %v", rtt, tc.minDelay)
			}
			// Other names are unaffected.
			if m, _, err := ask(t, s, tc.net, "b.test", mdns.TypeA, time.Second); err != nil || len(m.Answer) != 1 {
				t.Errorf("b.test: %v %v", m, err)
			}
			// Clearing the fault restores normal answers.
			s.SetFault("a.test", Fault{})
			if m, _, err := ask(t, s, tc.net, "a.test", mdns.TypeA, time.Second); err != nil || len(m.Answer) != 1 || m.Truncated {
				t.Errorf("after clearing: %v %v", m, err)
			}
		})
	}
}

func TestFaultSchedules(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
		want  string // rcode initial per query: S = SERVFAIL, N = NOERROR
	}{
		{"always", Fault{Mode: ServFail}, "SSSSS"},
		{"flap", Fault{Mode: ServFail, Flap: true}, "SNSNS"},
		{"first 2", Fault{Mode: ServFail, First: 2}, "SSNNN"},
		{"flap first 2", Fault{Mode: ServFail, Flap: true, First: 2}, "SNSNN"},
	}
	// A fault on the root wildcard covers every name.
	s := newTestServer(t, Config{})
	s.SetFault("*.", Fault{Mode: Refused})
	if m, _, err := ask(t, s, "udp", "a.test", mdns.TypeA, time.Second); err != nil || m.Rcode != mdns.RcodeRefused {
		t.Errorf("root wildcard fault: %v %v", m, err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, Config{})
			s.SetFault("*.sim.test", tc.fault)
			var got strings.Builder
			for range len(tc.want) {
				m, _, err := ask(t, s, "udp", "x.sim.test", mdns.TypeA, time.Second)
				if err != nil {
					t.Fatal(err)
				}
				got.WriteString(mdns.RcodeToString[m.Rcode][:1])
			}
			if got.String() != tc.want {
				t.Errorf("rcodes %s, want %s", got.String(), tc.want)
			}
			// Counters are per name and type: AAAA starts its own schedule.
			m, _, _ := ask(t, s, "udp", "x.sim.test", mdns.TypeAAAA, time.Second)
			if m.Rcode != mdns.RcodeServerFailure {
				t.Errorf("first AAAA: %s, want SERVFAIL", mdns.RcodeToString[m.Rcode])
			}
		})
	}
}

func TestNaturalTruncation(t *testing.T) {
	s := Start(t, Config{})
	var many []netip.Addr
	for i := range 100 {
		many = append(many, netip.AddrFrom4([4]byte{10, 0, byte(i / 256), byte(i)}))
	}
	s.AddAddr("big.test", 60, many...)
	m, _, err := ask(t, s, "udp", "big.test", mdns.TypeA, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Truncated || len(m.Answer) >= 100 {
		t.Errorf("UDP: TC=%v with %d answers, want truncated", m.Truncated, len(m.Answer))
	}
	m, _, err = ask(t, s, "tcp", "big.test", mdns.TypeA, time.Second)
	if err != nil || m.Truncated || len(m.Answer) != 100 {
		t.Errorf("TCP: %d answers TC=%v err=%v, want all 100", len(m.Answer), m.Truncated, err)
	}
	// With EDNS0 and a 4096-byte buffer the whole answer fits in UDP.
	c := &mdns.Client{Net: "udp", Timeout: time.Second, UDPSize: 4096}
	q := new(mdns.Msg).SetQuestion("big.test.", mdns.TypeA).SetEdns0(4096, false)
	m, _, err = c.Exchange(q, s.Addr())
	if err != nil || m.Truncated || len(m.Answer) != 100 {
		t.Errorf("EDNS: %d answers TC=%v err=%v, want all 100", len(m.Answer), m.Truncated, err)
	}
}

func TestLog(t *testing.T) {
	s := newTestServer(t, Config{})
	s.SetFault("b.test", Fault{Truncate: true})
	start := time.Now()
	ask(t, s, "udp", "a.test", mdns.TypeA, time.Second)
	ask(t, s, "udp", "B.test", mdns.TypeAAAA, time.Second)
	ask(t, s, "tcp", "nope.test", mdns.TypeA, time.Second)
	log := s.Log()
	want := []Query{
		{Name: "a.test", Type: "A", Transport: "udp", Rcode: "NOERROR", Answers: 1},
		{Name: "b.test", Type: "AAAA", Transport: "udp", Rcode: "NOERROR", Truncated: true},
		{Name: "nope.test", Type: "A", Transport: "tcp", Rcode: "NXDOMAIN"},
	}
	if len(log) != len(want) {
		t.Fatalf("log has %d entries, want %d: %+v", len(log), len(want), log)
	}
	for i, q := range log {
		if q.Time.Before(start) || q.Time.After(time.Now()) {
			t.Errorf("entry %d: time %v out of range", i, q.Time)
		}
		q.Time = time.Time{}
		if q != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, q, want[i])
		}
	}
	s.ResetLog()
	if len(s.Log()) != 0 {
		t.Error("ResetLog left entries")
	}
}

// TestCloseDuringDelay shows that Close cuts a long delay short and leaves
// no goroutine behind (goleak in TestMain).
func TestCloseDuringDelay(t *testing.T) {
	for _, transport := range []string{"udp", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			s, err := NewServer(Config{})
			if err != nil {
				t.Fatal(err)
			}
			s.AddAddr("a.test", 60, lo)
			s.SetFault("a.test", Fault{Delay: time.Hour})
			done := make(chan struct{})
			go func() {
				defer close(done)
				c := &mdns.Client{Net: transport, Timeout: 500 * time.Millisecond} // UDP: no answer will come
				c.Exchange(new(mdns.Msg).SetQuestion("a.test.", mdns.TypeA), s.Addr())
			}()
			for len(s.Log()) == 0 {
				time.Sleep(time.Millisecond)
			}
			start := time.Now()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Close took %v", d)
			}
			<-done
			if log := s.Log(); !log[0].Dropped {
				t.Errorf("delayed query not marked dropped: %+v", log[0])
			}
			if err := s.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

func TestListenFixedPort(t *testing.T) {
	a := Start(t, Config{})
	if _, err := NewServer(Config{Addr: a.Addr()}); err == nil {
		t.Error("listening twice on one port succeeded")
	}
	if _, err := NewServer(Config{Addr: "no-port"}); err == nil {
		t.Error("bad address accepted")
	}
}

func TestModeString(t *testing.T) {
	for m, want := range map[Mode]string{Answer: "answer", Drop: "drop", ServFail: "servfail", Mode(42): "mode(42)"} {
		if m.String() != want {
			t.Errorf("%d: %q, want %q", m, m.String(), want)
		}
	}
}
