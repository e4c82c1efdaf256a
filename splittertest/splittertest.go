package splittertest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

// Harness tells Run how to make the splitters under test.
type Harness struct {
	// New returns the splitters of a cluster of the named nodes, one per
	// node in the order of nodes, each built for that node list, and has
	// deliver(i, u) called once for every URL u that reaches node i: where
	// the node's crawler receives it (crawlkit.Crawler.Add, or the fetch
	// of what Add queued). A URL is in flight from the Send that took it
	// until deliver returns for it, so the suite holds URLs in flight by
	// blocking in deliver; deliver is safe for concurrent use. New is
	// called once per subtest (twice in LocalStable); cleanup belongs in
	// t.Cleanup.
	New func(t *testing.T, nodes []string, deliver func(node int, u frontier.URL)) []crawlkit.HostSplitter
	// IdleLag is how long Idle may go on reporting the cluster's state
	// after it changed (a splitter that learns it in status rounds lags
	// by about two of them). 0 means Idle is exact.
	IdleLag time.Duration
	// Skip names subtests that the implementation is known to fail, each
	// with the reason, which the subtest reports as it skips.
	Skip map[string]string
}

// nodes are the node names of the suite's clusters.
var nodes = []string{"alpha", "beta", "gamma"}

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"LocalStable", testLocalStable},
		{"Partition", testPartition},
		{"Send", testSend},
		{"SendConcurrent", testSendConcurrent},
		{"Idle", testIdle},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if reason, ok := h.Skip[tc.name]; ok {
				t.Skip("known deviation: " + reason)
			}
			tc.fn(t, h)
		})
	}
}

// hosts returns n host names of several shapes.
func hosts(n int) []string {
	out := make([]string, n)
	for i := range out {
		switch i % 4 {
		case 0:
			out[i] = fmt.Sprintf("h%d.test", i)
		case 1:
			out[i] = fmt.Sprintf("www.site-%d.example", i)
		case 2:
			out[i] = fmt.Sprintf("%d.%d.cdn.test", i%17, i)
		default:
			out[i] = fmt.Sprintf("xn--bcher-%d.test", i)
		}
	}
	return out
}

// received collects what the harness delivers.
type received struct {
	mu   sync.Mutex
	got  map[string][]int        // URL → nodes it reached
	urls map[string]frontier.URL // URL → as delivered
	gate chan struct{}           // deliver blocks until closed, if set
	n    int                     // deliveries
}

func newReceived() *received {
	return &received{got: map[string][]int{}, urls: map[string]frontier.URL{}}
}

func (r *received) deliver(node int, u frontier.URL) {
	r.mu.Lock()
	gate := r.gate
	r.got[u.URL] = append(r.got[u.URL], node)
	r.urls[u.URL] = u
	r.n++
	r.mu.Unlock()
	if gate != nil {
		<-gate
	}
}

func (r *received) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// build asks the harness for a cluster and checks its size.
func build(t *testing.T, h Harness, r *received) []crawlkit.HostSplitter {
	t.Helper()
	sp := h.New(t, nodes, r.deliver)
	if len(sp) != len(nodes) {
		t.Fatalf("New returned %d splitters for %d nodes", len(sp), len(nodes))
	}
	return sp
}

// owners returns, for each host, the nodes whose splitter says Local.
func owners(sp []crawlkit.HostSplitter, hs []string) [][]int {
	out := make([][]int, len(hs))
	for i, host := range hs {
		for n, s := range sp {
			if s.Local(host) {
				out[i] = append(out[i], n)
			}
		}
	}
	return out
}

func testLocalStable(t *testing.T, h Harness) {
	sp := build(t, h, newReceived())
	hs := hosts(2000)
	want := owners(sp, hs)
	for round := range 2 {
		if got := owners(sp, hs); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: Local answered differently for the same hosts", round)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < len(hs); i += 3 {
				for n, s := range sp {
					local := s.Local(hs[i])
					if local != contains(want[i], n) {
						t.Errorf("concurrent Local(%q) on node %d = %v, not the sequential answer", hs[i], n, local)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	again := build(t, h, newReceived())
	if got := owners(again, hs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("splitters built again for the same node list disagree on Local")
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func testPartition(t *testing.T, h Harness) {
	sp := build(t, h, newReceived())
	hs := hosts(3000)
	count := make([]int, len(sp))
	bad := 0
	for i, o := range owners(sp, hs) {
		if len(o) != 1 {
			if bad++; bad <= 5 {
				t.Errorf("host %q is Local to nodes %v, want exactly one", hs[i], o)
			}
			continue
		}
		count[o[0]]++
	}
	if bad > 5 {
		t.Errorf("... %d hosts in all without exactly one owner", bad)
	}
	t.Logf("hosts per node: %v", count)
}

// sendable returns, for node from, URLs of hosts other nodes own, with
// their owners: perHost URLs for each of the first hostsN such hosts.
func sendable(sp []crawlkit.HostSplitter, from, hostsN, perHost int) ([]frontier.URL, map[string]int) {
	var urls []frontier.URL
	owner := map[string]int{}
	for _, host := range hosts(20 * hostsN) {
		if hostsN == 0 {
			break
		}
		o := -1
		for n, s := range sp {
			if s.Local(host) {
				o = n
			}
		}
		if o < 0 || o == from {
			continue
		}
		hostsN--
		for j := range perHost {
			u := fmt.Sprintf("http://%s/from-%d/p%d", host, from, j)
			urls = append(urls, frontier.URL{URL: u, Depth: 1 + j%5})
			owner[u] = o
		}
	}
	return urls, owner
}

// checkDelivered waits until want's URLs arrived and checks each reached
// its owner once, with its Depth.
func checkDelivered(t *testing.T, r *received, want map[string]frontier.URL, owner map[string]int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.count() < len(want) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // time for a duplicate to show
	r.mu.Lock()
	defer r.mu.Unlock()
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 5 {
			t.Errorf(format, args...)
		}
	}
	for u, w := range want {
		got := r.got[u]
		switch {
		case len(got) == 0:
			report("%s never arrived (owner %s)", u, nodes[owner[u]])
		case len(got) > 1 || got[0] != owner[u]:
			report("%s arrived at %v, want once at %s", u, names(got), nodes[owner[u]])
		case r.urls[u].Depth != w.Depth:
			report("%s arrived with depth %d, want %d", u, r.urls[u].Depth, w.Depth)
		}
	}
	for u, got := range r.got {
		if _, ok := want[u]; !ok {
			report("%s arrived at %v, but was never sent", u, names(got))
		}
	}
	if bad > 5 {
		t.Errorf("... %d wrong deliveries in all, of %d URLs", bad, len(want))
	}
}

func names(idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, nodes[i])
	}
	return out
}

func testSend(t *testing.T, h Harness) {
	r := newReceived()
	sp := build(t, h, r)
	ctx := context.Background()
	want := map[string]frontier.URL{}
	owner := map[string]int{}
	for from, s := range sp {
		urls, o := sendable(sp, from, 40, 3)
		for _, part := range [][]frontier.URL{urls[:len(urls)/3], urls[len(urls)/3:]} {
			if err := s.Send(ctx, part); err != nil {
				t.Fatalf("Send from %s: %v", nodes[from], err)
			}
		}
		for _, u := range urls {
			want[u.URL] = u
		}
		for u, n := range o {
			owner[u] = n
		}
	}
	if err := sp[0].Send(ctx, nil); err != nil {
		t.Errorf("Send of no URL: %v", err)
	}
	checkDelivered(t, r, want, owner)
}

func testSendConcurrent(t *testing.T, h Harness) {
	r := newReceived()
	sp := build(t, h, r)
	ctx := context.Background()
	want := map[string]frontier.URL{}
	owner := map[string]int{}
	var wg sync.WaitGroup
	for from, s := range sp {
		urls, o := sendable(sp, from, 60, 4)
		for _, u := range urls {
			want[u.URL] = u
		}
		for u, n := range o {
			owner[u] = n
		}
		for g := range 8 {
			wg.Go(func() {
				for i := g * 5; i < len(urls); i += 40 {
					if err := s.Send(ctx, urls[i:min(i+5, len(urls))]); err != nil {
						t.Errorf("Send from %s: %v", nodes[from], err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	checkDelivered(t, r, want, owner)
}

// idleAll reports which splitters report Idle.
func idleAll(ir []crawlkit.IdleReporter) []bool {
	out := make([]bool, len(ir))
	for i, x := range ir {
		out[i] = x.Idle()
	}
	return out
}

func all(b []bool) bool {
	for _, x := range b {
		if !x {
			return false
		}
	}
	return true
}

func testIdle(t *testing.T, h Harness) {
	r := newReceived()
	sp := build(t, h, r)
	var ir []crawlkit.IdleReporter
	for i, s := range sp {
		x, ok := s.(crawlkit.IdleReporter)
		if !ok {
			if i == 0 {
				t.Skip("the splitters do not implement crawlkit.IdleReporter")
			}
			t.Fatalf("node %s's splitter is no IdleReporter, but node %s's is", nodes[i], nodes[0])
		}
		ir = append(ir, x)
	}
	limit := 5*time.Second + 2*h.IdleLag
	wait := func(cond func() bool) bool {
		deadline := time.Now().Add(limit)
		for !cond() {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(5 * time.Millisecond)
		}
		return true
	}
	if !wait(func() bool { return all(idleAll(ir)) }) {
		t.Fatalf("Idle = %v after %v with nothing sent, want every node idle", idleAll(ir), limit)
	}
	want := map[string]frontier.URL{}
	owner := map[string]int{}
	urls, o := sendable(sp, 0, 7, 2)
	// First one URL, the only one in flight once its receiver holds it;
	// then URLs for both other nodes.
	batches := [][]frontier.URL{urls[:1], urls[1:]}
	for b, batch := range batches {
		gate := make(chan struct{})
		r.mu.Lock()
		r.gate = gate
		before := r.n
		r.mu.Unlock()
		if err := sp[0].Send(context.Background(), batch); err != nil {
			close(gate)
			t.Fatal(err)
		}
		for _, u := range batch {
			want[u.URL] = u
			owner[u.URL] = o[u.URL]
		}
		time.Sleep(h.IdleLag)
		hold := max(3*h.IdleLag, 300*time.Millisecond)
		for end := time.Now().Add(hold); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if st := idleAll(ir); !all(negate(st)) {
				close(gate)
				t.Fatalf("Idle = %v while batch %d's %d URLs were on their way or held by their receivers (%d there): want no node idle",
					st, b, len(batch), r.count()-before)
			}
		}
		if r.count() == before {
			t.Errorf("no URL of the batch reached its receiver within %v", hold+h.IdleLag)
		}
		r.mu.Lock()
		r.gate = nil
		r.mu.Unlock()
		close(gate)
		checkDelivered(t, r, want, owner)
		if !wait(func() bool { return all(idleAll(ir)) }) {
			t.Fatalf("Idle = %v after %v with everything received, want every node idle", idleAll(ir), limit)
		}
	}
}

func negate(b []bool) []bool {
	out := make([]bool, len(b))
	for i, x := range b {
		out[i] = !x
	}
	return out
}
