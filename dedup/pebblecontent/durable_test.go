package pebblecontent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
	"github.com/crawlkit/crawlkit/dedup/pebblecontent"
)

// corpusDocs returns n distinct 150-word pages and, for each, a
// near-duplicate.
func corpusDocs(n int) (pages, near [][]byte) { return docs(n, 1000, 150) }

// docs returns n distinct texts of the given length in words, the i-th
// from seed+i, and for each a near-duplicate: its middle word changed.
func docs(n int, seed uint64, words int) (pages, near [][]byte) {
	for i := range n {
		p := deduptest.Text(seed+uint64(i), words)
		w := strings.Fields(p)
		w[words/2] = "changed"
		pages = append(pages, []byte(p))
		near = append(near, []byte(strings.Join(w, " ")))
	}
	return pages, near
}

// record sees every page as new, and records fingerprints 1..n.
func record(t testing.TB, c *pebblecontent.Content, pages [][]byte) {
	t.Helper()
	ctx := context.Background()
	for i, p := range pages {
		if m, err := c.Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://a.test/%d", i), Text: p}); err != nil || m.Seen {
			t.Fatalf("page %d: %+v, %v", i, m, err)
		}
		if _, known, err := c.Record(uint64(i+1), fmt.Sprintf("http://bin.test/%d", i)); err != nil || known {
			t.Fatalf("binary %d: %v, %v", i, known, err)
		}
	}
}

// checkKnown checks that every page is still known, exactly and as a
// near-duplicate, and every recorded fingerprint too.
func checkKnown(t testing.TB, c *pebblecontent.Content, pages, near [][]byte) {
	t.Helper()
	ctx := context.Background()
	for i := range pages {
		url := fmt.Sprintf("http://a.test/%d", i)
		if m, err := c.Seen(ctx, dedup.Doc{URL: "http://b.test/", Text: pages[i]}); err != nil || !m.Seen || m.Near || m.URL != url {
			t.Fatalf("page %d lost: %+v, %v", i, m, err)
		}
		if m, err := c.Seen(ctx, dedup.Doc{URL: "http://c.test/", Text: near[i]}); err != nil || !m.Seen || !m.Near || m.URL != url {
			t.Fatalf("page %d not found as a near-duplicate: %+v, %v", i, m, err)
		}
		if first, known, err := c.Record(uint64(i+1), "http://other.test/"); err != nil || !known || first != fmt.Sprintf("http://bin.test/%d", i) {
			t.Fatalf("binary %d lost: %q, %v, %v", i, first, known, err)
		}
	}
}

// TestReopen records documents (some flushed to sstables, the rest only
// in the write-ahead log and the memtable), closes the store and checks
// that they are all known after reopening it.
func TestReopen(t *testing.T) {
	n := 600
	if raceEnabled {
		n = 100
	}
	pages, near := corpusDocs(n)
	dir := t.TempDir()
	opts := &pebblecontent.Options{MemTableBytes: 64 << 10} // flushes every few dozen documents
	c := open(t, dir, opts)
	record(t, c, pages)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open(t, dir, opts)
	defer c.Close()
	checkKnown(t, c, pages, near)
	// Forget still finds the buckets after a restart.
	ctx := context.Background()
	m, _ := c.Seen(ctx, dedup.Doc{Text: pages[0]})
	if err := c.Forget(ctx, m.Fingerprint); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Seen(ctx, dedup.Doc{URL: "http://d.test/", Text: near[0]}); err != nil || m.Seen {
		t.Fatalf("near-duplicate of a forgotten page: %+v, %v", m, err)
	}
}

// TestCrash abandons a store without Close and recovers what a crash of
// the machine would leave (only what was synced), under each durability
// setting.
func TestCrash(t *testing.T) {
	n := 200
	if raceEnabled {
		n = 40
	}
	pages, near := corpusDocs(n)
	for _, tc := range []struct {
		name string
		opts pebblecontent.Options
		// settle makes the recorded documents durable before the crash.
		settle func(*pebblecontent.Content) error
	}{
		{"sync", pebblecontent.Options{Sync: true}, func(*pebblecontent.Content) error { return nil }},
		{"interval", pebblecontent.Options{SyncInterval: 20 * time.Millisecond}, func(*pebblecontent.Content) error {
			time.Sleep(100 * time.Millisecond) // the background sync runs 20ms after the last change
			return nil
		}},
		{"explicit", pebblecontent.Options{SyncInterval: -1}, (*pebblecontent.Content).Sync},
		{"close", pebblecontent.Options{SyncInterval: -1}, (*pebblecontent.Content).Close},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			o := tc.opts
			o.FS, o.MemTableBytes = fs, 64<<10
			c := open(t, "db", &o)
			record(t, c, pages)
			if err := tc.settle(c); err != nil {
				t.Fatal(err)
			}
			crashed := fs.CrashClone(vfs.CrashCloneCfg{}) // only synced data survive
			// Close the abandoned store (its goroutines), or find it closed.
			if err := c.Close(); err != nil && tc.name != "close" {
				t.Fatal(err)
			}
			o.FS = crashed
			c = open(t, "db", &o)
			defer c.Close()
			checkKnown(t, c, pages, near)
		})
	}
}

// TestBoundedMemory records many more documents than the configured
// memory could hold and checks that Pebble's memory stays within the
// block cache and the memtables.
func TestBoundedMemory(t *testing.T) {
	n := 8000
	if raceEnabled {
		n = 800
	}
	opts := &pebblecontent.Options{BlockCacheBytes: 2 << 20, MemTableBytes: 256 << 10, SyncInterval: -1}
	c := open(t, t.TempDir(), opts)
	defer c.Close()
	ctx := context.Background()
	var peak int64
	for i := range n {
		if _, err := c.Seen(ctx, dedup.Doc{URL: fmt.Sprint("http://a.test/", i), Text: []byte(deduptest.Text(uint64(i), 100))}); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			peak = max(peak, c.MemoryBytes())
		}
	}
	bound := opts.BlockCacheBytes + 2*int64(opts.MemTableBytes)
	t.Logf("%d documents; peak memory %d bytes (bound %d)", n, peak, bound)
	if peak > bound {
		t.Fatalf("peak memory %d > %d", peak, bound)
	}
}

// TestCrashUnsynced is TestCrash's control: without a sync, a crash
// loses the documents of the last memtable, which only the write-ahead
// log held.
func TestCrashUnsynced(t *testing.T) {
	pages, _ := corpusDocs(100)
	fs := vfs.NewCrashableMem()
	o := &pebblecontent.Options{FS: fs, SyncInterval: -1, MemTableBytes: 64 << 10}
	c := open(t, "db", o)
	record(t, c, pages)
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	o.FS = crashed
	c = open(t, "db", o)
	defer c.Close()
	ctx := context.Background()
	lost := 0
	for i, p := range pages {
		if m, err := c.Seen(ctx, dedup.Doc{URL: fmt.Sprint("http://b.test/", i), Text: p}); err != nil {
			t.Fatal(err)
		} else if !m.Seen {
			lost++
		}
	}
	t.Logf("%d of %d documents lost", lost, len(pages))
	if lost == 0 {
		t.Fatal("an unsynced store lost nothing in a crash: the crash tests test nothing")
	}
}
