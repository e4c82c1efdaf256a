package pebbleseen_test

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
	"github.com/crawlkit/crawlkit/dedup/pebbleseen"
)

// sharedDB opens a Pebble database in memory, with bloom filters, closed
// when the test ends.
func sharedDB(t *testing.T) *pebble.DB {
	t.Helper()
	o := &pebble.Options{FS: vfs.NewMem()}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// TestSharedConformance runs the URLSeen suite on a Set in a database it
// shares with others.
func TestSharedConformance(t *testing.T) {
	deduptest.TestURLSeen(t, func(t *testing.T) dedup.URLSeen {
		s, err := pebbleseen.New(sharedDB(t), "s", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestSharedPrefixesAndBatches: two Sets in one database under different
// prefixes do not see each other's fingerprints; Contains adds nothing;
// AddTo's keys are there once the caller's batch is committed, and the
// database stays open after Close.
func TestSharedPrefixesAndBatches(t *testing.T) {
	ctx := context.Background()
	db := sharedDB(t)
	a, err := pebbleseen.New(db, "a", &pebbleseen.Options{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pebbleseen.New(db, "b", nil)
	if err != nil {
		t.Fatal(err)
	}
	fps := []uint64{1, 2, 3, 1 << 63}
	if got, err := a.Contains(ctx, nil, fps); err != nil || got[0] || got[3] {
		t.Fatalf("Contains on an empty set = %v, %v", got, err)
	}
	batch := db.NewBatch()
	if err := a.AddTo(batch, fps[:2]); err != nil {
		t.Fatal(err)
	}
	if err := batch.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		set  *pebbleseen.Set
		want []bool
	}{
		{a, []bool{true, true, false, false}},
		{b, []bool{false, false, false, false}},
	} {
		got, err := tc.set.Contains(ctx, nil, fps)
		if err != nil {
			t.Fatal(err)
		}
		for i := range fps {
			if got[i] != tc.want[i] {
				t.Errorf("Contains(%d) = %v, want %v", fps[i], got[i], tc.want[i])
			}
		}
	}
	if seen, err := b.TestAndAdd(ctx, 3); err != nil || seen {
		t.Fatalf("b.TestAndAdd(3) = %v, %v", seen, err)
	}
	if got, _ := a.Contains(ctx, nil, []uint64{3}); got[0] {
		t.Error("a sees b's fingerprint")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if seen, err := b.TestAndAdd(ctx, 3); err != nil || !seen {
		t.Errorf("after a.Close, b.TestAndAdd(3) = %v, %v: the shared database was closed", seen, err)
	}
	b.Close()
}
