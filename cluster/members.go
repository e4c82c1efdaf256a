package cluster

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Membership keeps the live members of a crawl in a JetStream key-value
// bucket (NATSOptions.Stream + "_members"):
//
//   - node.NAME is a member's record (memberRecord): written by the member
//     when its status changes and at least every Lease/5 (its heartbeat);
//     deleted when it leaves.
//   - view is the cluster's view (viewRecord): the live members, the
//     configuration fingerprint every member must have, and whether the
//     cluster is idle. One member, the coordinator, writes it (a
//     compare-and-set on the key's revision, so there is one writer); it
//     alone watches the member records. The others watch only the view,
//     and when it has not changed for a Lease, race to take over with the
//     same compare-and-set.
//
// A member is live while the coordinator saw its record change within the
// last Lease. Messages per second, for n members: about n/(Lease/5)
// heartbeats, each a put, its acknowledgement and its delivery to the
// coordinator, plus one view write every Lease/5 delivered to n watchers,
// plus one stream-info request and reply every StatusInterval by the
// coordinator: (4n+2)/(Lease/5) + 2/StatusInterval, linear in n. A member's status
// record changes more often only around idle transitions (bounded by one
// put per StatusInterval).
type memberRecord struct {
	Inc     uint64 `json:"inc"`
	Config  string `json:"config"`
	Busy    uint64 `json:"busy"`
	Recv    uint64 `json:"recv"`
	Leaving bool   `json:"leaving,omitempty"`
}

type viewRecord struct {
	Epoch       uint64   `json:"epoch"`
	Coordinator string   `json:"coordinator"`
	CoordInc    uint64   `json:"coord_inc"`
	Config      string   `json:"config"`
	Members     []string `json:"members"`
	Idle        bool     `json:"idle"`
}

// ErrConfigMismatch reports a node whose configuration (shard count,
// politeness settings: see Node.Configure) differs from the one the
// cluster's members run with; it is refused.
var ErrConfigMismatch = errors.New("cluster: configuration differs from the cluster's")

// ErrNotMember reports an operation that needs this node to be a member
// of the cluster's view.
var ErrNotMember = errors.New("cluster: not a member")

// membership is a node's part in the membership protocol.
type membership struct {
	n      *Node
	kv     jetstream.KeyValue
	inc    uint64
	config string
	lease  time.Duration
	beat   time.Duration

	mu       sync.Mutex
	view     viewRecord
	viewRev  uint64
	viewSeen time.Time // local time of the last view revision
	lastAck  time.Time // local time the last heartbeat was stored
	last     memberRecord
	lastPut  time.Time
	changed  chan struct{} // closed and replaced on every view change
	coord    context.CancelFunc

	puts atomic.Uint64 // KV writes (heartbeats, view), for Node.ControlTraffic
}

func newIncarnation() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) | 1
}

func openMembership(ctx context.Context, n *Node, t *NATS, config string) (*membership, error) {
	storage := jetstream.FileStorage
	if t.opts.Memory {
		storage = jetstream.MemoryStorage
	}
	kv, err := t.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:   t.opts.Stream + "_members",
		History:  1,
		Storage:  storage,
		Replicas: t.opts.Replicas,
	})
	if err != nil {
		return nil, &Error{Op: "membership", Subject: t.opts.Stream + "_members", Err: err}
	}
	lease := n.opts.Lease
	return &membership{n: n, kv: kv, inc: newIncarnation(), config: config, lease: lease,
		beat: lease / 5, changed: make(chan struct{})}, nil
}

// Inc returns this process's incarnation: a random number that tells a
// restarted node from its previous life.
func (m *membership) Inc() uint64 { return m.inc }

// join checks the cluster's configuration, writes this node's record and
// waits for a view (becoming the coordinator if there is none).
func (m *membership) join(ctx context.Context) error {
	e, err := m.kv.Get(ctx, "view")
	if err == nil {
		var v viewRecord
		if json.Unmarshal(e.Value(), &v) == nil && len(v.Members) > 0 && time.Since(e.Created()) < 2*m.lease &&
			v.Config != m.config && !(len(v.Members) == 1 && v.Members[0] == m.n.opts.Name) {
			return &Error{Op: "join", Subject: m.n.opts.Name, Err: fmt.Errorf("%w: this node %s, the cluster (%s) %s",
				ErrConfigMismatch, m.config, strings.Join(v.Members, ","), v.Config)}
		}
	}
	if err := m.put(ctx, m.n.memberStatus(), true); err != nil {
		return err
	}
	return nil
}

// put writes this node's record if it changed (or force, or the
// heartbeat is due).
func (m *membership) put(ctx context.Context, st memberRecord, force bool) error {
	st.Inc, st.Config = m.inc, m.config
	m.mu.Lock()
	quiet := st.Busy == 0
	changed := st.Leaving != m.last.Leaving || quiet != (m.last.Busy == 0) || quiet && st.Recv != m.last.Recv
	due := time.Since(m.lastPut) >= m.beat
	m.mu.Unlock()
	if !force && !changed && !due {
		return nil
	}
	if m.n.crashed.Load() {
		return &Error{Op: "heartbeat", Subject: m.n.opts.Name, Err: ErrClosed}
	}
	data, _ := json.Marshal(st)
	if _, err := m.kv.Put(ctx, "node."+m.n.opts.Name, data); err != nil {
		return &Error{Op: "heartbeat", Subject: m.n.opts.Name, Err: err}
	}
	m.puts.Add(1)
	now := time.Now()
	m.mu.Lock()
	m.last, m.lastPut, m.lastAck = st, now, now
	m.mu.Unlock()
	return nil
}

// standing reports whether this node may act as the owner of its shards:
// its last heartbeat was stored less than 3/4 Lease ago (so the
// coordinator, which waits a whole Lease from when it saw it, has not
// declared it dead) and the view lists it.
func (m *membership) standing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return time.Since(m.lastAck) < m.lease*3/4 && slices.Contains(m.view.Members, m.n.opts.Name)
}

// current returns the view and a channel closed at its next change.
func (m *membership) current() (viewRecord, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.view, m.changed
}

// run beats, watches the view and takes over as coordinator when the
// view goes stale, until ctx ends.
func (m *membership) run(ctx context.Context) {
	// Whichever way the loop ends (its context, or the watch closed as
	// the context ends), a coordinator it started stops with it: the
	// node's Close waits for both.
	defer m.stopCoordinating()
	w, err := m.kv.Watch(ctx, "view")
	if err != nil {
		m.n.log.Error("cluster: watching the view", "node", m.n.opts.Name, "err", err)
		return
	}
	defer w.Stop()
	tick := time.NewTicker(min(m.n.opts.StatusInterval, m.beat))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			var v viewRecord
			if err := json.Unmarshal(e.Value(), &v); err != nil {
				m.n.log.Error("cluster: unreadable view", "node", m.n.opts.Name, "err", err)
				continue
			}
			m.setView(v, e.Revision())
		case <-tick.C:
			pctx, cancel := context.WithTimeout(ctx, m.n.opts.RequestTimeout)
			if err := m.put(pctx, m.n.memberStatus(), false); err != nil {
				m.n.log.Warn("cluster: heartbeat failed", "node", m.n.opts.Name, "err", err)
			}
			m.maybeTakeOver(pctx)
			cancel()
		}
	}
}

func (m *membership) setView(v viewRecord, rev uint64) {
	m.mu.Lock()
	if rev <= m.viewRev {
		m.mu.Unlock()
		return
	}
	old := m.view
	m.view, m.viewRev, m.viewSeen = v, rev, time.Now()
	close(m.changed)
	m.changed = make(chan struct{})
	coordinating := m.coord != nil
	m.mu.Unlock()
	if len(v.Members) > 0 && !slices.Equal(old.Members, v.Members) {
		if err := m.n.ring.set(v.Members); err != nil {
			m.n.log.Error("cluster: view", "node", m.n.opts.Name, "err", err)
		}
		m.n.log.Info("cluster: members", "node", m.n.opts.Name, "members", v.Members, "epoch", v.Epoch)
	}
	m.n.splitter.idle.Store(v.Idle && slices.Contains(v.Members, m.n.opts.Name))
	if coordinating && (v.Coordinator != m.n.opts.Name || v.CoordInc != m.inc) {
		m.stopCoordinating() // another node took over
	}
}

// maybeTakeOver becomes the coordinator when there is no view or the
// coordinator has not written it for a Lease.
func (m *membership) maybeTakeOver(ctx context.Context) {
	m.mu.Lock()
	if m.coord != nil || m.n.leaving.Load() || m.n.crashed.Load() {
		m.mu.Unlock()
		return
	}
	stale := m.viewRev == 0 || m.view.Coordinator == "" || time.Since(m.viewSeen) >= m.lease
	v, rev := m.view, m.viewRev
	m.mu.Unlock()
	if !stale {
		return
	}
	members := v.Members
	if !slices.Contains(members, m.n.opts.Name) {
		members = append(slices.Clone(members), m.n.opts.Name)
	}
	alive := len(v.Members) > 0 && (v.Coordinator == "" || time.Since(m.viewSeen) < 2*m.lease)
	config := m.config
	if alive && v.Config != "" {
		config = v.Config
	}
	if !alive {
		members = []string{m.n.opts.Name}
	}
	sort.Strings(members)
	nv := viewRecord{Epoch: v.Epoch + 1, Coordinator: m.n.opts.Name, CoordInc: m.inc, Config: config, Members: members}
	data, _ := json.Marshal(nv)
	var err error
	var nrev uint64
	if rev == 0 {
		nrev, err = m.kv.Create(ctx, "view", data)
		if errors.Is(err, jetstream.ErrKeyExists) {
			// A view from an earlier crawl: take it over by revision.
			if e, gerr := m.kv.Get(ctx, "view"); gerr == nil {
				nrev, err = m.kv.Update(ctx, "view", data, e.Revision())
			}
		}
	} else {
		nrev, err = m.kv.Update(ctx, "view", data, rev)
	}
	if err != nil {
		return // another node won, or NATS is away: try again later
	}
	m.puts.Add(1)
	m.n.log.Info("cluster: coordinating", "node", m.n.opts.Name, "epoch", nv.Epoch)
	m.setView(nv, nrev)
	cctx, cancel := context.WithCancel(context.Background())
	m.mu.Lock()
	m.coord = cancel
	m.mu.Unlock()
	m.n.wg.Add(1)
	go func() {
		defer m.n.wg.Done()
		m.coordinate(cctx)
	}()
}

func (m *membership) stopCoordinating() {
	m.mu.Lock()
	cancel := m.coord
	m.coord = nil
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// coordinate watches the member records, keeps the view (live members,
// idle) and drains the inboxes of nodes that are gone, until ctx ends or
// another node takes over.
func (m *membership) coordinate(ctx context.Context) {
	defer m.stopCoordinating()
	w, err := m.kv.Watch(ctx, "node.*")
	if err != nil {
		m.n.log.Error("cluster: watching members", "node", m.n.opts.Name, "err", err)
		return
	}
	defer w.Stop()
	type seen struct {
		rec memberRecord
		rev uint64
		at  time.Time
	}
	records := map[string]*seen{}
	start := time.Now()
	tick := time.NewTicker(m.n.opts.StatusInterval)
	defer tick.Stop()
	var prev round
	var lastWrite time.Time
	drains := map[string]context.CancelFunc{}
	defer func() {
		for _, c := range drains {
			c()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil {
				continue // the initial values are all in
			}
			name := strings.TrimPrefix(e.Key(), "node.")
			if e.Operation() != jetstream.KeyValuePut {
				delete(records, name)
				continue
			}
			var r memberRecord
			if json.Unmarshal(e.Value(), &r) != nil {
				continue
			}
			at := time.Now()
			if at.Sub(start) < m.lease && e.Created().Before(start) {
				// From before this coordinator: the node must prove it
				// is alive within a Lease, counted from now.
				at = start
			}
			records[name] = &seen{rec: r, rev: e.Revision(), at: at}
			continue
		case <-tick.C:
		}
		v, _ := m.current()
		if v.Coordinator != m.n.opts.Name || v.CoordInc != m.inc || m.n.crashed.Load() {
			return
		}
		now := time.Now()
		var live []string
		cur := round{quiet: true}
		for name, s := range records {
			if s.rec.Leaving || now.Sub(s.at) >= m.lease || s.rec.Config != v.Config {
				continue
			}
			live = append(live, name)
			if s.rec.Busy > 0 {
				cur.quiet = false
			}
			cur.received += s.rec.Recv
		}
		if !slices.Contains(live, m.n.opts.Name) {
			live = append(live, m.n.opts.Name) // this node is live while it coordinates
		}
		sort.Strings(live)
		bctx, cancel := context.WithTimeout(ctx, m.n.opts.RequestTimeout)
		bl, err := m.n.raw.Backlog(bctx)
		cancel()
		if err != nil || bl.Pending > 0 {
			cur.quiet = false
		}
		cur.published = bl.Published
		for node, pending := range bl.ByNode {
			if pending > 0 && !slices.Contains(live, node) && drains[node] == nil {
				dctx, dcancel := context.WithCancel(ctx)
				drains[node] = dcancel
				m.n.wg.Add(1)
				go func() {
					defer m.n.wg.Done()
					m.n.drain(dctx, node)
				}()
			}
		}
		for node, c := range drains {
			if bl.ByNode[node] == 0 || slices.Contains(live, node) {
				c()
				delete(drains, node)
			}
		}
		idle := prev.quiet && cur.quiet && prev.published == cur.published && prev.received == cur.received
		prev = cur
		if slices.Equal(live, v.Members) && idle == v.Idle && now.Sub(lastWrite) < m.beat {
			continue
		}
		nv := v
		nv.Members, nv.Idle = live, idle
		if !slices.Equal(live, v.Members) {
			nv.Epoch++
		}
		data, _ := json.Marshal(nv)
		m.mu.Lock()
		rev := m.viewRev
		m.mu.Unlock()
		uctx, cancel := context.WithTimeout(ctx, m.n.opts.RequestTimeout)
		nrev, err := m.kv.Update(uctx, "view", data, rev)
		cancel()
		if err != nil {
			if errors.Is(err, jetstream.ErrKeyExists) {
				return // another node took over
			}
			continue
		}
		m.puts.Add(1)
		lastWrite = now
		m.setView(nv, nrev)
	}
}

// leave deletes this node's record, so that the coordinator drops it from
// the view at its next round instead of a Lease later.
func (m *membership) leave(ctx context.Context) {
	st := m.n.memberStatus()
	st.Leaving = true
	if err := m.put(ctx, st, true); err != nil {
		m.n.log.Debug("cluster: farewell not stored", "node", m.n.opts.Name, "err", err)
	}
}

// remove deletes this node's record once it has left.
func (m *membership) remove(ctx context.Context) {
	_ = m.kv.Delete(ctx, "node."+m.n.opts.Name)
}

// resign, if this node coordinates, writes a view without it and without
// a coordinator, so that another member takes over at once.
func (m *membership) resign(ctx context.Context) {
	m.mu.Lock()
	coordinating := m.coord != nil
	v, rev := m.view, m.viewRev
	m.mu.Unlock()
	m.stopCoordinating()
	if !coordinating {
		return
	}
	v.Members = slices.DeleteFunc(slices.Clone(v.Members), func(s string) bool { return s == m.n.opts.Name })
	v.Coordinator, v.CoordInc, v.Idle = "", 0, false
	v.Epoch++
	data, _ := json.Marshal(v)
	if _, err := m.kv.Update(ctx, "view", data, rev); err == nil {
		m.puts.Add(1)
	}
}
