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
