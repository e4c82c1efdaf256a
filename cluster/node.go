package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/index"
)

// Options configures a Node. Name and Nodes are required; the transport
// is Transport if set, else a NATS connection to NATSURL, else an embedded
// NATS server listening on EmbedAddr.
type Options struct {
	// Name is this node's name: a NATS subject token (no '.', '*', '>'
	// or spaces), one of Nodes. With Lease, names must be unique among
	// the live members.
	Name string
	// Nodes are the names of all nodes of the crawl. Every node must be
	// given the same list (order does not matter) and Shards. With Lease
	// it is not needed: the members are discovered, and Nodes is ignored.
	Nodes []string
	// Lease, if positive, turns membership on (it needs NATS): the node
	// joins the crawl's members in a JetStream key-value bucket and
	// renews its lease every Lease/5; shards go to the live members by
	// rendezvous hashing, and move, with their queues and URL-seen sets
	// (journaled in JetStream), when a node joins, leaves, or stays silent
	// for a Lease. Configure then sets the crawler's State (ShardState).
	// See the package documentation, "Membership". Default 0: the static
	// node list.
	Lease time.Duration
	// HandoffGap is how long a node waits, after a shard's previous owner
	// released it or was declared dead, before it contacts the shard's
	// hosts: the politeness gap across the handoff. It should be at least
	// the crawl's longest politeness gap. Default 1 s.
	HandoffGap time.Duration
	// StateDir, with Lease, keeps this node's copy of its shards' state
	// (pending URLs, URL-seen set, host records) and the crawler's
	// frontier queues in a crawl database (package crawldb) in this
	// directory instead of memory, so that a node holds millions of
	// pending URLs in bounded memory. The journals stay the durable
	// record: the directory is emptied at every start. Default "": memory,
	// about 200 bytes per pending URL.
	StateDir string
	// CompactAfter is, with Lease, how many records a shard's journal
	// holds before its owner replaces them with a snapshot of the
	// shard's state, so that a node claiming the shard replays its state
	// rather than its history. Default 4096; negative: never.
	CompactAfter int
	// CommitDelay, with Lease, is how long a commit waits for others to
	// share its record of the node's log (a group commit): the crawler's
	// pages committed meanwhile are written in one publish. A worker
	// waiting lends its place to another (crawlkit.Config.Workers).
	// Default 10 ms; negative: no wait beyond the write in flight.
	CommitDelay time.Duration
	// FoldEvery, with Lease, is how often a node folds its log into its
	// shards' journals (one record per shard its log touched) and purges
	// the log: a node that claims a shard replays the logs' entries since.
	// Default 5 s.
	FoldEvery time.Duration
	// Shards is the number of virtual shards. Default DefaultShards.
	Shards int

	// Transport, if set, carries the messages (e.g. a shared Mem in
	// tests). The Node does not close it.
	Transport Transport
	// NATSURL is the NATS server (or comma-separated servers of a NATS
	// cluster) to connect to when Transport is nil.
	NATSURL string
	// EmbedAddr, when Transport and NATSURL are empty, starts a NATS
	// server with JetStream inside this process listening on EmbedAddr
	// ("127.0.0.1:4222"; port 0 picks one, see Node.ClientURL) that other
	// processes can join with NATSURL.
	EmbedAddr string
	// StoreDir holds the embedded server's JetStream files. Default: a
	// temporary directory removed by Close (so inboxes do not survive the
	// process).
	StoreDir string
	// NATS configures the NATS transport.
	NATS NATSOptions

	// BatchSize and BatchDelay bound the host splitter's batches: a
	// destination's URLs are published when BatchSize are buffered,
	// when the oldest has waited BatchDelay, or when the traffic pauses
	// (see Splitter). Defaults 256 and 100 ms.
	BatchSize  int
	BatchDelay time.Duration
	// LookupBatch and LookupDelay bound content-seen batches the same
	// way. Defaults 64 and 25 ms: a crawler worker waiting on another
	// node's answer lends its place to another worker (crawlkit.Config
	// Workers), so the delay costs each such page its latency and fills
	// the batches (about 3 lookups a request at a few hundred pages per
	// second on 3 nodes), without slowing the crawl.
	LookupBatch int
	LookupDelay time.Duration
	// LookupTimeout bounds a content-seen batch's round trip: an owner
	// that does not answer within it (or has no connection: at once) has
	// its circuit opened, and its fingerprints are answered on this node
	// until it answers a probe again (see Content). It is the longest a
	// crawler worker waits on an absent or slow node, once per
	// node. Default 1 s.
	LookupTimeout time.Duration
	// LookupHold bounds the fingerprints a node holds for owners whose
	// circuit is open (about 100 bytes each with their URL); past it,
	// their lookups answer "new" without remembering. Default 65536.
	LookupHold int
	// RequestTimeout bounds each request to another node. Default 5 s.
	RequestTimeout time.Duration
	// StatusInterval is the period of the quiescence rounds. Default
	// 100 ms.
	StatusInterval time.Duration
	// DeadAfter is how long the other nodes wait for a node that is away
	// (it does not answer, or it left with work undone) before they stop
	// waiting: past it, the node and the URLs in its inbox no longer keep
	// the cluster from being idle, so the others' crawls can end without
	// it. Its inbox stays in the stream, and a node that comes back is
	// waited for again. Default 0: wait for it forever.
	DeadAfter time.Duration
	// Linger bounds how long Close of a node that embeds the NATS server
	// (EmbedAddr) and leaves with nothing to do waits for the other
	// nodes to disconnect before it shuts the server down: their crawls
	// need it to end. Default 1 minute; negative: do not wait.
	Linger time.Duration

	// Index, if set, is this node's index shard, served to Searchers.
	Index index.Searcher

	// ContentLog, if set, is a file that keeps this node's partition of
	// the content fingerprints (dedup.Durable): NewNode replays it and
	// every fingerprint recorded later is appended with one write, so a
	// node restarted on it, after a stop or a kill, still knows the
	// content the cluster fetched. Default "": the partition lives in
	// memory only.
	ContentLog string

	// Logger receives errors. Default slog.Default().
	Logger *slog.Logger
}

// Node is one crawler process of a distributed crawl (IIR Figure 20.2).
// It owns the hosts and content fingerprints the Ring gives it, provides
// the crawlkit.Config hooks (Splitter, ContentSeen), feeds the URLs other
// nodes send into its Crawler (Start), answers their content lookups,
// status and index queries, and decides with the others when the crawl
// is over. Methods are safe for concurrent use.
type Node struct {
	opts     Options
	ring     *Ring
	meter    *Meter
	raw      Transport
	owned    bool
	srv      *server.Server
	tmp      string
	splitter *Splitter
	content  *Content
	clog     *os.File // Options.ContentLog, open
	log      *slog.Logger

	mu       sync.Mutex
	closers  []io.Closer
	consumer io.Closer
	started  bool
	closed   bool
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	members *membership // with Lease
	shards  *shards     // with Lease
	config  string      // configuration fingerprint (Configure)

	crawler  atomic.Pointer[crawlkit.Crawler]
	received atomic.Uint64
	dropped  atomic.Uint64
	leaving  atomic.Bool
	crashed  atomic.Bool // test hook: stop as a killed process would

	// gone holds the farewell Status of the nodes that left, and when
	// it came.
	goneMu sync.Mutex
	gone   map[string]farewell
	// away holds when each node that keeps the others waiting (no answer,
	// or a farewell with work) was first seen so; written by the rounds.
	away map[string]time.Time
	// dead holds the nodes given up on (Options.DeadAfter).
	dead map[string]bool
}

// NewNode connects (or starts an embedded server), creates the inbox
// stream and serves content-seen lookups and the index shard. Use
// Configure to put its hooks into a crawlkit.Config, then Start with the
// Crawler.
//
// opts may be nil, but Name and Nodes are required: nil fails with an
// *Error wrapping ErrUnknownNode, as an empty Name does. The options are
// copied (Nodes too), so the caller may change or reuse them afterwards.
func NewNode(ctx context.Context, opts *Options) (*Node, error) {
	if opts == nil {
		return nil, &Error{Op: "new node", Err: fmt.Errorf("%w: nil Options (Name and Nodes are required)", ErrUnknownNode)}
	}
	o := *opts
	o.Nodes = slices.Clone(opts.Nodes)
	if o.Lease > 0 {
		o.Nodes = []string{o.Name} // until the view says more
	}
	if !validToken(o.Name) || !slices.Contains(o.Nodes, o.Name) {
		return nil, &Error{Op: "new node", Subject: o.Name, Err: ErrUnknownNode}
	}
	for _, n := range o.Nodes {
		if !validToken(n) {
			return nil, &Error{Op: "new node", Subject: n, Err: errors.New("node name is not a subject token")}
		}
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.BatchSize, 256)
	defD(&o.BatchDelay, 100*time.Millisecond)
	def(&o.LookupBatch, 64)
	defD(&o.LookupDelay, 25*time.Millisecond)
	defD(&o.LookupTimeout, time.Second)
	def(&o.LookupHold, 1<<16)
	defD(&o.RequestTimeout, 5*time.Second)
	defD(&o.StatusInterval, 100*time.Millisecond)
	defD(&o.Linger, time.Minute)
	defD(&o.HandoffGap, time.Second)
	if o.CommitDelay == 0 {
		o.CommitDelay = 10 * time.Millisecond
	}
	defD(&o.FoldEvery, 5*time.Second)
	if o.CompactAfter == 0 {
		o.CompactAfter = 4096
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	ring, err := NewRing(o.Nodes, o.Shards)
	if err != nil {
		return nil, err
	}
	n := &Node{opts: o, ring: ring, log: o.Logger, gone: map[string]farewell{}, away: map[string]time.Time{}, dead: map[string]bool{}}
	if err := n.connect(ctx); err != nil {
		n.shutdown(context.Background(), false)
		return nil, err
	}
	n.meter = &Meter{T: n.raw}
	n.splitter = newSplitter(ring, o.Name, n.meter, o.BatchSize, o.BatchDelay, o.Logger)
	if o.Lease > 0 {
		if err := n.openMembership(ctx); err != nil {
			n.shutdown(context.Background(), false)
			return nil, err
		}
	}
	n.content = newContent(ring, o.Name, n.meter, o.LookupBatch, o.LookupDelay, o.LookupTimeout, o.LookupHold, o.Logger)
	if n.shards != nil {
		// The partition's fingerprints go to the journals of their
		// shards, and move with them.
		n.content.store.onNew = n.shards.noteFingerprint
	}
	n.content.startReconciler()
	if o.ContentLog != "" {
		if err := n.openContentLog(o.ContentLog); err != nil {
			n.shutdown(context.Background(), false)
			return nil, err
		}
	}
	c, err := n.raw.Serve("content."+o.Name, n.content.serve)
	if err != nil {
		n.shutdown(context.Background(), false)
		return nil, err
	}
	n.closers = append(n.closers, c)
	if o.Index != nil {
		c, err := ServeIndex(n.raw, o.Name, o.Index)
		if err != nil {
			n.shutdown(context.Background(), false)
			return nil, err
		}
		n.closers = append(n.closers, c)
	}
	return n, nil
}

// openContentLog replays the content log at path into the node's
// partition and has the partition append its changes to it. A torn last
// record (a kill in mid-write) is cut off.
func (n *Node) openContentLog(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return &Error{Op: "new node", Subject: path, Err: err}
	}
	end, err := n.content.Replay(f)
	if err == nil {
		err = f.Truncate(end)
	}
	if err == nil {
		_, err = f.Seek(end, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return &Error{Op: "new node", Subject: path, Err: err}
	}
	n.content.LogTo(f)
	n.clog = f
	return nil
}

func (n *Node) connect(ctx context.Context) error {
	switch {
	case n.opts.Transport != nil:
		n.raw = n.opts.Transport
		return nil
	case n.opts.NATSURL != "":
	case n.opts.EmbedAddr != "":
		dir := n.opts.StoreDir
		if dir == "" {
			d, err := os.MkdirTemp("", "crawlkit-nats-")
			if err != nil {
				return &Error{Op: "new node", Subject: n.opts.Name, Err: err}
			}
			dir, n.tmp = d, d
		}
		s, err := StartServer(&ServerOptions{Addr: n.opts.EmbedAddr, StoreDir: dir, Name: n.opts.Name})
		if err != nil {
			return err
		}
		n.srv = s
		n.opts.NATSURL = s.ClientURL()
	default:
		return &Error{Op: "new node", Subject: n.opts.Name, Err: errors.New("no Transport, NATSURL or EmbedAddr")}
	}
	t, err := DialNATS(ctx, n.opts.NATSURL, &n.opts.NATS)
	if err != nil {
		return err
	}
	n.raw, n.owned = t, true
	return nil
}

// ClientURL returns the NATS URL of the embedded server ("" without one),
// for other processes' Options.NATSURL.
func (n *Node) ClientURL() string {
	if n.srv == nil {
		return ""
	}
	return n.srv.ClientURL()
}

// Ring returns the ownership of hosts and fingerprints.
func (n *Node) Ring() *Ring { return n.ring }

// Splitter returns the host splitter for crawlkit.Config.Splitter.
func (n *Node) Splitter() *Splitter { return n.splitter }

// ContentSeen returns the partitioned content-seen test for
// crawlkit.Config.ContentSeen.
func (n *Node) ContentSeen() *Content { return n.content }

// Configure sets cfg.Splitter and cfg.ContentSeen to this node's. With
// membership (Options.Lease) it also sets cfg.State to the node's
// ShardState, which keeps the node's progress and URL rules in the State
// cfg had, if any (see ShardState), and takes the fingerprint of
// the settings every member must share (Shards, and cfg's politeness:
// MinDelay, MaxDelay, DelayFactor, Agent, MaxPagesPerHost): a node whose
// fingerprint differs from the cluster's is refused by Start.
func (n *Node) Configure(cfg *crawlkit.Config) {
	cfg.Splitter = n.splitter
	cfg.ContentSeen = n.content
	if n.shards != nil {
		if st := cfg.State; st != nil && !n.shards.state.is(st) {
			n.shards.state.own = st
		}
		cfg.State = n.shards.state.crawlState()
		n.mu.Lock()
		n.config = configFingerprint(n.ring.Shards(), cfg)
		n.mu.Unlock()
	}
}

// Transport returns the node's transport (counting what passes through
// it, see Traffic).
func (n *Node) Transport() Transport { return n.meter }

// Traffic returns the messages and bytes this node sent: URL batches,
// content lookups and their answers, forgets (not the quiescence
// rounds).
func (n *Node) Traffic() (messages, bytes uint64) { return n.meter.Counts() }

// Searcher returns a broker over the index shards of all nodes.
// With membership, the shards are those of the members of the view.
func (n *Node) Searcher() *Searcher { return NewSearcher(n.raw, n.ring.Nodes(), n.opts.RequestTimeout) }

// Start begins feeding this node's inbox into c (each batch acknowledged
// only after c.Add returned, so a node that dies loses nothing), answers
// status requests and runs the quiescence rounds that make
// Splitter().Idle true. Give it the context of c.Run: when ctx is done,
// URLs being added are not acknowledged. Start may be called before or
// after Run begins, once.
func (n *Node) Start(ctx context.Context, c *crawlkit.Crawler) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return &Error{Op: "start", Subject: n.opts.Name, Err: ErrClosed}
	}
	if n.started {
		return &Error{Op: "start", Subject: n.opts.Name, Err: errors.New("started twice")}
	}
	n.started = true
	n.crawler.Store(c)
	if n.members != nil {
		return n.startMember(ctx, c)
	}
	st, err := n.raw.Serve("status."+n.opts.Name, n.serveStatus)
	if err != nil {
		return err
	}
	n.closers = append(n.closers, st)
	cons, err := n.raw.Consume(n.opts.Name, func(hctx context.Context, data []byte) error {
		urls, err := DecodeURLs(data)
		if err != nil {
			// A message no version of this code can read: drop it
			// rather than receive it forever.
			n.dropped.Add(1)
			n.log.Error("cluster: dropping undecodable batch", "node", n.opts.Name, "err", err)
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.Add(hctx, urls...); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			// The crawl stopped while adding: the URLs may not have
			// reached its journal; let them come again.
			return err
		}
		n.received.Add(1)
		return nil
	})
	if err != nil {
		return err
	}
	n.consumer = cons
	lctx, cancel := context.WithCancel(ctx)
	n.cancel = cancel
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.quiescence(lctx)
	}()
	return nil
}

// serveStatus answers a quiescence round with this node's Status, and
// records the farewell of a node that leaves.
func (n *Node) serveStatus(_ context.Context, req []byte) ([]byte, error) {
	if len(req) > 0 && req[0] == kindLeave {
		node, s, err := decodeLeave(req)
		if err != nil {
			return nil, err
		}
		n.goneMu.Lock()
		n.gone[node] = farewell{s, time.Now()}
		n.goneMu.Unlock()
		return []byte{kindLeave}, nil
	}
	return appendStatus(nil, n.localStatus()), nil
}

// localStatus is this node's Status. The received count is read before
// the crawler's counters, so a batch counted as received is also counted
// in the frontier (or was already processed).
func (n *Node) localStatus() Status {
	recv := n.received.Load()
	s := Status{Received: recv, Busy: uint64(n.splitter.Buffered()), Leaving: n.leaving.Load()}
	if c := n.crawler.Load(); c != nil {
		st := c.Stats()
		s.Busy += uint64(max(st.Frontier.Pending(), 0) + max(st.InFlight, 0))
	}
	return s
}

// busyRounds is how many StatusIntervals apart a busy node runs its
// quiescence rounds.
const busyRounds = 10

// round is one quiescence round's view of the cluster.
type round struct {
	quiet     bool
	published uint64
	received  uint64
}

// quiescence runs rounds every StatusInterval: the cluster is idle when
// two consecutive rounds found every node without work, the inboxes
// empty, and nothing published or received in between. While this node
// has work of its own the cluster cannot be idle, so it asks the others
// only every busyRounds ticks, to keep track of the nodes away
// (Options.DeadAfter): all-pairs rounds cost 2n² messages each, and a
// crawl that polled every tick spent a quarter of its messages on them.
func (n *Node) quiescence(ctx context.Context) {
	defer n.splitter.idle.Store(false)
	tick := time.NewTicker(n.opts.StatusInterval)
	defer tick.Stop()
	var prev round
	skipped := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n.localStatus().Busy > 0 && skipped < busyRounds-1 {
			skipped++
			prev = round{}
			n.splitter.idle.Store(false)
			continue
		}
		skipped = 0
		cur := n.round(ctx)
		n.splitter.idle.Store(prev.quiet && cur.quiet && prev.published == cur.published && prev.received == cur.received)
		prev = cur
	}
}

func (n *Node) round(ctx context.Context) round {
	ctx, cancel := context.WithTimeout(ctx, n.opts.RequestTimeout)
	defer cancel()
	asked := time.Now()
	r := round{quiet: true}
	statuses := make([]Status, len(n.opts.Nodes))
	errs := make([]error, len(n.opts.Nodes))
	var wg sync.WaitGroup
	for i, node := range n.opts.Nodes {
		wg.Go(func() {
			resp, err := n.raw.Request(ctx, "status."+node, []byte{kindStatus})
			if err == nil {
				statuses[i], err = decodeStatus(resp)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	now := time.Now()
	var ignored []string
	n.goneMu.Lock()
	for i, node := range n.opts.Nodes {
		st, err := statuses[i], errs[i]
		left := false
		if fw, ok := n.gone[node]; ok {
			if err == nil && !st.Leaving && fw.at.Before(asked) {
				delete(n.gone, node) // back again
			} else {
				// It left (or is leaving): its farewell stands for it,
				// quiet if it left with nothing to do. An answer asked
				// for before the farewell came is older than it.
				st, err, left = fw.st, nil, true
			}
		}
		if node != n.opts.Name && n.giveUp(node, err != nil || left && st.Busy > 0, now) {
			ignored = append(ignored, node)
			continue
		}
		if err != nil || st.Busy > 0 {
			r.quiet = false
		}
		r.received += st.Received
	}
	n.goneMu.Unlock()
	bl, err := n.raw.Backlog(ctx)
	pending := bl.Pending
	for _, node := range ignored {
		pending -= min(pending, bl.ByNode[node])
	}
	if err != nil || pending > 0 {
		r.quiet = false
	}
	r.published = bl.Published
	return r
}

// farewell is the final Status a node that left sent, and when it came.
type farewell struct {
	st Status
	at time.Time
}

// giveUp records whether node is away (it keeps the others waiting) and
// reports whether it has been away longer than Options.DeadAfter, so that
// the round no longer waits for it. Called with goneMu held.
func (n *Node) giveUp(node string, away bool, now time.Time) bool {
	if !away {
		delete(n.away, node)
		if n.dead[node] {
			delete(n.dead, node)
			n.log.Info("cluster: node back; waiting for it again", "node", n.opts.Name, "peer", node)
		}
		return false
	}
	since, ok := n.away[node]
	if !ok {
		n.away[node] = now
		since = now
	}
	if n.opts.DeadAfter <= 0 || now.Sub(since) < n.opts.DeadAfter {
		return false
	}
	if !n.dead[node] {
		n.dead[node] = true
		n.log.Warn("cluster: node away too long; no longer waiting for it (its inbox is kept for its return)",
			"node", n.opts.Name, "peer", node, "away", now.Sub(since).Round(time.Millisecond))
	}
	return true
}

// sayFarewell tells every other node this node's final Status, which
// stands for it in their rounds once it no longer answers: a node that
// leaves with nothing to do lets the others end their crawls, one that
// leaves work behind (cancelled, killed) keeps them waiting for its
// return. Nodes that do not answer are gone already.
func (n *Node) sayFarewell() Status {
	n.leaving.Store(true)
	final := n.localStatus()
	msg := appendLeave(nil, n.opts.Name, final)
	ctx, cancel := context.WithTimeout(context.Background(), n.opts.RequestTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, node := range n.opts.Nodes {
		if node == n.opts.Name {
			continue
		}
		wg.Go(func() {
			if _, err := n.raw.Request(ctx, "status."+node, msg); err != nil {
				n.log.Debug("cluster: farewell not delivered", "node", n.opts.Name, "to", node, "err", err)
			}
		})
	}
	wg.Wait()
	return final
}

// linger keeps an embedded server up, at most Options.Linger or until ctx
// ends, until the
// other nodes' connections are gone: a node still crawling needs it to
// learn that the cluster is idle (and would wait forever without it).
func (n *Node) linger(ctx context.Context) {
	if n.srv == nil || n.opts.Linger < 0 {
		return
	}
	own := 0
	if n.owned {
		own = 1 // this node's own connection
	}
	deadline := time.Now().Add(n.opts.Linger)
	logged := false
	for n.srv.NumClients() > own && time.Now().Before(deadline) && ctx.Err() == nil {
		if !logged {
			n.log.Info("cluster: waiting for the other nodes to leave the embedded NATS server", "node", n.opts.Name, "clients", n.srv.NumClients()-own, "at most", n.opts.Linger)
			logged = true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Received returns the number of URL batches this node's crawler took
// from its inbox, and the number of undecodable batches dropped.
func (n *Node) Received() (batches, dropped uint64) { return n.received.Load(), n.dropped.Load() }

// Close stops consuming and serving, publishes what the splitter still
// buffers, and releases the transport and embedded server it created.
// URLs left in the inbox stay there for the node's next start. Close is
// Shutdown without a deadline.
func (n *Node) Close() error { return n.Shutdown(context.Background()) }

// Shutdown is Close with a bound: when ctx ends, a node that embeds the
// NATS server stops waiting for the other nodes to disconnect
// (Options.Linger) and shuts the server down. Everything else (the last
// flush, the farewell) is bounded by RequestTimeout as in Close. A
// command calls it with a context that a stop signal cancels, so that
// the signal is not kept waiting up to a minute.
func (n *Node) Shutdown(ctx context.Context) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	return n.shutdown(ctx, true)
}

// shutdown releases the node; with farewell (a Close, not a failed
// NewNode) it first tells the other nodes its final Status and, if it
// embeds the server, lingers for them.
func (n *Node) shutdown(ctx context.Context, farewell bool) error {
	var errs []error
	if n.consumer != nil {
		errs = append(errs, n.consumer.Close())
	}
	if n.members != nil && n.cancel != nil {
		n.leaving.Store(true)
	}
	if n.cancel != nil {
		n.cancel()
	}
	n.wg.Wait()
	if n.shards != nil {
		n.shards.compactWG.Wait()
	}
	if n.members != nil && n.started && farewell && !n.crashed.Load() {
		n.handOver()
	}
	if n.shards != nil && n.opts.StateDir != "" {
		// The local copy is rebuilt from the journals at the next start.
		errs = append(errs, n.shards.state.inner.Close(), os.RemoveAll(n.opts.StateDir))
	}
	if n.splitter != nil {
		ctx, cancel := context.WithTimeout(context.Background(), n.opts.RequestTimeout)
		if lost := n.splitter.close(ctx); lost > 0 {
			errs = append(errs, &Error{Op: "close", Subject: n.opts.Name, Err: errors.New("could not publish buffered URLs")})
		}
		cancel()
	}
	if n.content != nil {
		n.content.close()
		if n.clog != nil {
			n.content.LogTo(nil)
			errs = append(errs, n.clog.Close())
		}
	}
	if farewell && n.started && n.members == nil {
		if final := n.sayFarewell(); final.Busy == 0 {
			// Lingering helps only nodes that can still end: not when
			// this one leaves work behind (cancelled), which keeps
			// them waiting for its return anyway.
			n.linger(ctx)
		}
	}
	for i := len(n.closers) - 1; i >= 0; i-- {
		errs = append(errs, n.closers[i].Close())
	}
	if n.owned && n.raw != nil {
		errs = append(errs, n.raw.Close())
	}
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
	}
	if n.tmp != "" {
		errs = append(errs, os.RemoveAll(n.tmp))
	}
	return errors.Join(errs...)
}
