package pebbleseen_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
	"github.com/crawlkit/crawlkit/dedup/pebbleseen"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t testing.TB, dir string, o *pebbleseen.Options) *pebbleseen.Set {
	s, err := pebbleseen.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts pebbleseen.Options
	}{
		{"disk", pebbleseen.Options{}},
		{"mem/nocache", pebbleseen.Options{FS: vfs.NewMem(), CacheEntries: -1}},
		{"mem/tinycache", pebbleseen.Options{FS: vfs.NewMem(), CacheEntries: 16, MemTableBytes: 64 << 10}},
	} {
		if raceEnabled && tc.name != "disk" {
			continue // Pebble is too slow under -race for all of them
		}
		t.Run(tc.name, func(t *testing.T) {
			deduptest.TestURLSeen(t, func(t *testing.T) dedup.URLSeen {
				o := tc.opts
				if o.FS != nil {
					o.FS = vfs.NewMem()
				}
				s := open(t, t.TempDir(), &o)
				t.Cleanup(func() {
					if err := s.Close(); err != nil {
						t.Error(err)
					}
				})
				return s
			})
		})
	}
}

// TestRestart adds fingerprints, closes the set, reopens it and checks
// that every fingerprint is still there — including ones that were only
// in the write-ahead log and the memtable.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 1))
	n := 20000
	if raceEnabled {
		n = 2000
	}
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	opts := &pebbleseen.Options{MemTableBytes: 256 << 10, CacheEntries: 1024}
	s := open(t, dir, opts)
	if _, err := s.TestAndAddBatch(ctx, nil, fps[:n/2]); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil { // some in sstables…
		t.Fatal(err)
	}
	for _, fp := range fps[n/2:] { // …some only in the WAL
		if seen, err := s.TestAndAdd(ctx, fp); err != nil || seen {
			t.Fatalf("new fingerprint: %v %v", seen, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TestAndAdd(ctx, 1); !errors.Is(err, dedup.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, dedup.ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}

	s = open(t, dir, opts)
	defer s.Close()
	got, err := s.TestAndAddBatch(ctx, nil, fps)
	if err != nil {
		t.Fatal(err)
	}
	for i, seen := range got {
		if !seen {
			t.Fatalf("fingerprint %d lost across restart", i)
		}
	}
	if seen, _ := s.TestAndAdd(ctx, r.Uint64()); seen {
		t.Fatal("a new fingerprint is seen after restart")
	}
}

// TestBoundedMemory adds many more fingerprints than the configured
// memory could hold and checks that the set's memory stays within the
// cache, the block cache and a few memtables.
func TestBoundedMemory(t *testing.T) {
	ctx := context.Background()
	n := 100000
	if raceEnabled {
		n = 15000
	}
	opts := &pebbleseen.Options{CacheEntries: 1 << 12, BlockCacheBytes: 256 << 10, MemTableBytes: 64 << 10}
	s := open(t, t.TempDir(), opts)
	defer s.Close()
	r := rand.New(rand.NewPCG(5, 5))
	fps := make([]uint64, 1000)
	var peak int64
	for done := 0; done < n; done += len(fps) {
		for i := range fps {
			fps[i] = r.Uint64()
		}
		if _, err := s.TestAndAddBatch(ctx, nil, fps); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, s.MemoryBytes())
	}
	bound := int64(8<<12 + 256<<10 + 4*64<<10)
	t.Logf("%d fingerprints (%d bytes raw); peak memory %d bytes (bound %d)", n, 8*n, peak, bound)
	if peak > bound {
		t.Fatalf("peak memory %d > %d", peak, bound)
	}
}

func TestOpenError(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	defer s.Close()
	if _, err := pebbleseen.Open(dir, nil); err == nil { // directory locked
		t.Fatal("second Open of a locked directory succeeded")
	}
	var e *dedup.Error
	if _, err := pebbleseen.Open(dir, &pebbleseen.Options{BlockCacheBytes: -1}); !errors.As(err, &e) || e.Op != "Open" || !errors.Is(err, pebbleseen.ErrInvalidOptions) {
		t.Fatalf("invalid options: %v", err)
	}
}

func BenchmarkTestAndAdd(b *testing.B) {
	ctx := context.Background()
	s := open(b, b.TempDir(), nil)
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.TestAndAdd(ctx, r.Uint64()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkTestAndAddBatch(b *testing.B) {
	ctx := context.Background()
	s := open(b, b.TempDir(), nil)
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	fps := make([]uint64, 1000)
	var dst []bool
	b.ReportAllocs()
	for b.Loop() {
		for i := range fps {
			fps[i] = r.Uint64()
		}
		var err error
		if dst, err = s.TestAndAddBatch(ctx, dst[:0], fps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(fps))/b.Elapsed().Seconds(), "ops/s")
}
