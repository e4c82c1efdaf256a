package cluster

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// memberOptions are the options of a node with membership on srvURL, with
// a short lease so that the tests see takeovers within seconds.
func memberOptions(url string, nopts NATSOptions) func(string) Options {
	return func(string) Options {
		return Options{NATSURL: url, NATS: nopts, Shards: 64, Lease: 2 * time.Second, HandoffGap: 100 * time.Millisecond,
			StatusInterval: 50 * time.Millisecond, RequestTimeout: 2 * time.Second}
	}
}

// crash stops node name as kill -9 would, as far as the cluster can
// tell: no heartbeat, no journal write, no release, no farewell; what its
// consumer had not acknowledged comes back after AckWait.
func (tc *testCluster) crash(name string) {
	tc.mu.Lock()
	nd, cancel, done := tc.nodes[name], tc.cancel[name], tc.done[name]
	delete(tc.nodes, name)
	tc.mu.Unlock()
	nd.crashed.Store(true)
	cancel()
	<-done
	nd.Close()
}

// checkMembers verifies a crawl whose hosts moved between nodes against
// the reference crawl: never two requests at once to one host, no page
// fetched twice unless excused, the same pages as one crawler.
func checkMembers(t *testing.T, web *fetchtest.Web, ref map[string]int, allowTwice func(page string) bool) {
	t.Helper()
	var log []fetchtest.Request
	for _, r := range web.Log() {
		if strings.HasPrefix(r.UserAgent, "crawlkit-") {
			log = append(log, r)
		}
	}
	for host, n := range fetchtest.MaxConcurrency(log) {
		if n > 1 {
			t.Errorf("host %s: %d requests in flight at once", host, n)
		}
	}
	union := fetched(web, func(ua string) bool { return strings.HasPrefix(ua, "crawlkit-") })
	var twice []string
	for p, n := range union {
		if n > 1 && (allowTwice == nil || !allowTwice(p)) {
			twice = append(twice, p)
		}
		if ref[p] == 0 && !timingDependent(p) {
			t.Errorf("page %s fetched by the cluster, not by one crawler", p)
		}
	}
	sort.Strings(twice)
	for _, p := range twice {
		t.Errorf("page %s fetched %d times", p, union[p])
	}
	missing := 0
	for p := range ref {
		if union[p] == 0 && !timingDependent(p) {
			t.Errorf("page %s fetched by one crawler, not by the cluster", p)
			missing++
		}
	}
	if len(union) < 50 {
		t.Errorf("only %d pages fetched", len(union))
	}
	t.Logf("%d pages (%d by the reference), %d missing", len(union), len(ref), missing)
}

func TestMembersConfigMismatch(t *testing.T) {
	srv := startTestServer(t)
	nopts := natsOptions()
	web := simWeb()
	defer web.Close()
	o := memberOptions(srv.ClientURL(), nopts)("")
	start := func(name string, minDelay time.Duration) (*Node, error) {
		o := o
		o.Name, o.Logger = name, quietLogger()
		nd, err := NewNode(context.Background(), &o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nd.Close() })
		cfg := crawlConfig(web, "crawlkit-"+name)
		cfg.MinDelay = minDelay
		nd.Configure(&cfg)
		c, err := crawlkit.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return nd, nd.Start(context.Background(), c)
	}
	a, err := start("a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Members(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("members %v, want [a]", got)
	}
	if a.OwnedShards() != 64 {
		t.Fatalf("a owns %d shards, want all 64", a.OwnedShards())
	}
	_, err = start("b", time.Second)
	if !errors.Is(err, ErrConfigMismatch) {
		t.Fatalf("a node with another MinDelay joined: %v", err)
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Op != "join" {
		t.Fatalf("error %v is not a join *Error", err)
	}
	t.Log(err)
}

// TestMembersKill crashes one of three nodes mid-crawl and never restarts
// it: the two others take its shards over after its lease and finish the
// crawl with every page one crawler fetches, politely.
func TestMembersKill(t *testing.T) {
	web := simWeb()
	defer web.Close()
	ref := referenceCrawl(t, web)
	srv := startTestServer(t)
	nopts := natsOptions()
	nopts.AckWait = time.Second
	tc := newTestCluster(t, web, 3, memberOptions(srv.ClientURL(), nopts))
	for _, name := range tc.names {
		tc.start(name, "")
	}
	waitPages(t, tc, "n2", 2)
	tc.crash("n2")
	killed := time.Now()
	tc.wait("n0")
	tc.wait("n1")
	t.Logf("survivors done %v after the crash", time.Since(killed).Round(time.Millisecond))
	inFlight := map[string]bool{}
	for _, r := range web.Log() {
		if r.UserAgent == "crawlkit-n2" && !r.End.Before(killed.Add(-time.Second)) {
			inFlight[r.Host+r.Path] = true
		}
	}
	checkMembers(t, web, ref, func(p string) bool { return inFlight[p] })
}

func waitPages(t *testing.T, tc *testCluster, name string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		tc.mu.Lock()
		got := tc.pages[name]
		tc.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s fetched only %d pages", name, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
