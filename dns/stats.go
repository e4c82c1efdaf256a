package dns

import (
	"errors"
	"math/bits"
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a Caching resolver's counters since New.
type Stats struct {
	Hits         uint64 // lookups answered with addresses from the cache
	NegativeHits uint64 // lookups answered "not found" from the cache
	Misses       uint64 // lookups (and prefetches) that started a resolution
	Shared       uint64 // lookups that joined a resolution in flight
	Local        uint64 // IP literals and localhost names answered locally
	Prefetches   uint64 // resolutions started by Prefetch (also in Misses)

	Resolved uint64 // resolutions that found addresses
	NotFound uint64 // resolutions that ended in NotFound
	Failures uint64 // resolutions that ended in any other error

	Queries      uint64 // queries sent over UDP (A and AAAA count apart)
	Retries      uint64 // queries that were not the first for their name and type
	Timeouts     uint64 // queries that got no answer within their wait
	TCPFallbacks uint64 // truncated UDP answers asked again over TCP
	// LateReads counts answers that had come within their query's wait
	// and were handed over after it, by a socket reader that was behind:
	// the machine's cores were all busy. They were taken without asking
	// again (see the package doc); a rising rate says the crawler needs
	// more CPU than it has.
	LateReads uint64

	Evictions uint64 // cache entries dropped by the size bound
	Entries   int    // names cached now (expired ones until replaced or evicted)
	InFlight  int    // resolutions in progress

	// Latency describes the time resolutions took (cache hits excluded).
	Latency Latency
}

// Latency summarizes a distribution of durations. Percentiles are read
// from a histogram with power-of-two buckets (1 µs, 2 µs, 4 µs, ...): each
// is the upper bound of its bucket, so at most twice the true value.
type Latency struct {
	Count         uint64
	Mean, Max     time.Duration
	P50, P90, P99 time.Duration
}

// HitRate returns the share of cache lookups answered from the cache,
// negative answers included, or 0 before the first lookup.
func (s Stats) HitRate() float64 {
	hits := s.Hits + s.NegativeHits
	total := hits + s.Misses - s.Prefetches + s.Shared
	if total == 0 {
		return 0
	}
	return float64(hits) / float64(total)
}

const latencyBuckets = 40 // 2^39 µs ≈ 6 days

type counters struct {
	local, prefetches               atomic.Uint64
	resolved, notFound, failures    atomic.Uint64
	queries, retries, timeouts, tcp atomic.Uint64
	lateReads                       atomic.Uint64
	latCount, latSum, latMax        atomic.Uint64 // ns
	latBuckets                      [latencyBuckets]atomic.Uint64
}

// observe records the outcome of one resolution.
func (c *counters) observe(d time.Duration, err error) {
	switch {
	case err == nil:
		c.resolved.Add(1)
	case errors.Is(err, NotFound):
		c.notFound.Add(1)
	default:
		c.failures.Add(1)
	}
	ns := uint64(max(d, 0))
	c.latCount.Add(1)
	c.latSum.Add(ns)
	for {
		old := c.latMax.Load()
		if ns <= old || c.latMax.CompareAndSwap(old, ns) {
			break
		}
	}
	c.latBuckets[bucket(d)].Add(1)
}

// bucket returns the histogram bucket of d: b holds durations up to 2^b µs.
func bucket(d time.Duration) int {
	us := uint64(max(d, 0)) / 1000
	if us == 0 {
		return 0
	}
	return min(bits.Len64(us-1), latencyBuckets-1)
}

// Stats returns a snapshot of the counters. It locks each cache shard
// briefly; cost O(shards).
func (c *Caching) Stats() Stats {
	var s Stats
	for i := range c.cache.shards {
		sh := &c.cache.shards[i]
		sh.mu.Lock()
		s.Hits += sh.hits
		s.NegativeHits += sh.negHits
		s.Misses += sh.misses
		s.Shared += sh.shared
		s.Evictions += sh.evictions
		s.Entries += len(sh.entries)
		s.InFlight += len(sh.flights)
		sh.mu.Unlock()
	}
	k := &c.stats
	s.Local = k.local.Load()
	s.Prefetches = k.prefetches.Load()
	s.Resolved = k.resolved.Load()
	s.NotFound = k.notFound.Load()
	s.Failures = k.failures.Load()
	s.Queries = k.queries.Load()
	s.Retries = k.retries.Load()
	s.Timeouts = k.timeouts.Load()
	s.TCPFallbacks = k.tcp.Load()
	s.LateReads = k.lateReads.Load()

	l := &s.Latency
	l.Count = k.latCount.Load()
	if l.Count > 0 {
		l.Mean = time.Duration(k.latSum.Load() / l.Count)
	}
	l.Max = time.Duration(k.latMax.Load())
	var counts [latencyBuckets]uint64
	var total uint64
	for i := range counts {
		counts[i] = k.latBuckets[i].Load()
		total += counts[i]
	}
	l.P50 = percentile(&counts, total, 0.50)
	l.P90 = percentile(&counts, total, 0.90)
	l.P99 = percentile(&counts, total, 0.99)
	return s
}

func percentile(counts *[latencyBuckets]uint64, total uint64, p float64) time.Duration {
	if total == 0 {
		return 0
	}
	rank := uint64(p*float64(total) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for b, n := range counts {
		seen += n
		if seen >= rank {
			return time.Duration(uint64(1)<<b) * time.Microsecond
		}
	}
	return time.Duration(uint64(1)<<(latencyBuckets-1)) * time.Microsecond
}
