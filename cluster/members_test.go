package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/nats-io/nats.go/jetstream"
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
	web, ref, tc := memberSetup(t, nil)
	for _, name := range tc.names {
		tc.start(name, "")
	}
	waitPages(t, tc, "n2", 2)
	crashAndCheck(t, tc, web, ref, "n2")
}

// memberSetup starts the simulated web, its reference crawl, an embedded
// NATS server and a three-member test cluster (AckWait 1 s) whose
// options mod, if not nil, changes.
func memberSetup(t *testing.T, mod func(name string, o *Options)) (*fetchtest.Web, map[string]int, *testCluster) {
	t.Helper()
	web := simWeb()
	t.Cleanup(web.Close)
	ref := referenceCrawl(t)
	srv := startTestServer(t)
	nopts := natsOptions()
	nopts.AckWait = time.Second
	opts := memberOptions(srv.ClientURL(), nopts)
	tc := newTestCluster(t, web, 3, func(name string) Options {
		o := opts(name)
		if mod != nil {
			mod(name, &o)
		}
		return o
	})
	return web, ref, tc
}

// crashAndCheck crashes member dead, waits for the others to finish the
// crawl and checks it, excusing the pages dead was fetching when it died
// (their outcome was never journaled).
func crashAndCheck(t *testing.T, tc *testCluster, web *fetchtest.Web, ref map[string]int, dead string) {
	t.Helper()
	tc.crash(dead)
	killed := time.Now()
	for _, name := range tc.names {
		if name != dead {
			tc.wait(name)
		}
	}
	t.Logf("survivors done %v after the crash", time.Since(killed).Round(time.Millisecond))
	inFlight := map[string]bool{}
	for _, r := range web.Log() {
		if r.UserAgent == "crawlkit-"+dead && !r.End.Before(killed.Add(-time.Second)) {
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
			// What the others did meanwhile tells a node that never got
			// work from a crawl that ended without it.
			tc.mu.Lock()
			all := maps.Clone(tc.pages)
			tc.mu.Unlock()
			owned := -1
			if nd := tc.node(name); nd != nil {
				owned = nd.OwnedShards()
			}
			t.Fatalf("%s fetched only %d pages in 30 s, owning %d shards; pages by node %v", name, got, owned, all)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMembersScale adds a third node to a two-node crawl, then stops one
// gracefully mid-crawl: shards move with their queues and URL-seen sets,
// so no page is fetched twice, none is missed, and no host sees two
// requests at once.
func TestMembersScale(t *testing.T) {
	web := simWeb()
	defer web.Close()
	ref := referenceCrawl(t)
	srv := startTestServer(t)
	tc := newTestCluster(t, web, 3, memberOptions(srv.ClientURL(), natsOptions()))
	tc.start("n0", "")
	tc.start("n1", "")
	waitPages(t, tc, "n0", 10)
	tc.start("n2", "") // scale out 2 → 3
	waitPages(t, tc, "n2", 5)
	if got := tc.node("n2").OwnedShards(); got == 0 {
		t.Fatal("n2 owns no shard")
	}
	tc.stop("n1") // scale in 3 → 2: a graceful leave hands its shards over at once
	left := time.Now()
	tc.wait("n0")
	tc.wait("n2")
	t.Logf("crawl done %v after n1 left", time.Since(left).Round(time.Millisecond))
	checkMembers(t, web, ref, nil)
}

// TestMembersFencing cuts a node off (no heartbeat, no journal write)
// until the others have taken its shards, then lets it come back: it
// cannot contact the hosts or write the journals of the shards it lost,
// and no shard is ever owned by two nodes.
func TestMembersFencing(t *testing.T) {
	srv := startTestServer(t)
	web := simWeb()
	defer web.Close()
	opts := memberOptions(srv.ClientURL(), natsOptions())
	nodes := map[string]*Node{}
	for _, name := range []string{"a", "b"} {
		o := opts(name)
		o.Name, o.Logger = name, quietLogger()
		nd, err := NewNode(context.Background(), &o)
		if err != nil {
			t.Fatal(err)
		}
		defer nd.Close()
		cfg := crawlConfig(web, "crawlkit-"+name)
		nd.Configure(&cfg)
		c, err := crawlkit.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := nd.Start(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		nodes[name] = nd
	}
	a, b := nodes["a"], nodes["b"]
	// Never two owners of a shard, sampled throughout.
	stop := make(chan struct{})
	sampled := make(chan int)
	go func() {
		n := 0
		defer func() { sampled <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			a.shards.mu.Lock()
			b.shards.mu.Lock()
			for i := range a.shards.st {
				if a.shards.st[i].owned && b.shards.st[i].owned {
					t.Errorf("shard %d owned by a and b", i)
				}
			}
			b.shards.mu.Unlock()
			a.shards.mu.Unlock()
			n++
		}
	}()
	waitFor(t, 20*time.Second, "a and b own every shard between them", func() bool {
		return a.OwnedShards() > 0 && b.OwnedShards() > 0 && a.OwnedShards()+b.OwnedShards() == 64
	})
	shard := -1
	a.shards.mu.Lock()
	for i := range a.shards.st {
		if a.shards.st[i].owned {
			shard = i
			break
		}
	}
	a.shards.mu.Unlock()
	host := hostOfShard(a.ring, shard)
	url := "http://" + host + "/x"
	// A URL pending in a's shard, as a crawl would have it.
	if err := a.shards.state.Commit(context.Background(), &crawlkit.Txn{Add: []crawlkit.Pending{{URL: frontier.URL{URL: url}}}}); err != nil {
		t.Fatal(err)
	}
	last := a.shards.slotSeq(shard)
	if leave, ok := a.Splitter().Enter(url); !ok {
		t.Fatalf("a may not contact %s of its own shard %d", host, shard)
	} else {
		leave()
	}

	a.crashed.Store(true) // cut off
	cut := time.Now()
	waitFor(t, 20*time.Second, "b owns every shard", func() bool { return b.OwnedShards() == 64 })
	t.Logf("b took a's shards over %v after a was cut off", time.Since(cut).Round(time.Millisecond))
	if _, ok := a.Splitter().Enter(url); ok {
		t.Fatal("a, cut off, may still contact a host")
	}
	a.crashed.Store(false) // back, stale
	if _, ok := a.Splitter().Enter(url); ok {
		t.Fatalf("a, back but stale, may contact %s of shard %d, which b owns", host, shard)
	}
	err := a.shards.write(context.Background(), shard, &shardRecord{kind: recData}, last)
	if !errors.Is(err, errFenced) {
		t.Fatalf("a's write to shard %d with its old position: %v, want errFenced", shard, err)
	}
	// It rejoins and gets a share again, through handoffs.
	waitFor(t, 20*time.Second, "a owns shards again", func() bool {
		return a.OwnedShards() > 0 && a.OwnedShards()+b.OwnedShards() == 64
	})
	close(stop)
	if n := <-sampled; n < 10 {
		t.Errorf("ownership sampled only %d times", n)
	}
}

// hostOfShard returns a host name in shard s.
func hostOfShard(r *Ring, s int) string {
	for i := 0; ; i++ {
		h := "h" + strconv.Itoa(i) + ".test"
		if r.HostShard(h) == s {
			return h
		}
	}
}

// TestMembersStartTogether starts three members at the same moment, so
// that several of them find no view and coordinate at once before one
// wins: a node that claimed shards in its short reign and lost standing
// when the winner's view left it out must hand the shards it no longer
// gets back to their new owners, not leave them claimed in the journal
// by nobody who knows it (they would never be crawled, and the cluster
// never idle).
func TestMembersStartTogether(t *testing.T) {
	web := simWeb()
	defer web.Close()
	for round := range 2 {
		srv := startTestServer(t)
		opts := memberOptions(srv.ClientURL(), natsOptions())
		var mu sync.Mutex
		var nodes []*Node
		startAll([]string{"a", "b", "c"}, func(name, _ string) {
			o := opts(name)
			o.Name, o.Logger = name, quietLogger()
			nd, err := NewNode(context.Background(), &o)
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { nd.Close() })
			cfg := crawlConfig(web, "crawlkit-"+name)
			nd.Configure(&cfg)
			c, err := crawlkit.New(cfg)
			if err != nil {
				t.Error(err)
				return
			}
			if err := nd.Start(context.Background(), c); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			nodes = append(nodes, nd)
			mu.Unlock()
		})
		if t.Failed() {
			t.FailNow()
		}
		start := time.Now()
		waitFor(t, 10*time.Second, "every shard owned by its member", func() bool {
			owned := 0
			for _, nd := range nodes {
				if nd.shards.moving() > 0 {
					return false
				}
				owned += nd.OwnedShards()
			}
			return owned == 64
		})
		t.Logf("round %d: shards settled %v after the starts", round, time.Since(start).Round(time.Millisecond))
	}
}

// TestMembersSurviveNATSServerLoss crawls with three members on a
// cluster of three NATS servers, the inboxes, shard journals and the
// membership bucket replicated three times, each node connected to a
// server of its own first, and shuts down one server mid-crawl (the one
// n2 is connected to): the nodes fail over to the others, and the crawl
// loses nothing and stays polite.
func TestMembersSurviveNATSServerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a three-server JetStream cluster and a crawl (about 20 s)")
	}
	web := simWeb()
	defer web.Close()
	ref := referenceCrawl(t)
	servers := startNATSCluster(t, 3)
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.ClientURL())
	}
	nopts := natsOptions()
	nopts.Replicas = 3
	nopts.AckWait = time.Second
	// The streams are created once the meta group has a leader.
	dialCluster(t, strings.Join(urls, ","), nopts).Close()
	tc := newTestCluster(t, web, 3, func(name string) Options {
		i := int(name[1] - '0')
		order := append(append([]string{}, urls[i:]...), urls[:i]...)
		o := memberOptions(strings.Join(order, ","), nopts)(name)
		// Longer than the failover of a client to another server and of
		// the replicated streams to new leaders: no member should lose
		// its standing meanwhile.
		o.Lease = 8 * time.Second
		return o
	})
	// A slower crawl of the small web, so that the server goes while
	// most of it is still to do.
	tc.config = func(cfg *crawlkit.Config) { cfg.MinDelay = 100 * time.Millisecond }
	for _, name := range tc.names {
		tc.start(name, "")
	}
	tc.waitPages(40, tc.names...)
	at := tc.pagesOf(tc.names...)
	joined, _ := tc.node("n0").members.current()
	servers[2].Shutdown()
	servers[2].WaitForShutdown()
	for _, name := range tc.names {
		tc.wait(name)
	}
	t.Logf("server s2 shut down after %d pages; %d in all", at, tc.pagesOf(tc.names...))
	var excuse func(string) bool
	if end, _ := tc.node("n0").members.current(); end.Epoch != joined.Epoch {
		// A failover slower than the lease (a loaded machine) dropped a
		// member: its shards moved, and a page it was fetching then may
		// be fetched again by the new owner (the in-flight pages the
		// takeover tests excuse), never by the same node.
		t.Logf("the view changed (epoch %d → %d): a member lost its standing during the failover", joined.Epoch, end.Epoch)
		byNode := map[string]map[string]bool{}
		for _, r := range web.Log() {
			if r.Status == 200 && strings.HasPrefix(r.UserAgent, "crawlkit-") {
				if byNode[r.Host+r.Path] == nil {
					byNode[r.Host+r.Path] = map[string]bool{}
				}
				byNode[r.Host+r.Path][r.UserAgent] = true
			}
		}
		excuse = func(p string) bool { return len(byNode[p]) > 1 }
	}
	checkMembers(t, web, ref, excuse)
}

// TestMembersCompaction crawls with journals compacted after every few
// records and crashes one of three nodes mid-crawl: the survivors claim
// its shards from snapshots and finish the crawl with nothing lost, and
// every journal holds about its snapshot and the records since.
func TestMembersCompaction(t *testing.T) {
	const every = 4
	web, ref, tc := memberSetup(t, func(_ string, o *Options) { o.CompactAfter = every })
	for _, name := range tc.names {
		tc.start(name, "")
	}
	waitPages(t, tc, "n2", 2)
	compacted := func() (n uint64) {
		for _, name := range tc.names {
			if nd := tc.node(name); nd != nil {
				n += nd.shards.compactions.Load()
			}
		}
		return n
	}
	before := compacted()
	crashAndCheck(t, tc, web, ref, "n2")
	after := compacted()
	t.Logf("%d snapshots before the crash, %d by the survivors", before, after)
	if after == 0 {
		t.Fatal("no journal was compacted")
	}
	nd := tc.node("n0")
	info, err := nd.shards.stream.Info(context.Background(), jetstream.WithSubjectFilter(nd.shards.prefix+".shard.*"))
	if err != nil {
		t.Fatal(err)
	}
	most := uint64(0)
	for subj, n := range info.State.Subjects {
		most = max(most, n)
		// A snapshot (one chunk here), fewer than every records since,
		// and the claims and releases of the takeover.
		if n > 2*every+4 {
			t.Errorf("%s holds %d records", subj, n)
			logJournal(t, nd.shards, subj)
		}
	}
	t.Logf("%d journals, at most %d records each", len(info.State.Subjects), most)
}

// TestMembersResume kills one of three members mid-crawl and restarts it
// on the same directory: its progress (pages, time, sink positions) was
// kept in the crawl database Config had before Configure, so the
// restarted crawl counts on from what the first one committed, and the
// crawl as a whole is still complete.
func TestMembersResume(t *testing.T) {
	web, ref, tc := memberSetup(t, nil)
	tc.hold = make(chan struct{}) // the crawls begin once all are members
	dirs := map[string]string{}
	for _, name := range tc.names {
		dirs[name] = t.TempDir()
		tc.start(name, dirs[name])
	}
	close(tc.hold)
	// The first member to reach 15 pages dies.
	dead := ""
	for deadline := time.Now().Add(30 * time.Second); dead == ""; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no member fetched 15 pages in 30 s")
		}
		for _, name := range tc.names {
			if tc.pagesOf(name) >= 15 {
				dead = name
				break
			}
		}
	}
	tc.crash(dead)
	first := tc.pagesOf(dead)
	tc.start(dead, dirs[dead])
	for _, name := range tc.names {
		tc.wait(name)
	}
	tc.mu.Lock()
	all, st := tc.pages[dead], tc.stats[dead]
	tc.mu.Unlock()
	t.Logf("%s fetched %d pages, then %d after its restart; its final count is %d", dead, first, all-first, st.Outcomes[crawlkit.Fetched])
	// At most a worker's page per worker was fetched and not committed
	// when it died.
	if got := st.Outcomes[crawlkit.Fetched]; got+8 < uint64(all) || got > uint64(all) {
		t.Errorf("the restarted node counts %d pages fetched; it fetched %d in its two lives", got, all)
	}
	// A killed node's pages in flight may be fetched again by whoever
	// claims their shards.
	checkMembers(t, web, ref, func(string) bool { return true })
}

// TestMembersStateDir crawls with each member's copy of its shards'
// state and its frontier queues on disk (Options.StateDir), and crashes
// one of three members mid-crawl: the survivors take its shards over
// into their databases and finish the crawl with nothing lost.
func TestMembersStateDir(t *testing.T) {
	dirs := map[string]string{}
	web, ref, tc := memberSetup(t, func(name string, o *Options) {
		dirs[name] = filepath.Join(t.TempDir(), "state")
		o.StateDir = dirs[name]
	})
	for _, name := range tc.names {
		tc.start(name, "")
	}
	waitPages(t, tc, "n2", 2)
	if _, ok := tc.node("n0").shards.state.crawlState().(crawlkit.QueueStorer); !ok {
		t.Fatal("with StateDir, the crawler's State has no queue store")
	}
	if _, err := os.Stat(filepath.Join(dirs["n0"], "queue")); err != nil {
		t.Errorf("no frontier queue on disk: %v", err)
	}
	crashAndCheck(t, tc, web, ref, "n2")
}

// TestMembersFingerprintsMove crashes a member mid-crawl: the content
// fingerprints of its partition, journaled with their shards, move to the
// members that take the shards over (as they moved to it when it joined),
// so a copy of a page seen before is still recognised as one. Only those
// recorded in the last second before the crash (not journaled yet) may be
// lost.
func TestMembersFingerprintsMove(t *testing.T) {
	_, _, tc := memberSetup(t, nil)
	var mu sync.Mutex
	noted := map[uint64]time.Time{} // every fingerprint any member recorded first
	tc.created = func(name string, nd *Node) {
		next := nd.content.store.onNew
		nd.content.store.onNew = func(fp uint64, u string) {
			mu.Lock()
			noted[fp] = time.Now()
			mu.Unlock()
			next(fp, u)
		}
	}
	for _, name := range tc.names {
		tc.start(name, "")
	}
	waitPages(t, tc, "n2", 2)
	time.Sleep(fpFlushEvery + 500*time.Millisecond) // journaled by now
	mu.Lock()
	var before []uint64
	for fp, at := range noted {
		if time.Since(at) > fpFlushEvery+300*time.Millisecond {
			before = append(before, fp)
		}
	}
	mu.Unlock()
	moved := 0
	for _, fp := range before {
		if tc.node("n2").ring.FingerprintOwner(fp) == "n2" {
			moved++
		}
	}
	tc.crash("n2")
	tc.wait("n0")
	tc.wait("n1")
	missing := 0
	for _, fp := range before {
		owner := tc.node("n0").ring.FingerprintOwner(fp)
		if _, known, _ := tc.node(owner).content.store.Record(fp, "probe"); !known {
			missing++
		}
	}
	t.Logf("%d fingerprints recorded over a second before the crash, %d of them in the dead member's partition; %d unknown to their owners after", len(before), moved, missing)
	if moved == 0 {
		t.Fatal("the dead member's partition held no fingerprint to check")
	}
	if missing > 0 {
		t.Errorf("%d of %d fingerprints were lost", missing, len(before))
	}
}

// TestMembersOutbox crashes a member whose host splitter stored nothing
// (every link it found for other members still buffered): the links ride
// in its journal records as outboxes, the members that take its shards
// over send them again, and the crawl misses nothing. Every member's
// splitter holds its batches until the crash, and the one holding most
// is the one crashed; the others' are then let go. The crawls begin once
// all three are members, so that the seeds' links to other hosts cross
// members.
func TestMembersOutbox(t *testing.T) {
	web, ref, tc := memberSetup(t, nil)
	tc.created = func(_ string, nd *Node) { nd.splitter.hold.Store(true) }
	tc.hold = make(chan struct{})
	for _, name := range tc.names {
		tc.start(name, "")
	}
	close(tc.hold)
	dead, held := "", 0
	for deadline := time.Now().Add(30 * time.Second); held == 0; time.Sleep(5 * time.Millisecond) {
		for _, name := range tc.names {
			if n := tc.node(name).splitter.Buffered(); n > held && tc.pagesOf(name) >= 3 {
				dead, held = name, n
			}
		}
		if held == 0 && time.Now().After(deadline) {
			t.Fatal("no member holds a URL for another after 30 s: the test checks nothing")
		}
	}
	for _, name := range tc.names {
		if name != dead {
			tc.node(name).splitter.hold.Store(false)
		}
	}
	crashAndCheck(t, tc, web, ref, dead)
	var resent uint64
	for _, name := range tc.names {
		if name != dead {
			resent += tc.node(name).shards.resent.Load()
		}
	}
	t.Logf("%s died holding %d URLs for other members; %d outbox URLs sent again", dead, held, resent)
	if resent == 0 {
		t.Error("no outbox URL was sent again")
	}
}

// logJournal logs the records of one shard journal, for a failure.
func logJournal(t *testing.T, s *shards, subj string) {
	ctx := context.Background()
	info, err := s.stream.Info(ctx)
	if err != nil {
		t.Log(err)
		return
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.stream.GetMsg(ctx, seq)
		if err != nil || m.Subject != subj {
			continue
		}
		r, err := decodeShardRecord(m.Data)
		if err != nil {
			t.Logf("%d: %v", seq, err)
			continue
		}
		t.Logf("%d: %c by %s/%d, flags %d: %d added, %d done, %d out, %d fingerprints",
			seq, r.kind, r.owner, r.inc, r.flags, len(r.txn.Add), len(r.txn.Done), len(r.out), len(r.fps))
	}
}

// TestMembersFencedLinksStored commits, on a member, a page whose links
// fall in a shard another member owns: the part cannot be journaled
// here, so its links go to the owner through the host splitter, and
// they are stored before the commit returns, not left in the splitter's
// buffer for a kill to lose.
func TestMembersFencedLinksStored(t *testing.T) {
	_, _, tc := memberSetup(t, nil)
	for _, name := range tc.names {
		tc.start(name, "")
	}
	waitPages(t, tc, "n2", 2)
	nd := tc.node("n0")
	var host string
	for i := 0; host == ""; i++ {
		h := fmt.Sprintf("elsewhere%d.sim.test", i)
		sh := nd.ring.HostShard(h)
		nd.shards.mu.Lock()
		owned := nd.shards.st[sh].owned
		nd.shards.mu.Unlock()
		if !owned {
			host = h
		}
	}
	u := frontier.URL{URL: "http://" + host + "/fenced"}
	if err := nd.shards.state.Commit(context.Background(), &crawlkit.Txn{Add: []crawlkit.Pending{{URL: u}}}); err != nil {
		t.Fatal(err)
	}
	// The crawl goes on meanwhile, so other URLs may be buffered: this
	// one must not be.
	nd.splitter.mu.Lock()
	defer nd.splitter.mu.Unlock()
	for node, buf := range nd.splitter.bufs {
		for _, b := range buf {
			if b.URL == u.URL {
				t.Errorf("%s still buffered for %s after the commit", u.URL, node)
			}
		}
	}
}
