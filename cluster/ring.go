package cluster

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// DefaultShards is the default number of virtual shards hosts and
// fingerprints hash to.
const DefaultShards = 1024

// Ring assigns keys to nodes in two steps: a key (a host name, a content
// fingerprint) hashes to one of a fixed number of virtual shards, and each
// shard belongs to the node with the highest rendezvous (highest random
// weight) score for it. Adding a node moves to it exactly the shards it
// now wins, about 1/(n+1) of them, and no shard moves between old nodes.
// A Ring is immutable and safe for concurrent use; Owner costs one xxhash
// of the key and a table lookup.
type Ring struct {
	nodes []string
	owner []uint16 // shard → index into nodes
}

// NewRing returns the ring of nodes (distinct, non-empty names; at most
// 65535) over shards virtual shards (0 means DefaultShards).
func NewRing(nodes []string, shards int) (*Ring, error) {
	if shards <= 0 {
		shards = DefaultShards
	}
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
	r := &Ring{nodes: slices.Clone(nodes), owner: make([]uint16, shards)}
	var buf [8]byte
	for s := range r.owner {
		best, bestScore := 0, uint64(0)
		binary.LittleEndian.PutUint64(buf[:], uint64(s))
		for i, n := range r.nodes {
			d := xxhash.New()
			d.WriteString(n)
			d.Write(buf[:])
			if sc := d.Sum64(); i == 0 || sc > bestScore {
				best, bestScore = i, sc
			}
		}
		r.owner[s] = uint16(best)
	}
	return r, nil
}

// Nodes returns the node names in the order given to NewRing.
func (r *Ring) Nodes() []string { return slices.Clone(r.nodes) }

// Shards returns the number of virtual shards.
func (r *Ring) Shards() int { return len(r.owner) }

// HostShard returns the virtual shard of a host name.
func (r *Ring) HostShard(host string) int {
	return int(xxhash.Sum64String(host) % uint64(len(r.owner)))
}

// ShardOwner returns the node that owns shard s (0 ≤ s < Shards()).
func (r *Ring) ShardOwner(s int) string { return r.nodes[r.owner[s]] }

// HostOwner returns the node that crawls host.
func (r *Ring) HostOwner(host string) string { return r.ShardOwner(r.HostShard(host)) }

// FingerprintOwner returns the node that keeps content fingerprint fp.
// Fingerprints are already uniform hashes, so the shard is fp's remainder
// after mixing (a different mixing from hosts', so the two partitions are
// independent).
func (r *Ring) FingerprintOwner(fp uint64) string {
	fp ^= fp >> 33
	fp *= 0xff51afd7ed558ccd
	fp ^= fp >> 33
	return r.ShardOwner(int(fp % uint64(len(r.owner))))
}
