// Package crawldb keeps a crawl's state on disk: the URLs still to fetch,
// the URL-seen set, a record per host and per registrable domain (URLs
// admitted, next contact), the content-seen sets and the crawl's progress,
// in one Pebble database (github.com/cockroachdb/pebble/v2). It is the
// durable crawlkit.State: a crawl killed at any instant resumes from its
// last committed page, with its sinks cut back to match, and memory stays
// bounded however many URLs the crawl holds (IIR §20.2.3: "the frontier
// may grow to the point where it exceeds the memory of a single machine").
//
//	db, err := crawldb.Open("crawl/state", nil)
//	if err != nil {
//		return err
//	}
//	defer db.Close()
//	c, err := crawlkit.New(crawlkit.Config{Seeds: seeds, State: db, Sinks: sinks})
//	...
//	stats, err := c.Run(ctx) // a second Run on a new Crawler resumes
//
// # What is where
//
//	db/                 Pebble: pending URLs ('p' + URL fingerprint), the
//	                    URL-seen set (package pebbleseen, 's'), host and
//	                    domain records ('k' + key), the content sets
//	                    (package pebblecontent, 'c' and 'b'), the progress
//	commits-N.log       the commit log since the last sync
//	queue/              the frontier's queues (package frontier/diskq),
//	                    rebuilt from the pending URLs at every Run
//	crawl.lock          held while a process has the state open
//
// # Durability
//
// Commit appends the Txn to the commit log with one write system call and
// then applies it to Pebble in one batch. The operating system keeps what
// a write handed it when the process is killed, and Open replays the log
// records Pebble lacks, so a Txn whose Commit returned is never lost to a
// kill, and a Txn is applied whole or not at all. Every SyncInterval
// (default 1 s) the log and Pebble are synced to disk, which bounds what
// an operating-system crash or power failure can take to the Txns of the
// last interval. (Pebble's own log keeps unsynced commits in a 32 KiB
// buffer of the process, so it alone would lose the last commits to a
// kill; an fsync per page costs about a millisecond, which would cap the
// crawl at a thousand pages a second.)
//
// # Memory
//
// Pebble's memtables (Options.MemTableSize, up to two at once) and block
// cache (Options.CacheSize), the URL fingerprint cache
// (Options.SeenCacheEntries), and the queue store's memtables and queue
// heads and tails: about 100 MiB with the defaults, whatever the size of
// the crawl.
package crawldb
