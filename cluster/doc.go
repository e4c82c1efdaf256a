// Package cluster distributes a crawl over several crawler processes, the
// book's Figure 20.2 (IIR §20.2.4): each node owns a partition of the
// hosts and crawls only those, a host splitter after the URL filter sends
// every other URL to the node that owns its host, the "content seen?"
// test is partitioned by fingerprint, and the index shards the nodes build
// answer queries together (§20.3, document partitioning). Messages travel
// over NATS: JetStream for the URL inboxes, core request-reply for
// lookups; one process can embed the server for a single machine, a real
// NATS cluster serves many.
//
// # Ownership
//
// A host hashes to one of a fixed number of virtual shards (Options.Shards,
// default 1024), and each shard belongs to the node with the highest
// rendezvous score for it (Ring). Adding a node moves to it only the
// shards it wins, about 1/(n+1) of them; no shard moves between the old
// nodes. Content fingerprints are assigned the same way, independently.
//
// # Membership
//
// With Options.Lease, nodes are discovered instead of listed and may come
// and go while the crawl runs (docs/CLUSTER.md is the operator's guide).
// Members keep leases in a JetStream key-value bucket; one of them, the
// coordinator, keeps the view of the live members (a compare-and-set on
// one key), and the Ring follows it. Each shard's queue, URL-seen set and
// host records are journaled on its own subject of a JetStream stream by
// its owner (ShardState is the crawler's State): a member writes the
// commits of every shard it owns to its own log, the pages committed
// within Options.CommitDelay in one record, and folds each shard's
// entries into the shard's journal every Options.FoldEvery. The node that
// claims a shard, when its owner left, died or lost it to a new node,
// replays the journal and the logs' entries for it and carries on.
// Journal writes expect the subject's last sequence, and log writes the
// last sequence of the writer's revoke subject, on which a claimer
// revokes the shard first (a stale owner cannot write); a node stops
// contacting hosts when its lease may have expired, and a handoff waits for the old
// owner's requests in flight and Options.HandoffGap, so a host never has
// two requests in flight across the cluster (crawlkit.HostGate). A node
// whose settings differ from the cluster's is refused (ErrConfigMismatch).
// Idle detection reads the members' status records: control traffic is
// linear in the number of nodes.
//
// # Host splitter and durable inboxes
//
// Splitter implements crawlkit.HostSplitter. It buffers the URLs of other
// nodes' hosts per destination and publishes a batch when it holds
// BatchSize URLs, when its oldest URL has waited BatchDelay, or when the
// stream of links pauses (no Send for four mean gaps): batches fill while
// links keep coming and go out at once when they stop. A node's inbox is a
// subject of a JetStream work-queue stream consumed by a durable consumer
// named after the node; a batch is acknowledged only after
// crawlkit.Crawler.Add returned (the URLs are in the frontier and its
// journal, or were duplicates), so a node that dies loses nothing: what
// it had not acknowledged is delivered to it again when it restarts, and
// with a durable crawlkit.Config.State (package crawldb) and
// Options.ContentLog its frontier and its content partition come back
// too.
//
// # Quiescence
//
// A node's crawl may end only when the whole cluster has nothing left to
// do. Every node runs rounds (Options.StatusInterval) asking every node
// for its status (frontier pending + in flight + URLs buffered by its
// splitter, and batches received) and reading the stream's backlog; the
// cluster is idle when two consecutive rounds find no work anywhere, an
// empty backlog and the same counts. A node with work of its own knows
// the cluster is not idle and runs a round only every tenth interval
// (rounds cost 2n² messages). Splitter.Idle reports it, and
// crawlkit.Crawler.Run ends on an empty frontier only then. A node that
// does not answer (killed, restarting) keeps everyone running, unless it
// stays away longer than Options.DeadAfter: the others then stop waiting
// for it and for the URLs in its inbox, which the stream keeps for its
// return.
//
// Nodes end one by one, and one that is gone cannot answer, so Close says
// farewell: it sends every other node its final status, which stands for
// it in their rounds while it stays away. A node that leaves with nothing
// to do therefore lets the others end; one that leaves work behind
// (cancelled with URLs queued) keeps them waiting for its return, as a
// killed one does. A node that embeds the NATS server keeps it up in
// Close until the others have disconnected (Options.Linger).
//
// # Content seen
//
// Content implements dedup.ContentSeen for exact duplicates
// (dedup.TextFingerprint): the owner of a fingerprint keeps it with the
// URL first seen; lookups for other owners are batched (LookupBatch
// fingerprints or LookupDelay) into one request answered by a bitmap of
// the seen ones and their URLs. MinHash near-duplicates are not found
// across nodes: a sketch cannot be partitioned by value.
//
// No worker waits on an absent node. Each owner has a circuit breaker: a
// lookup batch that finds no responder (the owner's connection is gone:
// known at once) or no answer within Options.LookupTimeout (1 s; a hung
// or partitioned node) opens it. While it is open, and while the owner's
// partition is moving to another node, a lookup of its fingerprints
// answers at once on the asking node: new, unless this node already took
// the same fingerprint for new while the owner was away, and then a
// duplicate of that URL (a hold table, Options.LookupHold). A reconciler
// probes the owner, sending it the held fingerprints (after 100 ms, then
// backing off to every 2 s); its first answer closes the circuit, and the
// fingerprints it answered for leave the table. The price of an absence
// is therefore duplicates not recognised: a document fetched on two nodes
// while its owner was away is kept twice (ContentStats.MissedDuplicates
// counts those reconciliation finds); the crawl's rate does not drop.
//
// # Redundancy
//
// The inbox stream has NATSOptions.Replicas copies (default 1, the only
// choice on one server). On a cluster of three NATS servers, Replicas 3
// keeps every unacknowledged URL batch on all three: a server that is
// lost loses nothing, and each node's client fails over to the other
// servers named in NATSURL (tested with a server shut down mid-crawl). Content lookups and index queries are core request-reply,
// which any server routes.
//
// An index shard may be served by more than one process: ServeIndex
// subscribes in a queue group, so every process that serves a copy of
// node n's shard under the name n answers n's queries, one of them per
// request, and n's queries are answered while any copy is up. A copy is
// an index directory copied from the node (after the crawl, or from a
// backup): nothing keeps it in step with a shard that still grows, so a
// replica of a running crawl's shard answers with what the copy holds.
//
// # Stopping
//
// Close (or Shutdown, whose context cuts the lingering short) flushes
// the splitter, sends the content batches still buffered and the held
// fingerprints to their owners, says farewell, and leaves the inbox's
// unacknowledged batches in the stream.
//
// # Search
//
// A node serves its index.Searcher (Options.Index) on the transport, in
// index's own wire format (index.Handler). Searcher is the broker: it
// gathers global statistics, scatters the query with them, each shard
// under a deadline, and merges the top k; SearchPartial answers with the
// shards that answered and names the missing ones.
//
// # Transports
//
// Transport is the interface: NATS is the real one, Mem an in-process
// one for tests with the same delivery contract, Meter counts what
// another carries.
//
// On 32-bit platforms the embedded server of a clustered JetStream
// (nats-server v2.15) panics on an unaligned 64-bit atomic in its own
// monitoring code (found running the tests under qemu-i386); run the NATS
// servers on 64-bit machines there.
//
// # Usage
//
// One process of a three-node crawl (the others differ in Name and
// UserAgent):
//
//	node, err := cluster.NewNode(ctx, &cluster.Options{
//		Name:    "n0",
//		Nodes:   []string{"n0", "n1", "n2"},
//		NATSURL: "nats://127.0.0.1:4222", // or EmbedAddr: "127.0.0.1:4222"
//	})
//	if err != nil { ... }
//	defer node.Close()
//	state, err := crawldb.Open("n0/state", nil)
//	if err != nil { ... }
//	defer state.Close()
//	cfg := crawlkit.Config{Seeds: seeds, State: state}
//	node.Configure(&cfg) // cfg.Splitter, cfg.ContentSeen
//	c, err := crawlkit.New(cfg)
//	if err != nil { ... }
//	if err := node.Start(ctx, c); err != nil { ... }
//	stats, err := c.Run(ctx)
package cluster
