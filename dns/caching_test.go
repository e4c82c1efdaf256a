package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	lo  = netip.MustParseAddr("127.0.0.1")
	lo2 = netip.MustParseAddr("127.0.0.2")
	lo6 = netip.MustParseAddr("::1")
)

// clock is a settable clock for TTL tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// zone starts a test server with the records most tests use.
func zone(t testing.TB, cfg dnstest.Config) *dnstest.Server {
	s := dnstest.Start(t, cfg)
	s.AddAddr("a.test", 300, lo, lo6)
	s.AddAddr("b.test", 30, lo2)
	s.AddAddr("six.test", 30, lo6)
	s.AddCNAME("alias.test", 120, "a.test")
	s.AddCNAME("alias2.test", 60, "alias.test")
	s.AddCNAME("loop1.test", 60, "loop2.test")
	s.AddCNAME("loop2.test", 60, "loop1.test")
	s.AddCNAME("dangling.test", 60, "nowhere.test")
	s.AddWildcard("sim.test", 600, lo)
	return s
}

// resolver returns a Caching resolver with test-sized waits, closed at the
// end of the test.
func resolver(t testing.TB, o Options, servers ...*dnstest.Server) *Caching {
	t.Helper()
	for _, s := range servers {
		o.Nameservers = append(o.Nameservers, s.Addr())
	}
	if o.Timeout == 0 {
		// Long enough that a loaded machine causes no retries, which
		// would change the query logs tests compare.
		o.Timeout = 2 * time.Second
	}
	if o.Backoff == 0 {
		o.Backoff = 2
	}
	c, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// queries returns the log entries of server s for name.
func queries(s *dnstest.Server, name, qtype string) []dnstest.Query {
	var out []dnstest.Query
	for _, q := range s.Log() {
		if q.Name == name && (qtype == "" || q.Type == qtype) {
			out = append(out, q)
		}
	}
	return out
}

func TestLookup(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	tests := []struct {
		host    string
		network string
		want    []netip.Addr
		kind    Kind // if no addresses are expected
	}{
		{"a.test", "", []netip.Addr{lo, lo6}, 0},
		{"A.Test.", "", []netip.Addr{lo, lo6}, 0},
		{"a.test", "ip4", []netip.Addr{lo}, 0},
		{"a.test", "ip6", []netip.Addr{lo6}, 0},
		{"b.test", "", []netip.Addr{lo2}, 0},
		{"six.test", "", []netip.Addr{lo6}, 0},
		{"six.test", "ip4", nil, NotFound},
		{"alias2.test", "", []netip.Addr{lo, lo6}, 0},
		{"h17.sim.test", "", []netip.Addr{lo}, 0},
		{"nope.test", "", nil, NotFound},
		{"dangling.test", "", nil, NotFound},
		{"loop1.test", "", nil, CNAMELoop},
		{"192.0.2.7", "", []netip.Addr{netip.MustParseAddr("192.0.2.7")}, 0},
		{"2001:db8::1", "", []netip.Addr{netip.MustParseAddr("2001:db8::1")}, 0},
		{"::ffff:10.0.0.1", "", []netip.Addr{netip.MustParseAddr("10.0.0.1")}, 0},
		{"localhost", "", []netip.Addr{lo, lo6}, 0},
		{"LocalHost.", "ip4", []netip.Addr{lo}, 0},
		{"db.localhost", "ip6", []netip.Addr{lo6}, 0},
		{"", "", nil, BadName},
		{"a..test", "", nil, BadName},
		{"a test", "", nil, BadName},
		{"ünï.test", "", nil, BadName},
		{strings.Repeat("a", 64) + ".test", "", nil, BadName},
		{strings.Repeat("a.", 127) + "test", "", nil, BadName},
	}
	resolvers := map[string]*Caching{}
	for _, n := range []string{"", "ip4", "ip6"} {
		resolvers[n] = resolver(t, Options{Network: n}, srv)
	}
	for _, tc := range tests {
		t.Run(tc.network+"/"+tc.host, func(t *testing.T) {
			got, err := resolvers[tc.network].LookupNetIP(context.Background(), tc.host)
			if tc.want != nil {
				if err != nil || !slices.Equal(got, tc.want) {
					t.Fatalf("got %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != tc.kind || !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, %v; want an *Error of kind %v", got, err, tc.kind)
			}
		})
	}
}

func TestTTL(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	srv.AddAddr("short.test", 5, lo)
	srv.AddAddr("long.test", 7200, lo)
	clk := newClock()
	r := resolver(t, Options{Network: "ip4", MinTTL: 20 * time.Second, MaxTTL: time.Hour, Now: clk.Now}, srv)
	ctx := context.Background()
	tests := []struct {
		name    string
		host    string
		advance time.Duration // since the previous step
		query   bool          // a query must reach the server
	}{
		{"first lookup", "b.test", 0, true},
		{"cached", "b.test", 29 * time.Second, false},
		{"expired by TTL 30", "b.test", 2 * time.Second, true},
		{"TTL 5 raised to MinTTL", "short.test", 0, true},
		{"MinTTL holds", "short.test", 19 * time.Second, false},
		{"MinTTL over", "short.test", 2 * time.Second, true},
		{"TTL 7200", "long.test", 0, true},
		{"capped at MaxTTL", "long.test", time.Hour - time.Second, false},
		{"MaxTTL over", "long.test", 2 * time.Second, true},
	}
	for _, tc := range tests {
		clk.Advance(tc.advance)
		before := len(queries(srv, tc.host, "A"))
		addrs, err := r.LookupNetIP(ctx, tc.host)
		if err != nil || len(addrs) != 1 {
			t.Fatalf("%s: %v %v", tc.name, addrs, err)
		}
		if asked := len(queries(srv, tc.host, "A")) > before; asked != tc.query {
			t.Errorf("%s: query sent = %v, want %v", tc.name, asked, tc.query)
		}
	}
	st := r.Stats()
	if st.Hits != 3 || st.Misses != 6 || st.Resolved != 6 {
		t.Errorf("stats %+v, want 3 hits, 6 misses, 6 resolved", st)
	}
}

func TestNegativeCaching(t *testing.T) {
	srv := zone(t, dnstest.Config{NegativeTTL: 45})
	if err := srv.AddRR("neg.test. 300 IN SOA ns.neg.test. hm.neg.test. 1 7200 900 1209600 4000"); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddRR("mx.test. 60 IN MX 10 b.test."); err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	r := resolver(t, Options{MinTTL: time.Second, MaxNegativeTTL: 10 * time.Minute, Now: clk.Now}, srv)
	ctx := context.Background()
	tests := []struct {
		name    string
		host    string
		advance time.Duration
		query   bool
	}{
		{"NXDOMAIN", "nope.test", 0, true},
		{"cached by SOA minimum 45", "nope.test", 44 * time.Second, false},
		{"expired", "nope.test", 2 * time.Second, true},
		// The SOA's own TTL (300) is below its MINIMUM (4000): RFC 2308
		// takes the smaller.
		{"SOA TTL bounds it", "x.neg.test", 0, true},
		{"still cached", "x.neg.test", 299 * time.Second, false},
		{"expired at 300", "x.neg.test", 2 * time.Second, true},
		{"NODATA for both families", "mx.test", 0, true},
		{"NODATA cached", "mx.test", 44 * time.Second, false},
	}
	for _, tc := range tests {
		clk.Advance(tc.advance)
		before := len(queries(srv, tc.host, ""))
		_, err := r.LookupNetIP(ctx, tc.host)
		if !errors.Is(err, NotFound) {
			t.Fatalf("%s: %v, want NotFound", tc.name, err)
		}
		if asked := len(queries(srv, tc.host, "")) > before; asked != tc.query {
			t.Errorf("%s: query sent = %v, want %v", tc.name, asked, tc.query)
		}
	}
	if st := r.Stats(); st.NegativeHits != 3 || st.NotFound != 5 {
		t.Errorf("stats %+v: want 3 negative hits, 5 not-found resolutions", st)
	}
	// MaxNegativeTTL caps the SOA's value.
	r2 := resolver(t, Options{MinTTL: time.Second, MaxNegativeTTL: 10 * time.Second, Now: clk.Now}, srv)
	r2.LookupNetIP(ctx, "nope.test")
	clk.Advance(11 * time.Second)
	before := len(queries(srv, "nope.test", ""))
	r2.LookupNetIP(ctx, "nope.test")
	if len(queries(srv, "nope.test", "")) == before {
		t.Error("negative entry outlived MaxNegativeTTL")
	}
}

func TestTruncationFallsBackToTCP(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	srv.SetFault("a.test", dnstest.Fault{Truncate: true})
	var many []netip.Addr
	for i := range 120 {
		many = append(many, netip.AddrFrom4([4]byte{10, 1, 0, byte(i)}))
	}
	srv.AddAddr("big.test", 60, many...)
	r := resolver(t, Options{Network: "ip4"}, srv)
	for _, tc := range []struct {
		host string
		n    int
	}{{"a.test", 1}, {"big.test", 120}} {
		addrs, err := r.LookupNetIP(context.Background(), tc.host)
		if err != nil || len(addrs) != tc.n {
			t.Fatalf("%s: %d addresses, %v; want %d", tc.host, len(addrs), err, tc.n)
		}
		var got []string
		for _, q := range queries(srv, tc.host, "A") {
			got = append(got, fmt.Sprintf("%s/%v", q.Transport, q.Truncated))
		}
		if want := []string{"udp/true", "tcp/false"}; !slices.Equal(got, want) {
			t.Errorf("%s: queries %v, want %v", tc.host, got, want)
		}
	}
	if st := r.Stats(); st.TCPFallbacks != 2 {
		t.Errorf("TCPFallbacks = %d, want 2", st.TCPFallbacks)
	}
}

// TestRetryBackoff checks Mercator's timed retries: the waits between
// attempts at one server grow by Backoff.
func TestRetryBackoff(t *testing.T) {
	const timeout = 80 * time.Millisecond
	const jitter = 30 * time.Millisecond // of the server's arrival times under load
	tests := []struct {
		name     string
		fault    dnstest.Fault
		queries  int  // queries the server sees
		kind     Kind // 0: success expected
		timeouts uint64
	}{
		{"servfail twice", dnstest.Fault{Mode: dnstest.ServFail, First: 2}, 3, 0, 0},
		{"dropped twice", dnstest.Fault{Mode: dnstest.Drop, First: 2}, 3, 0, 2},
		{"refused always", dnstest.Fault{Mode: dnstest.Refused}, 4, ServerFailure, 0},
		{"dropped always", dnstest.Fault{Mode: dnstest.Drop}, 4, Timeout, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := zone(t, dnstest.Config{})
			srv.SetFault("a.test", tc.fault)
			r := resolver(t, Options{Network: "ip4", Attempts: 4, Timeout: timeout, Backoff: 2}, srv)
			start := time.Now()
			addrs, err := r.LookupNetIP(context.Background(), "a.test")
			elapsed := time.Since(start)
			if tc.kind == 0 && (err != nil || len(addrs) != 1) {
				t.Fatalf("got %v, %v; want success", addrs, err)
			}
			if tc.kind != 0 && !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, %v; want %v", addrs, err, tc.kind)
			}
			log := queries(srv, "a.test", "A")
			if len(log) != tc.queries {
				t.Fatalf("%d queries, want %d", len(log), tc.queries)
			}
			// Attempt i waits timeout·2^i before the next one starts. The
			// gaps are seen by the server, so scheduling delays of the two
			// packets blur them a little either way; on a loaded machine
			// they can grow a lot, so only the lower bound is checked here
			// (TestOptions checks the wait schedule itself).
			for i := 1; i < len(log); i++ {
				gap := log[i].Time.Sub(log[i-1].Time)
				want := timeout << (i - 1)
				if gap < want-jitter {
					t.Errorf("gap before attempt %d: %v, want ≥ %v", i+1, gap, want)
				}
			}
			if tc.kind != 0 {
				if min := 7 * timeout; elapsed < min { // 1+2+4 waits before the 4th attempt
					t.Errorf("gave up after %v, want ≥ %v", elapsed, min)
				}
			}
			st := r.Stats()
			if st.Queries != uint64(tc.queries) || st.Retries != uint64(tc.queries-1) || st.Timeouts != tc.timeouts {
				t.Errorf("stats queries=%d retries=%d timeouts=%d", st.Queries, st.Retries, st.Timeouts)
			}
		})
	}
}

func TestFailover(t *testing.T) {
	// A port nobody listens on: the kernel answers "connection refused".
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := pc.LocalAddr().String()
	pc.Close()

	good := zone(t, dnstest.Config{})
	mute := zone(t, dnstest.Config{})
	mute.SetFault("*.test", dnstest.Fault{Mode: dnstest.Drop})
	failing := zone(t, dnstest.Config{})
	failing.SetFault("*.test", dnstest.Fault{Mode: dnstest.ServFail})

	// A fast failure must move on at once, a silent server after one wait.
	// The bounds are loose because the machine may be loaded; the query
	// logs pin down what happened.
	tests := []struct {
		name     string
		first    string
		log      *dnstest.Server // the first server's log, if it has one
		timeout  time.Duration
		min, max time.Duration
	}{
		{"first times out", mute.Addr(), mute, 150 * time.Millisecond, 150 * time.Millisecond, 2 * time.Second},
		{"first fails", failing.Addr(), failing, 2 * time.Second, 0, time.Second},
		{"first unreachable", deadAddr, nil, 2 * time.Second, 0, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			good.ResetLog()
			r, err := New(&Options{Nameservers: []string{tc.first, good.Addr()}, Network: "ip4", Timeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			start := time.Now()
			addrs, err := r.LookupNetIP(context.Background(), "b.test")
			d := time.Since(start)
			if err != nil || !slices.Equal(addrs, []netip.Addr{lo2}) {
				t.Fatalf("got %v, %v", addrs, err)
			}
			if d < tc.min || d > tc.max {
				t.Errorf("took %v, want between %v and %v", d, tc.min, tc.max)
			}
			if n := len(good.Log()); n != 1 {
				t.Errorf("second server got %d queries, want 1", n)
			}
			if tc.log != nil {
				if n := len(queries(tc.log, "b.test", "A")); n != 1 {
					t.Errorf("first server got %d queries, want 1", n)
				}
			}
		})
	}
}

func TestCNAME(t *testing.T) {
	tests := []struct {
		name  string
		chase bool // the server follows the chain itself
		host  string
		want  []netip.Addr
		kind  Kind
		asked []string // names the resolver asked (A queries), in order
	}{
		{"chased chain", true, "alias2.test", []netip.Addr{lo}, 0, []string{"alias2.test"}},
		{"followed chain", false, "alias2.test", []netip.Addr{lo}, 0, []string{"alias2.test", "alias.test", "a.test"}},
		{"chased loop", true, "loop1.test", nil, CNAMELoop, []string{"loop1.test"}},
		{"followed loop", false, "loop1.test", nil, CNAMELoop, []string{"loop1.test", "loop2.test"}},
		{"chased too long", true, "c0.test", nil, CNAMELoop, []string{"c0.test"}},
		{"followed too long", false, "c0.test", nil, CNAMELoop, []string{"c0.test", "c1.test", "c2.test", "c3.test"}},
		{"within bound", false, "c7.test", []netip.Addr{lo2}, 0, []string{"c7.test", "c8.test", "c9.test", "c10.test"}},
		{"dangling", false, "dangling.test", nil, NotFound, []string{"dangling.test", "nowhere.test"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := zone(t, dnstest.Config{NoCNAMEChase: !tc.chase})
			for i := range 10 { // c0 → c1 → ... → c10
				srv.AddCNAME(fmt.Sprintf("c%d.test", i), 60, fmt.Sprintf("c%d.test", i+1))
			}
			srv.AddAddr("c10.test", 60, lo2)
			r := resolver(t, Options{Network: "ip4", MaxCNAME: 3}, srv)
			addrs, err := r.LookupNetIP(context.Background(), tc.host)
			if tc.want != nil && (err != nil || !slices.Equal(addrs, tc.want)) {
				t.Fatalf("got %v, %v; want %v", addrs, err, tc.want)
			}
			if tc.want == nil && !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, %v; want %v", addrs, err, tc.kind)
			}
			var asked []string
			for _, q := range srv.Log() {
				asked = append(asked, q.Name)
			}
			if !slices.Equal(asked, tc.asked) {
				t.Errorf("asked %v, want %v", asked, tc.asked)
			}
		})
	}
}

// TestSlowFamily: a server that drops AAAA queries must not hold the IPv4
// addresses back for the whole retry schedule (here 0.1+0.2+0.4+0.8+1.6 s).
func TestSlowFamily(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	srv.SetFault("a.test", dnstest.Fault{Mode: dnstest.Drop, Type: "AAAA"})
	srv.SetFault("six.test", dnstest.Fault{Mode: dnstest.Drop, Type: "A"})
	r := resolver(t, Options{Timeout: 100 * time.Millisecond, Backoff: 2, MinTTL: time.Minute}, srv)
	for _, tc := range []struct {
		host string
		want []netip.Addr
	}{{"a.test", []netip.Addr{lo}}, {"six.test", []netip.Addr{lo6}}} {
		start := time.Now()
		addrs, err := r.LookupNetIP(context.Background(), tc.host)
		d := time.Since(start)
		if err != nil || !slices.Equal(addrs, tc.want) {
			t.Fatalf("%s: got %v, %v; want %v", tc.host, addrs, err, tc.want)
		}
		if d < 100*time.Millisecond || d > 1500*time.Millisecond {
			t.Errorf("%s: took %v, want about one Timeout (100ms)", tc.host, d)
		}
	}
	// The partial answer is cached like any other.
	if _, err := r.LookupNetIP(context.Background(), "a.test"); err != nil || r.Stats().Hits != 1 {
		t.Errorf("partial answer not cached: %v, %+v", err, r.Stats())
	}
}

func TestSingleflight(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	srv.SetFault("h1.sim.test", dnstest.Fault{Delay: 100 * time.Millisecond})
	r := resolver(t, Options{Network: "ip4", Timeout: 5 * time.Second}, srv) // no retry, even under load
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if addrs, err := r.LookupNetIP(context.Background(), "H1.sim.test"); err != nil || len(addrs) != 1 {
				t.Errorf("%v %v", addrs, err)
			}
		})
	}
	wg.Wait()
	if n := len(srv.Log()); n != 1 {
		t.Errorf("%d queries for 100 concurrent lookups of one name, want 1", n)
	}
	if st := r.Stats(); st.Misses+st.Shared+st.Hits != 100 || st.Misses != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestSlowNameBlocksNoOther is the bottleneck of IIR §20.2.2: 1,000
// lookups of distinct names in flight at once, one of which takes 2 s to
// answer; none of the others may wait for it. They must finish within
// fastLimit (100 ms; 400 ms under the race detector). On a machine whose
// CPUs are busy with other work, even lookups that block on nothing take
// longer; so control rounds of the same size without the slow name are
// measured before and after, and the bound is raised to twice their
// slowest lookup if that is larger. A lookup that waited for the slow name would take 2 s
// either way.
func TestSlowNameBlocksNoOther(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	srv.SetFault("slow.sim.test", dnstest.Fault{Delay: 2 * time.Second})
	// A only: one query per lookup halves the CPU the rounds need (the
	// race detector multiplies it); A and AAAA travel the same path.
	r := resolver(t, Options{Network: "ip4", Timeout: 5 * time.Second}, srv)
	// Warm up sockets and code paths outside the measurement.
	if _, err := r.LookupNetIP(context.Background(), "warm.sim.test"); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	round := func(first, prefix string) []time.Duration {
		names := make([]string, n)
		names[0] = first
		for i := 1; i < n; i++ {
			names[i] = fmt.Sprintf("%s%d.sim.test", prefix, i)
		}
		took := make([]time.Duration, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, name := range names {
			wg.Go(func() {
				<-start
				t0 := time.Now()
				addrs, err := r.LookupNetIP(context.Background(), name)
				took[i] = time.Since(t0)
				if err != nil || len(addrs) != 1 {
					t.Errorf("%s: %v %v", name, addrs, err)
				}
			})
		}
		close(start)
		wg.Wait()
		return took
	}
	stat := func(d []time.Duration) (p50, p99, worst time.Duration) {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)/2], d[len(d)*99/100], d[len(d)-1]
	}
	_, _, before := stat(round("c0.sim.test", "c"))
	took := round("slow.sim.test", "x")
	_, _, after := stat(round("d0.sim.test", "d"))
	controlWorst := max(before, after)
	p50, p99, worst := stat(took[1:])
	t.Logf("control rounds (no slow name): max %v, %v; with the slow name (%v): others p50 %v, p99 %v, max %v",
		before, after, took[0], p50, p99, worst)
	if took[0] < 2*time.Second {
		t.Errorf("slow name answered after %v, want ≥ 2s", took[0])
	}
	limit := max(fastLimit, 2*controlWorst)
	if worst >= limit {
		t.Errorf("slowest of the other %d lookups took %v, want < %v", n-1, worst, limit)
	}
}

func TestContextEndsWait(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	srv.SetFault("a.test", dnstest.Fault{Delay: 300 * time.Millisecond})
	r := resolver(t, Options{Network: "ip4", Timeout: 5 * time.Second}, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := r.LookupNetIP(ctx, "a.test")
	var e *Error
	if !errors.As(err, &e) || e.Kind != Timeout || !errors.Is(err, context.DeadlineExceeded) || !e.Timeout() {
		t.Fatalf("got %v, want a Timeout wrapping context.DeadlineExceeded", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := r.LookupNetIP(ctx2, "a.test"); !errors.Is(err, context.Canceled) || !errors.Is(err, Unknown) {
		t.Fatalf("canceled context: %v", err)
	}
	// The resolution went on and filled the cache.
	for r.Stats().InFlight > 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if addrs, err := r.LookupNetIP(context.Background(), "a.test"); err != nil || len(addrs) != 1 {
		t.Fatalf("after the background resolution: %v %v", addrs, err)
	}
	if st := r.Stats(); st.Hits != 1 || len(srv.Log()) != 1 {
		t.Errorf("hits %d, queries %d; want 1 and 1", st.Hits, len(srv.Log()))
	}
}

func TestPrefetch(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	r := resolver(t, Options{Network: "ip4"}, srv)
	hosts := []string{"p1.sim.test", "p2.sim.test", "P1.sim.test.", "10.0.0.1", "bad..name", "localhost"}
	r.Prefetch(hosts...)
	for r.Stats().InFlight > 0 {
		time.Sleep(time.Millisecond)
	}
	if st := r.Stats(); st.Prefetches != 2 || st.Misses != 2 {
		t.Fatalf("stats %+v: want 2 prefetches", st)
	}
	for _, h := range hosts[:3] {
		if _, err := r.LookupNetIP(context.Background(), h); err != nil {
			t.Fatal(err)
		}
	}
	r.Prefetch("p1.sim.test") // cached: nothing to do
	if st := r.Stats(); st.Hits != 3 || st.Prefetches != 2 || len(srv.Log()) != 2 {
		t.Errorf("stats %+v, %d queries: want 3 hits, 2 prefetches, 2 queries", st, len(srv.Log()))
	}
}

func TestCacheBound(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	r := resolver(t, Options{Network: "ip4", CacheSize: 64}, srv)
	for i := range 300 {
		if _, err := r.LookupNetIP(context.Background(), fmt.Sprintf("n%d.sim.test", i)); err != nil {
			t.Fatal(err)
		}
	}
	st := r.Stats()
	if st.Entries > 64 || st.Evictions != uint64(300-st.Entries) {
		t.Errorf("entries %d, evictions %d; want ≤ 64 and the rest evicted", st.Entries, st.Evictions)
	}
}

func TestShardLRU(t *testing.T) {
	c := newCache(2 * shardCount) // 2 entries per shard
	s := &c.shards[0]
	now := int64(0)
	later := int64(time.Hour)
	s.putLocked("a", nil, nil, later)
	s.putLocked("b", nil, nil, later)
	if s.getLocked("a", now) == nil { // a becomes the most recent
		t.Fatal("a missing")
	}
	s.putLocked("c", nil, nil, later)
	if s.getLocked("b", now) != nil || s.getLocked("a", now) == nil || s.getLocked("c", now) == nil {
		t.Error("the least recently used entry (b) should have been evicted")
	}
	s.putLocked("a", nil, nil, now) // replaced, already expired
	if s.getLocked("a", now) != nil {
		t.Error("expired entry returned")
	}
	if len(s.entries) != 2 || s.evictions != 1 {
		t.Errorf("%d entries, %d evictions", len(s.entries), s.evictions)
	}
}

func TestClose(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	srv.SetFault("a.test", dnstest.Fault{Mode: dnstest.Drop})
	r, err := New(&Options{Nameservers: []string{srv.Addr()}, Network: "ip4", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.LookupNetIP(context.Background(), "b.test"); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := r.LookupNetIP(context.Background(), "a.test")
		errc <- err
	}()
	for len(srv.Log()) < 2 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	r.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("in-flight lookup: %v, want ErrClosed", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	if _, err := r.LookupNetIP(context.Background(), "b.test"); err != nil {
		t.Errorf("cached name after Close: %v", err)
	}
	if _, err := r.LookupNetIP(context.Background(), "c.test"); !errors.Is(err, ErrClosed) {
		t.Errorf("new name after Close: %v", err)
	}
	r.Prefetch("d.test") // no goroutine may start
	r.Close()
}

func TestStatsLatency(t *testing.T) {
	srv := zone(t, dnstest.Config{})
	srv.SetFault("*.sim.test", dnstest.Fault{Delay: 20 * time.Millisecond})
	r := resolver(t, Options{Network: "ip4"}, srv)
	for i := range 5 {
		r.LookupNetIP(context.Background(), fmt.Sprintf("s%d.sim.test", i))
	}
	r.LookupNetIP(context.Background(), "s0.sim.test")
	st := r.Stats()
	l := st.Latency
	if l.Count != 5 || l.Mean < 20*time.Millisecond || l.Max < l.Mean || l.P50 < 20*time.Millisecond || l.P99 < l.P50 || l.P50 > 2*l.Max {
		t.Errorf("latency %+v", l)
	}
	if hr := st.HitRate(); hr < 0.16 || hr > 0.17 {
		t.Errorf("hit rate %.3f, want 1/6", hr)
	}
}

func TestOptions(t *testing.T) {
	dir := t.TempDir()
	conf := dir + "/resolv.conf"
	if err := os.WriteFile(conf, []byte("# comment\nnameserver 192.0.2.53\nnameserver 2001:db8::53\nsearch example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    Options
		servers []string
		bad     bool
	}{
		{"resolv.conf", Options{ResolvConf: conf}, []string{"192.0.2.53:53", "[2001:db8::53]:53"}, false},
		{"missing file", Options{ResolvConf: dir + "/none"}, []string{"127.0.0.1:53"}, false},
		{"explicit", Options{Nameservers: []string{"127.0.0.1", "127.0.0.2:5353"}}, []string{"127.0.0.1:53", "127.0.0.2:5353"}, false},
		{"host name", Options{Nameservers: []string{"dns.example"}}, nil, true},
		{"bad network", Options{Nameservers: []string{"127.0.0.1"}, Network: "tcp"}, nil, true},
		{"min above max", Options{Nameservers: []string{"127.0.0.1"}, MinTTL: time.Hour, MaxTTL: time.Minute}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.opts.withDefaults()
			if (err != nil) != tc.bad {
				t.Fatalf("err = %v, want error: %v", err, tc.bad)
			}
			if !tc.bad && !slices.Equal(o.Nameservers, tc.servers) {
				t.Errorf("nameservers %v, want %v", o.Nameservers, tc.servers)
			}
		})
	}
	o, _ := (*Options)(nil).withDefaults()
	var waits []time.Duration
	for i := range o.Attempts {
		waits = append(waits, o.wait(i))
	}
	want := []time.Duration{time.Second, 3 * time.Second, 9 * time.Second, 27 * time.Second, 81 * time.Second}
	if !slices.Equal(waits, want) || o.wait(10) != 90*time.Second {
		t.Errorf("default waits %v (then %v), want %v capped at 90s", waits, o.wait(10), want)
	}
	if o.MinTimeout != 100*time.Millisecond || o.MaxInFlight != 256 || o.schedule() != 121*time.Second {
		t.Errorf("defaults: MinTimeout %v, MaxInFlight %d, schedule %v; want 100ms, 256, 121s", o.MinTimeout, o.MaxInFlight, o.schedule())
	}
	if o.waitFrom(100*time.Millisecond, 2) != 900*time.Millisecond {
		t.Errorf("third wait from a 100ms RTO: %v, want 900ms", o.waitFrom(100*time.Millisecond, 2))
	}
	if o, _ := (&Options{Timeout: 50 * time.Millisecond}).withDefaults(); o.MinTimeout != 50*time.Millisecond {
		t.Errorf("MinTimeout %v with Timeout 50ms, want capped at Timeout", o.MinTimeout)
	}
	if _, err := New(&Options{Nameservers: []string{"127.0.0.1"}, Network: "x"}); err == nil {
		t.Error("New accepted bad options")
	}
}
