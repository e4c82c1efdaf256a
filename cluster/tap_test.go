package cluster

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// tap counts the messages routed in the default account of a NATS
// server, by what they are for: a connection subscribed to ">" receives
// every publish, request and reply, JetStream acknowledgement, pull
// request and delivery in the account, whoever sent it (a node or
// JetStream itself). The server's InMsgs count only what clients send;
// the tap also sees what JetStream sends them (publish acknowledgements,
// KV watch deliveries, consumer deliveries), one count per message
// whatever the number of subscribers.
//
// Kinds: "members" (the membership bucket: heartbeats, view writes, their
// acknowledgements and watch deliveries), "status" (stream information
// requests and replies: the coordinator's or the quiescence round's
// backlog), "journal" (shard journal and node log writes and acknowledgements),
// "inbox" (URL batches, their acknowledgements, pull requests and
// deliveries), "lookup" (content-seen requests and answers), "rounds"
// (the static mode's all-pairs status requests and answers), "other"
// (what could not be attributed: ordered consumers' idle heartbeats and
// the like).
type tap struct {
	nc     *nats.Conn
	prefix string
	stream string

	mu      sync.Mutex
	counts  map[string]int64
	replies map[string]string // reply subject → kind of the message that named it
}

func newTap(tb testing.TB, srv *server.Server, o NATSOptions) *tap {
	tb.Helper()
	nc, err := nats.Connect(srv.ClientURL(), nats.Name("tap"))
	if err != nil {
		tb.Fatal(err)
	}
	t := &tap{nc: nc, prefix: o.Prefix, stream: o.Stream, counts: map[string]int64{}, replies: map[string]string{}}
	sub, err := nc.Subscribe(">", t.count)
	if err != nil {
		tb.Fatal(err)
	}
	// Never a slow consumer: a dropped message would go uncounted.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		tb.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	return t
}

// streamKind attributes a stream (or KV bucket stream) name.
func (t *tap) streamKind(name string) string {
	switch name {
	case t.stream:
		return "inbox"
	case t.stream + "_SHARDS":
		return "journal"
	case "KV_" + t.stream + "_members":
		return "members"
	}
	return "other"
}

// token returns the i-th dot-separated token of s, "" if none.
func token(s string, i int) string {
	parts := strings.Split(s, ".")
	if i < len(parts) {
		return parts[i]
	}
	return ""
}

func (t *tap) kind(m *nats.Msg) string {
	s, r := m.Subject, m.Reply
	if k, ok := t.replies[s]; ok {
		return k
	}
	if strings.HasPrefix(r, "$JS.ACK.") {
		return t.streamKind(token(r, 2)) // a consumer's delivery
	}
	switch {
	case strings.HasPrefix(s, "$KV."+t.stream+"_members."):
		return "members"
	case strings.HasPrefix(s, t.prefix+".shard."), strings.HasPrefix(s, t.prefix+".log."),
		strings.HasPrefix(s, t.prefix+".own."):
		return "journal"
	case strings.HasPrefix(s, t.prefix+".urls."):
		return "inbox"
	case strings.HasPrefix(s, t.prefix+".rpc.content."):
		return "lookup"
	case strings.HasPrefix(s, t.prefix+".rpc.status."):
		return "rounds"
	case strings.HasPrefix(s, "$JS.API.STREAM.INFO."):
		return "status"
	case strings.HasPrefix(s, "$JS.API.CONSUMER.MSG.NEXT."), strings.HasPrefix(s, "$JS.API.DIRECT.GET."),
		strings.HasPrefix(s, "$JS.API.STREAM.MSG.GET."):
		return t.streamKind(token(s, 5-boolInt(strings.HasPrefix(s, "$JS.API.DIRECT."))))
	case strings.HasPrefix(s, "$JS.ACK."), strings.HasPrefix(s, "$JS.FC."):
		return t.streamKind(token(s, 2))
	}
	return "other"
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (t *tap) count(m *nats.Msg) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.kind(m)
	t.counts[k]++
	if _, ok := t.replies[m.Subject]; ok && !strings.HasPrefix(m.Reply, "$JS.ACK.") {
		// A reply: one per request, except the many deliveries of a
		// pull request, which keep the mapping.
		delete(t.replies, m.Subject)
	}
	if m.Reply != "" && !strings.HasPrefix(m.Reply, "$JS.ACK.") {
		t.replies[m.Reply] = k
	}
}

// snapshot returns the counts so far.
func (t *tap) snapshot() map[string]int64 {
	t.nc.Flush()
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.counts)
}

// diff returns b − a per kind.
func diff(a, b map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range b {
		if v-a[k] != 0 {
			d[k] = v - a[k]
		}
	}
	return d
}

// sum adds the counts of the given kinds (all if none given).
func sum(c map[string]int64, kinds ...string) int64 {
	var n int64
	for k, v := range c {
		if len(kinds) == 0 || slices.Contains(kinds, k) {
			n += v
		}
	}
	return n
}

// breakdown formats counts divided by per, largest first.
func breakdown(c map[string]int64, per float64, unit string) string {
	keys := slices.SortedFunc(maps.Keys(c), func(a, b string) int { return int(c[b] - c[a]) })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.3g", k, float64(c[k])/per))
	}
	return strings.Join(parts, ", ") + " " + unit
}
