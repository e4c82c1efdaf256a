package index

import (
	"net/url"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Partitioner assigns a document, by URL, to one of n shards (0 ≤ result <
// n). It must be deterministic, so that re-adding a URL reaches the shard
// holding the old version.
type Partitioner func(url string, n int) int

// ByURL partitions by a hash (xxhash64) of the whole URL: the book's
// recommendation, spreading every query's work uniformly over the shards.
func ByURL(u string, n int) int {
	if n <= 1 {
		return 0
	}
	return int(xxhash.Sum64String(u) % uint64(n))
}

// ByHost partitions by a hash of the URL's lowercased host, keeping a site on
// one shard like the crawler's host splitter does. The book warns that the
// results of many queries then come from few shards. A URL without a host
// is partitioned like ByURL.
func ByHost(u string, n int) int {
	if n <= 1 {
		return 0
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return ByURL(u, n)
	}
	return int(xxhash.Sum64String(strings.ToLower(p.Hostname())) % uint64(n))
}

// Router writes documents to a fixed set of local shards, each document to
// the shard its Partitioner picks, so that a Broker over the shards
// (Searchers) serves a document-partitioned index. The zero Partition is
// ByURL. Safe for concurrent use (the shards are); the fields must not
// change after the first call.
type Router struct {
	Shards    []*Shard
	Partition Partitioner // nil means ByURL
}

// NewRouter returns a Router over n new shards built with opts, as
// NewShard builds them: opts may be nil for every default, and is copied.
func NewRouter(n int, part Partitioner, opts *ShardOptions) *Router {
	r := &Router{Partition: part}
	for range max(n, 1) {
		r.Shards = append(r.Shards, NewShard(opts))
	}
	return r
}

func (r *Router) shard(url string) *Shard {
	p := r.Partition
	if p == nil {
		p = ByURL
	}
	return r.Shards[p(url, len(r.Shards))]
}

// Add indexes d in its shard, replacing an earlier version there.
func (r *Router) Add(d Document) (replaced bool, err error) {
	if d.URL == "" {
		return false, &Error{Op: "add", Err: ErrNoURL}
	}
	return r.shard(d.URL).Add(d)
}

// Delete removes the document with the given URL from its shard.
func (r *Router) Delete(url string) bool { return r.shard(url).Delete(url) }

// Searchers returns the shards as Searchers, for BrokerOptions.Shards.
func (r *Router) Searchers() []Searcher {
	s := make([]Searcher, len(r.Shards))
	for i, sh := range r.Shards {
		s[i] = sh
	}
	return s
}
