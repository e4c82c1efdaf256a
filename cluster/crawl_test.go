package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawldb"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/index"
)

// simWeb is the generated web the cluster crawl tests crawl.
func simWeb() *fetchtest.Web {
	return fetchtest.NewWeb(fetchtest.Config{Seed: 5, Hosts: 12, MeanPages: 8, ChangePeriods: []time.Duration{0},
		CrawlDelay: 20 * time.Millisecond, RetryAfter: 20 * time.Millisecond})
}

func loopbackResolver() dns.Resolver {
	return dns.ResolverFunc(func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
}

// crawlConfig is the configuration every crawl of the tests shares; ua
// tells the request log which crawler fetched.
func crawlConfig(web *fetchtest.Web, ua string) crawlkit.Config {
	return crawlkit.Config{
		Seeds: web.Seeds(), Resolver: loopbackResolver(), AllowPrivate: true,
		Workers: 8, DelayFactor: 0.5, MaxPagesPerHost: 50,
		UserAgent: ua, Agent: "crawlkit", Logger: quietLogger(), ProgressInterval: time.Hour,
		// Exact duplicates only, as the partitioned test finds.
		ContentSeen: &dedup.ExactContent{},
		// Each simulated site is a registrable domain of its own.
		PrivateSuffixes: []string{web.Domain()},
	}
}

// fetched returns the pages (host and path) answered 200 to the user
// agents for which keep is true, with how often each was fetched.
func fetched(web *fetchtest.Web, keep func(ua string) bool) map[string]int {
	out := map[string]int{}
	for _, r := range web.Log() {
		if !keep(r.UserAgent) || r.Status != 200 || r.Path == "/robots.txt" {
			continue
		}
		out[r.Host+r.Path]++
	}
	return out
}

// timingDependent reports pages whose being fetched at all depends on
// timing, in one crawler as in a cluster: the trap hosts (which 50 of
// their endless URLs are queued) and the mirrors' inner pages (whichever
// copy of a home page comes second is a duplicate whose links are not
// followed).
func timingDependent(page string) bool {
	return strings.HasPrefix(page, "trap-") || strings.HasPrefix(page, "mirror") && !strings.HasSuffix(page, "/")
}

// referenceCrawl returns the pages one plain crawler fetches from
// simWeb. It crawls a web of its own once per test binary: every test
// of the package crawls the same generated web, and the crawl takes about
// 5 s, so repeating it in each test made a third of the package's time.
// The result is a copy.
func referenceCrawl(t *testing.T) map[string]int {
	t.Helper()
	refOnce.Do(func() {
		web := simWeb()
		defer web.Close()
		c, err := crawlkit.New(crawlConfig(web, "reference"))
		if err != nil {
			refErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if _, err := c.Run(ctx); err != nil {
			refErr = err
			return
		}
		refPages = fetched(web, func(ua string) bool { return ua == "reference" })
	})
	if refErr != nil {
		t.Fatalf("reference crawl: %v", refErr)
	}
	return maps.Clone(refPages)
}

var (
	refOnce  sync.Once
	refPages map[string]int
	refErr   error
)

// dupLog records every duplicate a ContentSeen reported: the URL and the
// URL of the first copy.
type dupLog struct {
	mu   sync.Mutex
	dups [][2]string
	// slowest is the longest Seen call since it was last reset.
	slowest time.Duration
}

// recorder wraps a node's ContentSeen to record into a dupLog.
type recorder struct {
	dedup.ContentSeen
	log *dupLog
}

func (r recorder) Seen(ctx context.Context, d dedup.Doc) (dedup.Match, error) {
	start := time.Now()
	m, err := r.ContentSeen.Seen(ctx, d)
	took := time.Since(start)
	r.log.mu.Lock()
	r.log.slowest = max(r.log.slowest, took)
	if err == nil && m.Seen {
		r.log.dups = append(r.log.dups, [2]string{d.URL, m.URL})
	}
	r.log.mu.Unlock()
	return m, err
}

// testCluster is a crawl by several nodes in one process.
type testCluster struct {
	t     testing.TB
	web   *fetchtest.Web
	names []string
	opts  func(name string) Options
	all   *index.Shard
	dups  dupLog
	// config, if set, changes every crawler's configuration.
	config func(*crawlkit.Config)
	// created, if set, sees every node before it starts.
	created func(name string, nd *Node)
	// hold, if set, keeps every crawl from running until it is closed.
	hold chan struct{}

	mu     sync.Mutex
	nodes  map[string]*Node
	shards map[string]*index.Shard
	cancel map[string]context.CancelFunc
	done   map[string]chan error
	pages  map[string]int            // pages each node's crawler passed to OnPage
	stats  map[string]crawlkit.Stats // what each node's last Run returned
	killed map[string]bool
}

func newTestCluster(t testing.TB, web *fetchtest.Web, n int, opts func(name string) Options) *testCluster {
	tc := &testCluster{t: t, web: web, opts: opts, all: index.NewShard(nil),
		nodes: map[string]*Node{}, shards: map[string]*index.Shard{}, cancel: map[string]context.CancelFunc{},
		done: map[string]chan error{}, pages: map[string]int{}, stats: map[string]crawlkit.Stats{}}
	for i := range n {
		tc.names = append(tc.names, fmt.Sprintf("n%d", i))
	}
	t.Cleanup(func() {
		for _, name := range tc.names {
			tc.stop(name)
		}
	})
	return tc
}

// start starts (or restarts) node name and its crawler; dir, if set, is
// the directory of its crawl state (crawldb) and content log.
func (tc *testCluster) start(name, dir string) {
	t := tc.t
	o := tc.opts(name)
	o.Name, o.Nodes = name, tc.names
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	tc.mu.Lock()
	shard := tc.shards[name]
	if shard == nil {
		shard = index.NewShard(nil)
		tc.shards[name] = shard
	}
	tc.mu.Unlock()
	o.Index = shard
	if dir != "" {
		o.ContentLog = filepath.Join(dir, "content.log")
	}
	nd, err := NewNode(context.Background(), &o)
	if err != nil {
		t.Fatal(err)
	}
	if tc.created != nil {
		tc.created(name, nd)
	}
	cfg := crawlConfig(tc.web, "crawlkit-"+name)
	var state *crawldb.DB
	if dir != "" {
		if state, err = crawldb.Open(filepath.Join(dir, "state"), nil); err != nil {
			t.Fatal(err)
		}
		cfg.State = state
	}
	if tc.config != nil {
		tc.config(&cfg)
	}
	nd.Configure(&cfg)
	cfg.ContentSeen = recorder{ContentSeen: cfg.ContentSeen, log: &tc.dups}
	cfg.Sinks = []crawlkit.Sink{crawlkit.IndexSink{Shard: shard}, crawlkit.IndexSink{Shard: tc.all}}
	cfg.OnPage = func(*crawlkit.Page) {
		tc.mu.Lock()
		tc.pages[name]++
		tc.mu.Unlock()
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	if err := nd.Start(ctx, c); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		if tc.hold != nil {
			select {
			case <-tc.hold:
			case <-ctx.Done():
			}
		}
		st, err := c.Run(ctx)
		tc.mu.Lock()
		tc.stats[name] = st
		tc.mu.Unlock()
		if state != nil {
			err = errors.Join(err, state.Close())
		}
		done <- err
	}()
	tc.mu.Lock()
	tc.nodes[name], tc.cancel[name], tc.done[name] = nd, cancel, done
	delete(tc.killed, name)
	tc.mu.Unlock()
}

// wait waits for node name's crawl to end by itself.
func (tc *testCluster) wait(name string) {
	tc.mu.Lock()
	done := tc.done[name]
	tc.mu.Unlock()
	if err := <-done; err != nil {
		tc.t.Errorf("node %s: %v", name, err)
	}
	done <- nil // for stop
}

// stop cancels node name's crawl and closes the node: a kill, as far as
// the cluster can tell.
func (tc *testCluster) stop(name string) {
	tc.mu.Lock()
	nd, cancel, done := tc.nodes[name], tc.cancel[name], tc.done[name]
	delete(tc.nodes, name)
	tc.mu.Unlock()
	if nd == nil {
		return
	}
	cancel()
	<-done
	tc.mu.Lock()
	killed := tc.killed[name]
	tc.mu.Unlock()
	if err := nd.Close(); err != nil && !killed {
		// A killed node's Close fails on its closed connection.
		tc.t.Errorf("closing %s: %v", name, err)
	}
}

func (tc *testCluster) node(name string) *Node {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.nodes[name]
}

// fetchedBy returns the pages each node fetched (by its user agent).
func (tc *testCluster) fetchedBy() map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, name := range tc.names {
		out[name] = fetched(tc.web, func(ua string) bool { return ua == "crawlkit-"+name })
	}
	return out
}

// check verifies the properties of a finished cluster crawl against the
// reference crawl: every host fetched by its owner only, no page twice,
// the same pages as one crawler.
// allowTwice, if set, excuses pages fetched twice.
func (tc *testCluster) check(ring *Ring, ref map[string]int, allowTwice func(page string) bool) {
	t := tc.t
	hostNode := map[string]string{}
	for _, r := range tc.web.Log() {
		name, ok := strings.CutPrefix(r.UserAgent, "crawlkit-")
		if !ok {
			continue
		}
		if prev, ok := hostNode[r.Host]; ok && prev != name {
			t.Errorf("host %s fetched by %s and %s", r.Host, prev, name)
		}
		hostNode[r.Host] = name
		if owner := ring.HostOwner(r.Host); owner != name {
			t.Errorf("host %s fetched by %s, owned by %s", r.Host, name, owner)
		}
	}
	union := map[string]int{}
	for _, pages := range tc.fetchedBy() {
		for p, n := range pages {
			union[p] += n
		}
	}
	for p, n := range union {
		if n > 1 && (allowTwice == nil || !allowTwice(p)) {
			t.Errorf("page %s fetched %d times", p, n)
		}
		if ref[p] == 0 && !timingDependent(p) {
			t.Errorf("page %s fetched by the cluster, not by one crawler", p)
		}
	}
	for p := range ref {
		if union[p] == 0 && !timingDependent(p) {
			t.Errorf("page %s fetched by one crawler, not by the cluster", p)
		}
	}
	if len(union) < 50 {
		t.Errorf("only %d pages fetched", len(union))
	}
	t.Logf("%d pages, %d hosts, %d fetched by the reference", len(union), len(hostNode), len(ref))
}

// TestCrawlThreeNodes crawls a simulated web with three nodes on an
// embedded NATS server and compares with one crawler: every host fetched
// by its owner only, no page fetched twice, the same pages as one crawler,
// duplicate content recognised across nodes, and a broker over the three
// index shards that ranks like one index of all pages (and answers
// partially when a node is gone).
func TestCrawlThreeNodes(t *testing.T) {
	web := simWeb()
	defer web.Close()
	ref := referenceCrawl(t)
	srv := startTestServer(t)
	nopts := natsOptions()
	tc := newTestCluster(t, web, 3, func(string) Options {
		return Options{NATSURL: srv.ClientURL(), NATS: nopts, Shards: 256}
	})
	for _, name := range tc.names {
		tc.start(name, "")
	}
	for _, name := range tc.names {
		tc.wait(name)
	}
	ring := tc.node("n0").Ring()
	tc.check(ring, ref, nil)

	// A mirror page on one node was recognised as a copy of a page
	// another node fetched.
	tc.dups.mu.Lock()
	cross := 0
	for _, d := range tc.dups.dups {
		if ring.HostOwner(frontier.HostKey(d[0])) != ring.HostOwner(frontier.HostKey(d[1])) {
			cross++
		}
	}
	t.Logf("%d duplicates, %d across nodes", len(tc.dups.dups), cross)
	tc.dups.mu.Unlock()
	if cross == 0 {
		t.Error("no duplicate content recognised across nodes")
	}

	// The broker over the three shards ranks like one index of all pages.
	s := tc.node("n1").Searcher()
	queries := 0
	for _, text := range queryTexts(tc.all) {
		q := index.ParseQuery(tc.all.Analyzer(), text, index.Or, 10)
		want, err := tc.all.Search(context.Background(), q, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.SearchPartial(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if got.Partial() || len(got.Answered) != 3 {
			t.Fatalf("query %q: answered by %v, missing %v", text, got.Answered, got.Missing)
		}
		if len(want.Hits) == 0 {
			continue
		}
		queries++
		if !slices.EqualFunc(got.Hits, want.Hits, func(a, b index.Hit) bool { return a.URL == b.URL && a.Score == b.Score }) {
			t.Errorf("query %q:\n got %v\nwant %v", text, got.Hits, want.Hits)
		}
	}
	if queries < 5 {
		t.Errorf("only %d queries had hits", queries)
	}
	// A node that is gone makes the answer partial, not an error.
	tc.stop("n2")
	q := index.ParseQuery(tc.all.Analyzer(), queryTexts(tc.all)[0], index.Or, 10)
	got, err := s.SearchPartial(context.Background(), q)
	if err != nil || !got.Partial() || got.Missing["n2"] == nil || len(got.Answered) != 2 {
		t.Fatalf("with n2 gone: %+v, %v; want a partial answer missing n2", got, err)
	}
	if _, err := s.Search(context.Background(), q, nil); err == nil {
		t.Fatal("Search with a shard gone succeeded")
	}
}

// queryTexts returns query texts drawn from the index's vocabulary: words
// of the titles of some documents.
func queryTexts(s *index.Shard) []string {
	return []string{"the", "history", "market report", "city river", "science", "garden music", "new research", "water", "the of and"}
}

// TestCrawlNodeRestart kills one of three nodes mid-crawl (its crawl
// cancelled, its node closed) while the others keep sending it URLs, and
// starts it again on the same checkpoint directory: the cluster still
// fetches every page one crawler fetches.
func TestCrawlNodeRestart(t *testing.T) {
	web := simWeb()
	defer web.Close()
	ref := referenceCrawl(t)
	srv := startTestServer(t)
	nopts := natsOptions()
	nopts.AckWait = time.Second // what a dead consumer had prefetched comes back after this
	tc := newTestCluster(t, web, 3, func(string) Options {
		return Options{NATSURL: srv.ClientURL(), NATS: nopts, Shards: 256}
	})
	dir := t.TempDir()
	tc.start("n0", dir)
	tc.start("n1", "")
	tc.start("n2", "")
	deadline := time.Now().Add(30 * time.Second)
	for {
		tc.mu.Lock()
		n := tc.pages["n0"]
		tc.mu.Unlock()
		if n >= 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("n0 fetched only %d pages", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	tc.stop("n0")
	killed := time.Now()
	time.Sleep(300 * time.Millisecond) // the others keep crawling and sending to n0
	// Whether anything waits in n0's inbox now depends on how far the
	// others got; the live nodes drain their own inboxes within
	// milliseconds, so what is still pending is n0's.
	backlog, err := tc.node("n1").Transport().Backlog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tc.start("n0", dir)
	for _, name := range tc.names {
		tc.wait(name)
	}
	if b, _ := tc.node("n0").Received(); b == 0 && backlog.Pending > 0 {
		t.Errorf("the restarted n0 received no batches, with %d messages pending at its restart", backlog.Pending)
	} else {
		t.Logf("%d messages pending at the restart; n0 then received %d batches", backlog.Pending, b)
	}
	// A page n0 was fetching when it was killed was not recorded as
	// done, so the restarted n0 fetches it again: crash recovery is
	// at-least-once. Nothing else may be fetched twice.
	inFlight := map[string]bool{}
	for _, r := range web.Log() {
		if r.UserAgent == "crawlkit-n0" && r.Start.Before(killed) && !r.End.Before(killed.Add(-time.Second)) {
			inFlight[r.Host+r.Path] = true
		}
	}
	tc.check(tc.node("n1").Ring(), ref, func(p string) bool { return inFlight[p] })
}
