// Package diskq keeps a frontier's queues on disk, in Pebble
// (github.com/cockroachdb/pebble/v2), with only each queue's head and
// tail in memory: as IIR §20.2.3 puts it, "a portion of each queue is
// kept in memory, with more brought in from disk as it is drained".
// Memory stays bounded by the number of queues however many URLs the
// frontier holds. It is a separate package so that the in-memory
// frontier never links Pebble.
//
// # Usage
//
// Store implements frontier.DurableStore; NewMercator and NewFIFO wrap it
// in a frontier:
//
//	f, err := diskq.NewMercator("/var/crawl/frontier", &frontier.Options{Workers: 64}, nil)
//	if err != nil {
//		return err
//	}
//	defer f.Close() // writes everything out; reopening the directory resumes
//
// # Durability
//
// Close writes everything, and pushes URLs still leased back to their
// queue, so reopening the directory resumes the crawl exactly: every queued
// URL is still queued, leased ones are queued again, revisits keep their
// due time. frontier.Syncer's Sync (Mercator.Sync, FIFO.Sync) makes the
// state durable during the crawl, leases included, for recovery after a
// crash; see Store for what a crash can lose. Mercator.Checkpoint writes a
// portable stream as with any store.
//
// # Layout
//
// One key per URL: queue entries under 'q' + queue + sequence number,
// revisits under 'd' + due time + sequence number, leases of the last Sync
// under 'l'. Consumed heads are deleted when the next head is read.
package diskq
