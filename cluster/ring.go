package cluster

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// DefaultShards is the default number of virtual shards hosts and
// fingerprints hash to.
const DefaultShards = 1024

// Ring assigns keys to nodes in two steps: a key (a host name, a content
// fingerprint) hashes to one of a fixed number of virtual shards, and each
// shard belongs to the node with the highest rendezvous (highest random
// weight) score for it. Adding a node moves to it exactly the shards it
// now wins, about 1/(n+1) of them, and no shard moves between old nodes;
// removing one moves only its own shards. A Ring from NewRing never
// changes; the Ring of a Node with membership (Options.Lease) follows the
// live members, and every method reads one consistent assignment. Safe
// for concurrent use; Owner costs one xxhash of the key, an atomic load
// and a table lookup.
type Ring struct {
	shards int
	t      atomic.Pointer[ringTable]
}

// ringTable is one assignment of shards to nodes.
type ringTable struct {
	nodes []string
	owner []uint16 // shard → index into nodes
}

// NewRing returns the ring of nodes (distinct, non-empty names; at most
// 65535) over shards virtual shards (0 means DefaultShards).
func NewRing(nodes []string, shards int) (*Ring, error) {
	if shards <= 0 {
		shards = DefaultShards
	}
	t, err := newRingTable(nodes, shards)
	if err != nil {
		return nil, err
	}
	r := &Ring{shards: shards}
	r.t.Store(t)
	return r, nil
}

// set replaces the assignment by that of nodes.
func (r *Ring) set(nodes []string) error {
	t, err := newRingTable(nodes, r.shards)
	if err != nil {
		return err
	}
	r.t.Store(t)
	return nil
}

func newRingTable(nodes []string, shards int) (*ringTable, error) {
	if len(nodes) == 0 || len(nodes) > 65535 {
		return nil, &Error{Op: "ring", Err: fmt.Errorf("%d nodes", len(nodes))}
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if n == "" || seen[n] {
			return nil, &Error{Op: "ring", Subject: fmt.Sprintf("%q", n), Err: fmt.Errorf("empty or repeated node name")}
		}
		seen[n] = true
	}
	r := &ringTable{nodes: slices.Clone(nodes), owner: make([]uint16, shards)}
	for s := range r.owner {
		best, bestScore := 0, uint64(0)
		for i, n := range r.nodes {
			if sc := score(n, s); i == 0 || sc > bestScore {
				best, bestScore = i, sc
			}
		}
		r.owner[s] = uint16(best)
	}
	return r, nil
}

// score is node's rendezvous score for shard s.
func score(node string, s int) uint64 {
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(s))
	d := xxhash.New()
	d.WriteString(node)
	d.Write(buf[:])
	return d.Sum64()
}

// Nodes returns the node names in the order given to NewRing (for a
// Ring that follows membership: the live members, sorted).
func (r *Ring) Nodes() []string { return slices.Clone(r.t.Load().nodes) }

// Shards returns the number of virtual shards.
func (r *Ring) Shards() int { return r.shards }

// HostShard returns the virtual shard of a host name.
func (r *Ring) HostShard(host string) int {
	return int(xxhash.Sum64String(host) % uint64(r.shards))
}

// ShardOwner returns the node that owns shard s (0 ≤ s < Shards()).
func (r *Ring) ShardOwner(s int) string {
	t := r.t.Load()
	return t.nodes[t.owner[s]]
}

// HostOwner returns the node that crawls host.
func (r *Ring) HostOwner(host string) string { return r.ShardOwner(r.HostShard(host)) }

// FingerprintOwner returns the node that keeps content fingerprint fp.
// Fingerprints are already uniform hashes, so the shard is fp's remainder
// after mixing (a different mixing from hosts', so the two partitions are
// independent).
func (r *Ring) FingerprintOwner(fp uint64) string {
	return r.ShardOwner(r.FingerprintShard(fp))
}

// FingerprintShard returns the virtual shard of content fingerprint fp.
func (r *Ring) FingerprintShard(fp uint64) int {
	fp ^= fp >> 33
	fp *= 0xff51afd7ed558ccd
	fp ^= fp >> 33
	return int(fp % uint64(r.shards))
}
