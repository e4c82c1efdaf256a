// Package statetest is the conformance suite of crawlkit.State and of
// crawlkit.BodySeen: every implementation (crawlkit.MemState, crawldb.DB,
// and yours) runs it from its tests, as database/sql drivers run their
// driver tests.
//
//	func TestConformance(t *testing.T) {
//		statetest.Run(t, statetest.Harness{
//			New: func(t *testing.T) crawlkit.State { return crawlkit.NewMemState() },
//		})
//	}
//
// # What Run checks
//
// The rules of State: a new State is empty; Add, Put and Done change the
// pending set and the URL-seen set as documented, key deltas add up, a
// nil Progress keeps the saved one; 20,000 pending URLs load back; Lookup
// runs concurrently with Commit; a reopened State (Harness.Reopen) has
// everything committed; a closed one refuses every call.
//
// Then the optional capabilities, each when the State implements it (the
// subtest skips otherwise, saying so):
//
//   - ContentStorer: ContentSeen and BodySeen return the same sets on
//     every call, the sets find what they recorded, and a reopened State
//     still knows it;
//   - QueueStorer: the store passes a quick Push, Pop, Defer, Due and
//     Scan check and starts empty on every call, whatever the last one
//     held, after a restart too; its caller closes it and the State works
//     on;
//   - ContactRecorder: a new State has no contacts; workers record theirs
//     at once, and a reopened State reports the latest of every worker,
//     with its At and Until.
//
// # BodySeen
//
// RunBodySeen checks a crawlkit.BodySeen (dedup.ExactContent, a
// ContentStorer's body set): the first URL of a fingerprint is kept and
// reported as known, Forget makes the fingerprint new again, and
// concurrent Records of one fingerprint make it new to exactly one of
// them.
package statetest
