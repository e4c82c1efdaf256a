// Package pebblecontent is a dedup.ContentSeen kept on disk in a Pebble
// database: the "content seen?" test of the crawl loop (IIR §20.2.1,
// near-duplicates by MinHash and LSH, §19.6) with memory bounded
// whatever the number of documents, for crawls whose dedup.Content
// (about 1.9 KB of heap per document) would outgrow their memory, and
// which must survive a restart.
//
// Content answers as dedup.Content does: exact duplicates by
// dedup.TextFingerprint, near-duplicates by MinHash signatures of
// 4-word shingles (K=128) whose LSH candidates (14 bands of 9 rows)
// reach an estimated Jaccard similarity of 0.8, the same defaults and,
// with full signatures (Options.Bits 64), the same Match on every call.
// With Options.ExactOnly it is dedup.ExactContent's replacement; Record
// takes the fingerprints of bodies without text (images, PDFs) in
// either mode.
//
// # Example
//
//	c, err := pebblecontent.Open(dir, nil)
//	if err != nil { ... }
//	defer c.Close()
//	m, err := c.Seen(ctx, dedup.Doc{URL: pageURL, Text: text})
//	if m.Seen {
//		log.Printf("%s duplicates %s (J≈%.2f)", pageURL, m.URL, m.Similarity)
//	}
//	first, known, err := c.Record(xxhash.Sum64(body), imageURL) // an image
//
// # Key layout
//
// Every key starts with the store's prefix P (empty with Open):
//
//	P 'm'                              → the options the store was created with
//	P 'd' fp(8)                        → version, URL (uvarint length), packed signature
//	P 'b' band(2) hash(8) slot(4)      → fp(8), one member of an LSH bucket
//
// (big-endian integers). A document is one record and one bucket entry
// per band. A bucket keeps its members in dense slots from 0 (Forget
// moves the last member into the freed slot), so that "is this bucket
// empty?", the question almost every lookup of a new document asks, is a
// point lookup of slot 0 that the bloom filters answer without reading a
// block, with any key comparer; only non-empty buckets are read further
// (slots 1 to 3 by point lookups, the rest by a scan). Lookups use the
// bloom filters of every level, the last one included, which DB.Get
// skips.
//
// # Signatures
//
// A signature is stored b-bit (Li & König 2010): Options.Bits of each
// value, 8 by default, 128 bytes at K=128 instead of 1 KiB. Bands are
// hashed from the stored bits, so Forget finds a document's buckets from
// its record; at 8 bits a band of 9 rows still has 72 bits. Measured on
// near-duplicate pairs cut from real pages (BenchmarkRecall, 1000 pairs a
// range; BenchmarkSketchTradeoff for other b and K), the share of pairs
// reported as near-duplicates:
//
//	exact Jaccard      dedup.Content  Bits 8  Bits 16  Bits 64
//	0.85–0.95          99.6%          99.6%   99.6%    99.6%
//	0.80–0.85          82.1%          82.7%   82.1%    82.1%
//	0.75–0.80          31.0%          32.3%   31.0%    31.0%
//	0.60–0.75           1.9%           2.1%    1.9%     1.9%
//
// Bits 8 keeps recall and adds about a point of matches just below the
// threshold; fewer bits, or K=64, lose recall (K=64 at any b: 97.5% in
// 0.85–0.95).
//
// # Memory
//
// What the store holds in memory does not grow with the number of
// documents: Pebble's block cache, which Pebble also charges its
// memtables to (Options.BlockCacheBytes, 32 MiB, and MemTableBytes,
// 4 MiB: at most about 36 MiB with the defaults), Pebble's metadata of
// its tables (a few KiB per 4 MiB table), and each call's scratch (O(K)
// plus the text's words). BenchmarkMemory records 200,000 documents: the
// Go heap stayed at 2.3–2.9 MiB from 50,000 to 200,000 documents while
// Pebble's memory filled its cache (9 to 28 MiB, never beyond its
// bound), where dedup.Content's heap grew from 90 MiB to 356 MiB,
// 1.9 KB per document. MemoryBytes reports Pebble's part.
//
// Lookups stay in memory as long as the bloom filters and indexes (about
// 22 bytes per document) fit in the block cache: about a million
// documents with the defaults. Beyond, a new document costs a few reads
// of filter blocks, from the operating system's page cache if it has
// room, and memory still does not grow. On disk, a document takes about
// 600 bytes.
//
// # Throughput
//
// Measured on two shared cores of an AMD EPYC (BenchmarkSeen,
// BenchmarkSeenParallel; medians of five runs), Seen handles about
// 23,000 new page-length documents (1000 words) a second, against
// 47,000 for dedup.Content: shingling is the same, and the store adds a
// point lookup per band and a commit of 15 keys, plus the compactions
// they cause. Exact duplicates cost what they cost dedup.Content
// (57,000/s against 63,000/s); near-duplicates twice as much (25,000/s
// against 58,000/s: two lookups per matching band). More goroutines do
// not add throughput there (22,000/s with 2 or 4), the lookups and the
// commit being under the lock and compactions taking the other core.
// With Sync every new document waits for an fsync, which concurrent
// callers share: 4,900/s with one goroutine, 11,700/s with four.
//
// # Durability
//
// Every change (a recorded document, a Record, a Forget) is one atomic
// Pebble batch, committed before the call returns: a crash never leaves
// a document half recorded. With Options.Sync, the call also waits for
// the write-ahead log to be synced to disk (concurrent callers share the
// fsync): nothing acknowledged is lost, even to a power failure.
//
// Without it (the default), commits are not synced, and Pebble leaves an
// unsynced commit's log record in a 32 KiB buffer of the process until
// the buffer fills or someone syncs: a process killed with SIGKILL loses
// the records in that buffer (TestKill: 58 of 300 documents). So a
// background goroutine syncs the log Options.SyncInterval (100ms) after
// the first change since the last sync: a kill of the process, or a
// crash of the machine, loses at most the changes of the last 100ms —
// documents that will not be recognised as duplicates, or forgotten
// ones that will still be. Sync syncs at once; Close syncs and, for a
// store from Open, closes the database.
//
// # Sharing a database
//
// New keeps the store in an existing database under a key prefix, so
// that the crawler's state shares one write-ahead log and one block
// cache; several stores (say, one for pages and one ExactOnly for
// images) can share one database under different prefixes. The database
// must use Pebble's default comparer (or one whose Split keeps these keys
// whole); for the costs above it should have bloom filters on every
// level and tables of at most a few MiB, as Open configures them.
//
// # Concurrency
//
// Content is safe for concurrent use. One lock is held over each
// lookup and the insert that follows it, as in dedup.Content, so among
// concurrent calls with the same or near-identical content exactly one
// records it; shingling, most of a call's CPU time, happens outside it.
package pebblecontent
