package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	mdns "github.com/miekg/dns"
)

// stockRmemMax is net.core.rmem_max on a stock Linux kernel: whatever
// SO_RCVBUF a program asks for, its socket's receive queue holds at most
// twice this many bytes, about 512 small datagrams (832 bytes each, as the
// kernel counts them). Tests use it to behave as on an untuned machine,
// where the first burst of a crawl once lost most of its queries.
const stockRmemMax = 212992

// burst prefetches n new names under prefix through r, as the crawler does
// when it queues the hosts of its first pages (Prefetch must return at
// once), looks each one up and returns how long it took until all had
// resolved.
func burst(t testing.TB, r *Caching, prefix string, n int) time.Duration {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d.sim.test", prefix, i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	r.Prefetch(names...)
	if d := time.Since(start); d > fastLimit {
		t.Errorf("Prefetch of %d new names took %v, want < %v: it must return at once", n, d, fastLimit)
	}
	var failed atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := i; j < n; j += 8 {
				if addrs, err := r.LookupNetIP(ctx, names[j]); err != nil || len(addrs) == 0 {
					if failed.Add(1) <= 3 {
						t.Errorf("%s: %v, %v", names[j], addrs, err)
					}
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d of %d names did not resolve", f, n)
	}
	return d
}

// bufResolver returns a resolver over srv whose sockets' receive buffers
// are rcvbuf bytes (0: the resolver's own choice).
func bufResolver(t testing.TB, o Options, srv *dnstest.Server, rcvbuf int) *Caching {
	t.Helper()
	o.Nameservers = []string{srv.Addr()}
	r, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	if rcvbuf == 0 {
		return r
	}
	for _, u := range r.udp {
		if err := u.conn.SetReadBuffer(rcvbuf); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestBurstOfNewHosts is the start of a crawl: 1,000 new hosts prefetched
// at once, their 2,000 A and AAAA queries going to a local server whose
// socket, like the resolver's, has a stock kernel's receive buffer. Sent
// all at once they overflowed the server's receive queue: 35–100% of them
// were dropped by the kernel (/proc/net/udp), and each waited out a whole
// attempt timeout, then went out again as a burst of its own. Paced by the
// window, none may be lost: every name resolves with no retry, in far
// less than one attempt timeout (1.5 s here, the wait of the crawler's
// second attempt in the report). Fresh resolvers, five times over: the
// loss depended on scheduling and did not happen on every start.
func TestBurstOfNewHosts(t *testing.T) {
	const (
		timeout = 1500 * time.Millisecond
		limit   = time.Second // generous for -race on a loaded machine; a lost query costs ≥ 1.5 s
		names   = 1000
	)
	srv := dnstest.Start(t, dnstest.Config{ReadBuffer: stockRmemMax})
	srv.AddWildcard("sim.test", 300, lo)
	for round := range 5 {
		srv.ResetLog()
		// MinTimeout 300 ms: this test is about loss, and on a starved
		// machine under -race answers can take over 100 ms (each such
		// counts as a retry); TestLossyServerRetriesQuickly checks the
		// adaptive timeout.
		r := bufResolver(t, Options{Timeout: timeout, MinTimeout: 300 * time.Millisecond, Attempts: 3}, srv, stockRmemMax)
		d := burst(t, r, fmt.Sprintf("r%d-h", round), names)
		st := r.Stats()
		r.Close()
		t.Logf("round %d: %d names in %v, %d queries, %d retries, %d timeouts; the server saw %d",
			round, names, d.Round(time.Millisecond), st.Queries, st.Retries, st.Timeouts, len(srv.Log()))
		if d >= limit {
			t.Errorf("round %d: %d new names took %v, want < %v (a query lost waits %v)", round, names, d, limit, timeout)
		}
		// A retry is a query that went unanswered for at least
		// MinTimeout: the race detector on a busy machine causes a few
		// dozen such delays at most, a lost burst hundreds (347 to
		// 1,904 measured before the window).
		if st.Retries > names/10 {
			t.Errorf("round %d: %d retries for %d queries, want ≤ %d", round, st.Retries, st.Queries, names/10)
		}
	}
}

// lossyProxy relays UDP datagrams between one client and a DNS server
// and drops the first datagram of chosen questions: queries (the server
// never sees them) or answers (the server answered, the client never
// hears). Each chosen question loses exactly one datagram, so that the
// lookups need exactly one retransmission each.
type lossyProxy struct {
	front, back *net.UDPConn
	client      atomic.Pointer[net.UDPAddr]
	dropQuery   func(mdns.Question) bool
	dropAnswer  func(mdns.Question) bool

	mu      sync.Mutex
	seen    map[string]bool // "q/" or "a/" + name/type: a datagram was dropped
	dropped int
	wg      sync.WaitGroup
}

func startLossyProxy(t *testing.T, server string, dropQuery, dropAnswer func(mdns.Question) bool) *lossyProxy {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	raddr, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*net.UDPConn{front, back} {
		_ = c.SetReadBuffer(4 << 20)
	}
	p := &lossyProxy{front: front, back: back, dropQuery: dropQuery, dropAnswer: dropAnswer, seen: map[string]bool{}}
	p.wg.Add(2)
	go p.relay(front, "q/", p.dropQuery, func(b []byte, from *net.UDPAddr) {
		p.client.Store(from)
		_, _ = back.Write(b)
	})
	go p.relay(back, "a/", p.dropAnswer, func(b []byte, _ *net.UDPAddr) {
		if c := p.client.Load(); c != nil {
			_, _ = front.WriteToUDP(b, c)
		}
	})
	t.Cleanup(func() {
		front.Close()
		back.Close()
		p.wg.Wait()
	})
	return p
}

func (p *lossyProxy) Addr() string { return p.front.LocalAddr().String() }

// Dropped returns the number of datagrams dropped so far.
func (p *lossyProxy) Dropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

func (p *lossyProxy) relay(c *net.UDPConn, dir string, drop func(mdns.Question) bool, forward func([]byte, *net.UDPAddr)) {
	defer p.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := c.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		m := new(mdns.Msg)
		if m.Unpack(buf[:n]) == nil && len(m.Question) == 1 && drop(m.Question[0]) {
			key := dir + m.Question[0].Name + "/" + mdns.Type(m.Question[0].Qtype).String()
			p.mu.Lock()
			first := !p.seen[key]
			p.seen[key] = true
			if first {
				p.dropped++
			}
			p.mu.Unlock()
			if first {
				continue
			}
		}
		forward(buf[:n], from)
	}
}

// TestLossyServerRetriesQuickly: a server that loses some datagrams from
// the very first burst on. Every 7th name loses its first query and every
// 7th (another) its first answer, both families: 2 × 2 × 300/7 ≈ 172 of
// 600 queries. With a fixed first wait every lost query would wait out
// Timeout (3 s here); the adaptive timeout, learnt from the answers that
// do come, asks again after MinTimeout (100 ms), and the queries sent
// before the first answer are told so. All names resolve, each lost
// datagram costing one retransmission, in far less than one Timeout.
func TestLossyServerRetriesQuickly(t *testing.T) {
	const (
		timeout = 3 * time.Second
		limit   = time.Second
		names   = 300
	)
	srv := dnstest.Start(t, dnstest.Config{})
	srv.AddWildcard("sim.test", 300, lo)
	index := func(q mdns.Question) int {
		var i int
		fmt.Sscanf(q.Name, "h%d.", &i)
		return i
	}
	proxy := startLossyProxy(t, srv.Addr(),
		func(q mdns.Question) bool { return index(q)%7 == 0 },
		func(q mdns.Question) bool { return index(q)%7 == 3 })
	r, err := New(&Options{Nameservers: []string{proxy.Addr()}, Timeout: timeout, Backoff: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := burst(t, r, "h", names)
	st := r.Stats()
	lost := proxy.Dropped()
	t.Logf("%d names in %v: %d datagrams dropped, %d queries, %d retries, %d timeouts",
		names, d.Round(time.Millisecond), lost, st.Queries, st.Retries, st.Timeouts)
	if want := 4 * ((names + 6) / 7); lost != want {
		t.Fatalf("the proxy dropped %d datagrams, want %d", lost, want)
	}
	if d >= limit {
		t.Errorf("took %v, want < %v: lost queries waited for Timeout (%v)", d, limit, timeout)
	}
	// Each lost datagram needs one retry; a few more may come from
	// answers delayed past MinTimeout on a loaded machine.
	if int(st.Retries) < lost || int(st.Retries) > lost+names/10 {
		t.Errorf("%d retries for %d lost datagrams, want %d to %d", st.Retries, lost, lost, lost+names/10)
	}
}

// TestLateAnswerTaken: a retransmission does not abandon the query sent
// before it. The nameserver, played by hand, holds the first query until
// the second arrives and then answers only the first: the lookup takes
// that answer.
func TestLateAnswerTaken(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	srvErr := make(chan error, 1)
	go func() {
		var first *mdns.Msg
		var from net.Addr
		buf := make([]byte, 4096)
		for range 2 {
			_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				srvErr <- err
				return
			}
			q := new(mdns.Msg)
			if err := q.Unpack(buf[:n]); err != nil {
				srvErr <- err
				return
			}
			if first == nil {
				first, from = q, addr
			}
		}
		a := new(mdns.Msg).SetReply(first)
		rr, _ := mdns.NewRR("a.test. 60 IN A 127.0.0.2")
		a.Answer = []mdns.RR{rr}
		b, _ := a.Pack()
		_, err := pc.WriteTo(b, from)
		srvErr <- err
	}()
	r, err := New(&Options{Nameservers: []string{pc.LocalAddr().String()}, Network: "ip4",
		Attempts: 2, Timeout: 100 * time.Millisecond, Backoff: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	addrs, err := r.LookupNetIP(context.Background(), "a.test")
	if err != nil || len(addrs) != 1 || addrs[0] != lo2 {
		t.Fatalf("got %v, %v; want the answer to the first query", addrs, err)
	}
	if err := <-srvErr; err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Queries != 2 || st.Timeouts != 1 {
		t.Errorf("%d queries, %d timeouts; want 2 and 1", st.Queries, st.Timeouts)
	}
}
