package statetest_test

import (
	"context"
	"fmt"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/frontier"
)

// Example shows the semantics the suite checks, on MemState: a Txn adds
// URLs to the URL-seen and pending sets, Done takes one out of the
// pending set only, and key records add up.
func Example() {
	ctx := context.Background()
	s := crawlkit.NewMemState()
	defer s.Close()
	s.Commit(ctx, &crawlkit.Txn{
		Add:  []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/"}}, {URL: frontier.URL{URL: "http://a.test/b"}}},
		Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 2}},
	})
	s.Commit(ctx, &crawlkit.Txn{Done: []string{"http://a.test/"}})
	q := &crawlkit.Lookup{
		URLs:    []uint64{dedup.Fingerprint("http://a.test/"), dedup.Fingerprint("http://c.test/")},
		Keys:    []string{"h:a.test"},
		Pending: []string{"http://a.test/", "http://a.test/b"},
	}
	if err := s.Lookup(ctx, q); err != nil {
		panic(err)
	}
	fmt.Println("seen:", q.Seen)
	fmt.Println("pending:", q.Found)
	fmt.Println("admitted under a.test:", q.Records[0].Admitted)
	// Output:
	// seen: [true false]
	// pending: [false true]
	// admitted under a.test: 2
}
