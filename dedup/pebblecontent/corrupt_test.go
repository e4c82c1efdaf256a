package pebblecontent_test

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
	"github.com/crawlkit/crawlkit/dedup/pebblecontent"
)

// TestCorrupt damages the values of a store (through the database it
// shares) and checks that every operation reading them fails with a
// *dedup.Error wrapping ErrCorrupt, without panicking, and that Forget
// clears a damaged record.
func TestCorrupt(t *testing.T) {
	ctx := context.Background()
	page := []byte(deduptest.Text(9, 200))
	words := strings.Fields(string(page))
	words[100] = "changed"
	near := []byte(strings.Join(words, " "))

	docKey := func(fp uint64) []byte { return binary.BigEndian.AppendUint64([]byte("p/d"), fp) }
	// bucketKeys returns the store's bucket keys holding fp.
	bucketKeys := func(t *testing.T, db *pebble.DB, fp uint64) [][]byte {
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte("p/b"), UpperBound: []byte("p/c")})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		var keys [][]byte
		for it.First(); it.Valid(); it.Next() {
			if len(it.Value()) == 8 && binary.BigEndian.Uint64(it.Value()) == fp {
				keys = append(keys, append([]byte(nil), it.Key()...))
			}
		}
		return keys
	}
	damaged := [][]byte{
		nil,
		{0},
		{2, 0},                             // unknown version
		{1},                                // no URL length
		{1, 0x80},                          // unterminated uvarint
		{1, 0x80, 0x00},                    // non-minimal uvarint
		{1, 10, 'h'},                       // URL longer than the value
		append([]byte{1, 1, 'u'}, 1, 2, 3), // signature of the wrong length
	}
	for _, v := range damaged {
		t.Run("record", func(t *testing.T) {
			db := memDB(t)
			c, err := pebblecontent.New(db, "p/", &pebblecontent.Options{SyncInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			m, err := c.Seen(ctx, dedup.Doc{URL: "http://a.test/", Text: page})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Set(docKey(m.Fingerprint), v, pebble.NoSync); err != nil {
				t.Fatal(err)
			}
			wantCorrupt := func(op string, err error) {
				t.Helper()
				var e *dedup.Error
				if !errors.As(err, &e) || e.Op != op || !errors.Is(err, pebblecontent.ErrCorrupt) {
					t.Fatalf("%s with value %x: %v", op, v, err)
				}
			}
			_, err = c.Seen(ctx, dedup.Doc{URL: "http://b.test/", Text: page}) // exact lookup
			wantCorrupt("Seen", err)
			_, err = c.Seen(ctx, dedup.Doc{URL: "http://b.test/", Text: near}) // candidate
			if len(v) >= 3 && v[0] == 1 && v[1] == 1 {                         // a readable URL, a bad signature
				wantCorrupt("Seen", err)
			} else if err == nil {
				t.Fatalf("near-duplicate of a damaged record: no error")
			}
			_, _, err = c.Record(m.Fingerprint, "http://c.test/")
			wantCorrupt("Record", err)
			wantCorrupt("Forget", c.Forget(ctx, m.Fingerprint))
			// The damaged record is gone; its bucket entries stay and are
			// skipped.
			if m, err := c.Seen(ctx, dedup.Doc{URL: "http://d.test/", Text: near}); err != nil || m.Seen {
				t.Fatalf("after Forget of the damaged record: %+v, %v", m, err)
			}
		})
	}
	t.Run("bucket", func(t *testing.T) {
		db := memDB(t)
		c, err := pebblecontent.New(db, "p/", &pebblecontent.Options{SyncInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		m, err := c.Seen(ctx, dedup.Doc{URL: "http://a.test/", Text: page})
		if err != nil {
			t.Fatal(err)
		}
		keys := bucketKeys(t, db, m.Fingerprint)
		if len(keys) != 14 {
			t.Fatalf("%d bucket entries, want 14", len(keys))
		}
		for _, k := range keys {
			if err := db.Set(k, []byte{1, 2, 3}, pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Seen(ctx, dedup.Doc{URL: "http://b.test/", Text: near}); !errors.Is(err, pebblecontent.ErrCorrupt) {
			t.Fatalf("Seen with damaged buckets: %v", err)
		}
		if err := c.Forget(ctx, m.Fingerprint); !errors.Is(err, pebblecontent.ErrCorrupt) {
			t.Fatalf("Forget with damaged buckets: %v", err)
		}
	})
	t.Run("meta", func(t *testing.T) {
		db := memDB(t)
		if err := db.Set([]byte("p/m"), []byte{1, 'n', 0x80}, pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		var e *dedup.Error
		if _, err := pebblecontent.New(db, "p/", nil); !errors.As(err, &e) || e.Op != "New" || !errors.Is(err, pebblecontent.ErrCorrupt) {
			t.Fatalf("New with damaged meta: %v", err)
		}
	})
}
