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
package deduptest
