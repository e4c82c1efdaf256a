package dnstest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// Config configures a Server. The zero value is a usable configuration.
type Config struct {
	// Addr is the host:port the server listens on, over both UDP and TCP.
	// Default "127.0.0.1:0": a random free loopback port.
	Addr string

	// NegativeTTL is the TTL and MINIMUM (seconds) of the SOA record
	// synthesized for negative answers (NXDOMAIN, NODATA) when no SOA was
	// added for an enclosing zone. Default 60.
	NegativeTTL uint32

	// NoCNAMEChase makes the server answer a query for an alias with the
	// CNAME record alone, so that the client has to query the target itself.
	// Default false: the chain is followed inside the server.
	NoCNAMEChase bool

	// ReadBuffer is the receive buffer asked for the UDP socket
	// (SO_RCVBUF), which holds queries that arrive faster than the server
	// reads them; the kernel caps it at net.core.rmem_max and doubles it.
	// Default 4 MiB. A stock Linux kernel's rmem_max is 212992: set that
	// to see what a burst of queries does to a server on an untuned
	// machine (about 512 small datagrams fit).
	ReadBuffer int
}

// Server is an in-process DNS server. All methods are safe for concurrent
// use, also while queries are being answered; records and faults changed
// while a query is in flight apply to the next query. Answering a query
// costs one map lookup per label of the name (wildcards, faults) under one
// lock; UDP queries are read and answered in batches by one goroutine, a
// delayed answer takes a goroutine until it is sent. The query log grows
// by about 150 bytes per query until ResetLog.
type Server struct {
	cfg    Config
	addr   string
	udp    net.PacketConn
	tcp    *mdns.Server
	done   chan struct{} // closed by Close: cuts delays short
	served sync.WaitGroup
	close  sync.Once

	mu     sync.Mutex
	names  map[string][]mdns.RR // owner (lower-case FQDN, "*." for wildcards) → records
	faults map[string]*faultState
	log    []Query
}

// maxChase bounds the CNAME chain the server follows for one query.
const maxChase = 16

// NewServer starts a server on cfg.Addr (UDP and TCP on the same port).
// Close it when done.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.NegativeTTL == 0 {
		cfg.NegativeTTL = 60
	}
	if cfg.ReadBuffer <= 0 {
		cfg.ReadBuffer = 4 << 20
	}
	pc, ln, err := listen(cfg.Addr, cfg.ReadBuffer)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:    cfg,
		addr:   pc.LocalAddr().String(),
		done:   make(chan struct{}),
		names:  make(map[string][]mdns.RR),
		faults: make(map[string]*faultState),
	}
	s.udp = pc
	s.tcp = &mdns.Server{Listener: ln, Handler: mdns.HandlerFunc(s.serveDNS)}
	started := make(chan struct{})
	s.tcp.NotifyStartedFunc = func() { close(started) }
	s.served.Add(2)
	go s.serveUDP(pc)
	go func() {
		defer s.served.Done()
		_ = s.tcp.ActivateAndServe() // returns when shut down
	}()
	<-started
	return s, nil
}

// Start is NewServer for tests: it fails tb on error and closes the server
// when the test ends.
func Start(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s, err := NewServer(cfg)
	if err != nil {
		tb.Fatalf("dnstest: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// listen opens a UDP socket (receive buffer rcvbuf) and a TCP listener on
// the same port. With port
// 0 the UDP port is chosen first; if its TCP twin is taken, it tries again.
func listen(addr string, rcvbuf int) (net.PacketConn, net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("dnstest: listen %q: %w", addr, err)
	}
	tries := 1
	if port == "0" {
		tries = 20
	}
	for i := 0; ; i++ {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("dnstest: listen: %w", err)
		}
		_, p, _ := net.SplitHostPort(pc.LocalAddr().String())
		ln, err := net.Listen("tcp", net.JoinHostPort(host, p))
		if err == nil {
			if uc, ok := pc.(*net.UDPConn); ok {
				// Bursts of thousands of queries must not overflow the
				// default receive queue (~200 KiB); best effort, capped by
				// the kernel's rmem_max.
				_ = uc.SetReadBuffer(rcvbuf)
				_ = uc.SetWriteBuffer(4 << 20)
			}
			return pc, ln, nil
		}
		pc.Close()
		if i+1 >= tries {
			return nil, nil, fmt.Errorf("dnstest: listen: %w", err)
		}
	}
}

// Addr returns the host:port the server answers on, over UDP and TCP.
func (s *Server) Addr() string { return s.addr }

// Close stops the server: queries being delayed are dropped, and Close
// returns once every goroutine the server started has ended. It is safe to
// call more than once.
func (s *Server) Close() error {
	var err error
	s.close.Do(func() {
		close(s.done)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = errors.Join(s.udp.Close(), s.tcp.ShutdownContext(ctx))
		s.served.Wait()
	})
	return err
}

// AddAddr adds A (IPv4) and AAAA (IPv6) records for name with the given
// TTL in seconds. A name starting with "*." is a wildcard (see AddWildcard).
func (s *Server) AddAddr(name string, ttl uint32, addrs ...netip.Addr) {
	owner := canonical(name)
	rrs := make([]mdns.RR, 0, len(addrs))
	for _, a := range addrs {
		a = a.Unmap()
		if a.Is4() {
			rrs = append(rrs, &mdns.A{Hdr: hdr(owner, mdns.TypeA, ttl), A: a.AsSlice()})
		} else if a.Is6() {
			rrs = append(rrs, &mdns.AAAA{Hdr: hdr(owner, mdns.TypeAAAA, ttl), AAAA: a.AsSlice()})
		}
	}
	s.add(owner, rrs...)
}

// AddWildcard makes every name strictly under zone that has no records of
// its own answer with addrs (A or AAAA by family): AddWildcard("sim.test",
// 300, 127.0.0.1) makes h1.sim.test and a.b.sim.test resolve to 127.0.0.1,
// but not sim.test itself.
func (s *Server) AddWildcard(zone string, ttl uint32, addrs ...netip.Addr) {
	s.AddAddr("*."+strings.TrimPrefix(zone, "."), ttl, addrs...)
}

// AddCNAME makes name an alias of target with the given TTL. A name may have
// only one CNAME; adding another replaces it.
func (s *Server) AddCNAME(name string, ttl uint32, target string) {
	owner := canonical(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	rrs := s.names[owner][:0:0]
	for _, rr := range s.names[owner] {
		if rr.Header().Rrtype != mdns.TypeCNAME {
			rrs = append(rrs, rr)
		}
	}
	s.names[owner] = append(rrs, &mdns.CNAME{Hdr: hdr(owner, mdns.TypeCNAME, ttl), Target: canonical(target)})
}

// AddRR adds records written in zone-file syntax, one per string, e.g.
// "a.test. 60 IN A 192.0.2.1" or "test. 300 IN SOA ns.test. h.test. 1 7200
// 900 1209600 30" (an SOA sets the negative TTL of the names under it).
// Owner names are taken as absolute. It adds nothing if any record is
// invalid.
func (s *Server) AddRR(records ...string) error {
	rrs := make([]mdns.RR, 0, len(records))
	for _, text := range records {
		rr, err := mdns.NewRR(text)
		if err != nil {
			return fmt.Errorf("dnstest: record %q: %w", text, err)
		}
		if rr == nil {
			return fmt.Errorf("dnstest: record %q: empty", text)
		}
		rr.Header().Name = canonical(rr.Header().Name)
		rrs = append(rrs, rr)
	}
	for _, rr := range rrs {
		s.add(rr.Header().Name, rr)
	}
	return nil
}

// Remove deletes every record owned by name; the name answers NXDOMAIN
// afterwards unless a wildcard covers it.
func (s *Server) Remove(name string) {
	s.mu.Lock()
	delete(s.names, canonical(name))
	s.mu.Unlock()
}

func (s *Server) add(owner string, rrs ...mdns.RR) {
	s.mu.Lock()
	s.names[owner] = append(s.names[owner], rrs...)
	s.mu.Unlock()
}

func hdr(owner string, t uint16, ttl uint32) mdns.RR_Header {
	return mdns.RR_Header{Name: owner, Rrtype: t, Class: mdns.ClassINET, Ttl: ttl}
}

// canonical returns name as a lower-case FQDN.
func canonical(name string) string {
	return mdns.CanonicalName(name)
}
