// Package pebbleseen is a dedup.URLSeen kept on disk in a Pebble
// database, for crawls whose URL set outgrows memory or must survive a
// restart (Mercator keeps its URL set on disk with an in-memory cache of
// popular URLs; IIR §20.2.1).
//
// Each fingerprint is a key (8 bytes, big-endian) with an empty value;
// Pebble's bloom filters let most lookups of new URLs skip disk reads.
// Memory is bounded: a direct-mapped cache of recently seen
// fingerprints (Options.CacheEntries × 8 bytes), Pebble's block cache and
// its memtables.
//
// # Example
//
//	set, err := pebbleseen.Open(dir, nil)
//	if err != nil { ... }
//	defer set.Close()
//	seen, err := set.TestAndAdd(ctx, dedup.Fingerprint(canonicalURL))
//
// # Memory and durability
//
// Memory stays bounded whatever the number of URLs: the cache
// (Options.CacheEntries), Pebble's block cache (Options.BlockCacheBytes)
// and at most two memtables (Options.MemTableBytes), about 24 MiB with
// the defaults. Additions reach Pebble's write-ahead log before
// TestAndAdd returns, so they survive a crash of the process; with
// Options.Sync they also survive one of the machine.
//
// The database is owned by one process at a time (Pebble locks the
// directory).
package pebbleseen
