// Package deduptest holds the conformance suites every dedup.URLSeen and
// dedup.ContentSeen implementation must pass, in the style of
// database/sql's driver tests: an implementation's own tests call
//
//	func TestConformance(t *testing.T) {
//		deduptest.TestURLSeen(t, func(t *testing.T) dedup.URLSeen { return dedup.NewSet(0) })
//	}
//
// # What the suites check
//
// The suites check the contract, not performance: atomic test-and-add
// under concurrency, batches with repeated fingerprints, the extreme
// fingerprint values, growth, cancelled contexts, and for ContentSeen the
// first-seen URL, normalisation, Forget and (if the implementation claims
// it) near-duplicates.
//
// # Durable content logs
//
// TestDurable is the suite of dedup.Durable (dedup.Content,
// dedup.ExactContent, cluster.Content's partition): each change one
// record in one Write, in the documented format; Replay of a whole log,
// of records the suite writes itself, of a log with a torn tail (no
// error, the length of the complete records) and of a damaged one
// (ErrCorrupt); Rewrite's compact log and the switch to it; write errors
// returned by the call that made the change:
//
//	deduptest.TestDurable(t, deduptest.DurableHarness{
//		New: func(*testing.T) deduptest.DurableContent { return new(dedup.ExactContent) },
//	})
//
// An implementation that keeps only a share of the fingerprints (a
// partition of a distributed set) says which in DurableHarness.Keeps.
package deduptest
