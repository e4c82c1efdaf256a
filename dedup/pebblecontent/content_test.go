package pebblecontent_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
	"github.com/crawlkit/crawlkit/dedup/pebblecontent"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t testing.TB, dir string, o *pebblecontent.Options) *pebblecontent.Content {
	t.Helper()
	c, err := pebblecontent.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func closeOnCleanup(t testing.TB, c *pebblecontent.Content) {
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
}

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps deduptest.ContentCaps
		opts pebblecontent.Options
	}{
		{"disk", deduptest.ContentCaps{Near: true}, pebblecontent.Options{}},
		{"mem/bits=16", deduptest.ContentCaps{Near: true}, pebblecontent.Options{FS: vfs.NewMem(), Bits: 16}},
		{"mem/bits=64/sync", deduptest.ContentCaps{Near: true}, pebblecontent.Options{FS: vfs.NewMem(), Bits: 64, Sync: true}},
		{"mem/exact", deduptest.ContentCaps{}, pebblecontent.Options{FS: vfs.NewMem(), ExactOnly: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deduptest.TestContentSeen(t, tc.caps, func(t *testing.T) dedup.ContentSeen {
				o := tc.opts
				if o.FS != nil {
					o.FS = vfs.NewMem()
				}
				c := open(t, t.TempDir(), &o)
				closeOnCleanup(t, c)
				return c
			})
		})
	}
}

// TestSharedConformance runs the suite on stores sharing one database
// under different prefixes, with a third user's keys around them.
func TestSharedConformance(t *testing.T) {
	db := memDB(t)
	for _, k := range []string{"a", "c", "c\xff", "d", "z"} { // around and inside the prefixes' ranges
		if err := db.Set([]byte(k), []byte("other"), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, caps := range []deduptest.ContentCaps{{Near: true}, {}} {
		t.Run(fmt.Sprintf("near=%v", caps.Near), func(t *testing.T) {
			deduptest.TestContentSeen(t, caps, func(t *testing.T) dedup.ContentSeen {
				n++
				c, err := pebblecontent.New(db, fmt.Sprintf("c/%d/", n), &pebblecontent.Options{ExactOnly: !caps.Near})
				if err != nil {
					t.Fatal(err)
				}
				closeOnCleanup(t, c)
				return c
			})
		})
	}
	for _, k := range []string{"a", "c", "c\xff", "d", "z"} {
		if v, closer, err := db.Get([]byte(k)); err != nil || string(v) != "other" {
			t.Fatalf("another user's key %q: %q, %v", k, v, err)
		} else {
			closer.Close()
		}
	}
}

// memDB returns a database in memory, closed by t's cleanup, for the
// stores of New.
func memDB(t testing.TB) *pebble.DB {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem(), Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOptionsErrors(t *testing.T) {
	db := memDB(t)
	for _, tc := range []struct {
		name   string
		prefix string
		opts   pebblecontent.Options
	}{
		{"bits", "p", pebblecontent.Options{Bits: 4}},
		{"threshold", "p", pebblecontent.Options{Threshold: 1.5}},
		{"K", "p", pebblecontent.Options{Sketch: shingleOpts(-1)}},
		{"banding", "p", pebblecontent.Options{LSH: lshOpts(100, 9)}},
		{"LSH seed", "p", pebblecontent.Options{LSH: lshSeed(3)}},
		{"cache", "p", pebblecontent.Options{BlockCacheBytes: 1 << 20}},
		{"FS", "p", pebblecontent.Options{FS: vfs.NewMem()}},
		{"no prefix", "", pebblecontent.Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pebblecontent.New(db, tc.prefix, &tc.opts)
			var e *dedup.Error
			if !errors.As(err, &e) || e.Op != "New" || !errors.Is(err, pebblecontent.ErrInvalidOptions) {
				t.Fatalf("New: %v", err)
			}
		})
	}
	if _, err := pebblecontent.Open(t.TempDir(), &pebblecontent.Options{BlockCacheBytes: -1}); !errors.Is(err, pebblecontent.ErrInvalidOptions) {
		t.Fatalf("Open with a negative cache: %v", err)
	}
	dir := t.TempDir()
	c := open(t, dir, nil)
	defer c.Close()
	if _, err := pebblecontent.Open(dir, nil); err == nil { // directory locked
		t.Fatal("second Open of a locked directory succeeded")
	}
}

// TestMismatch reopens stores with options that would make their
// signatures or band keys meaningless.
func TestMismatch(t *testing.T) {
	db := memDB(t)
	created := []pebblecontent.Options{{}, {ExactOnly: true}, {Bits: 64}, {Sketch: shingleOpts(64)}}
	for i, o := range created {
		c, err := pebblecontent.New(db, fmt.Sprint(i), &o)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	for _, tc := range []struct {
		prefix string
		opts   pebblecontent.Options
		ok     bool
	}{
		{"0", pebblecontent.Options{}, true},
		{"0", pebblecontent.Options{Threshold: 0.9}, true}, // the store's banding is kept
		{"0", pebblecontent.Options{LSH: lshOpts(14, 9)}, true},
		{"0", pebblecontent.Options{Sync: true, SyncInterval: -1}, true},
		{"0", pebblecontent.Options{ExactOnly: true}, false},
		{"0", pebblecontent.Options{Bits: 16}, false},
		{"0", pebblecontent.Options{Sketch: shingleOpts(64)}, false},
		{"0", pebblecontent.Options{LSH: lshOpts(16, 8)}, false},
		{"1", pebblecontent.Options{ExactOnly: true}, true},
		{"1", pebblecontent.Options{}, false},
		{"2", pebblecontent.Options{Bits: 64}, true},
		{"3", pebblecontent.Options{Sketch: shingleOpts(64)}, true},
	} {
		c, err := pebblecontent.New(db, tc.prefix, &tc.opts)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, pebblecontent.ErrMismatch)) {
			t.Errorf("store %s reopened with %+v: %v", tc.prefix, tc.opts, err)
		}
		if err == nil {
			c.Close()
		}
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	c := open(t, t.TempDir(), &pebblecontent.Options{FS: vfs.NewMem()})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Seen(ctx, dedup.Doc{URL: "u", Text: []byte("text")}); !errors.Is(err, dedup.ErrClosed) {
		t.Errorf("Seen after Close: %v", err)
	}
	if _, _, err := c.Record(1, "u"); !errors.Is(err, dedup.ErrClosed) {
		t.Errorf("Record after Close: %v", err)
	}
	if err := c.Forget(ctx, 1); !errors.Is(err, dedup.ErrClosed) {
		t.Errorf("Forget after Close: %v", err)
	}
	if err := c.Sync(); !errors.Is(err, dedup.ErrClosed) {
		t.Errorf("Sync after Close: %v", err)
	}
	if err := c.Close(); !errors.Is(err, dedup.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if n := c.MemoryBytes(); n != 0 {
		t.Errorf("MemoryBytes after Close = %d", n)
	}
}

// TestSharedClosedFirst closes a shared database before the store: the
// background syncer must not panic, and Close reports the closed
// database.
func TestSharedClosedFirst(t *testing.T) {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem(), Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pebblecontent.New(db, "p", &pebblecontent.Options{SyncInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Seen(context.Background(), dedup.Doc{URL: "u", Text: []byte("some text")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the syncer runs on the closed database
	if err := c.Close(); !errors.Is(err, pebble.ErrClosed) {
		t.Fatalf("Close after the database's: %v", err)
	}
}
