package index_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

// live keeps the documents a Dir should hold: the newest version of each
// URL, in order of addition.
type live struct {
	order []string
	docs  map[string]index.Document
}

func (l *live) add(d index.Document) {
	if l.docs == nil {
		l.docs = map[string]index.Document{}
	}
	if _, ok := l.docs[d.URL]; !ok {
		l.order = append(l.order, d.URL)
	}
	l.docs[d.URL] = d
}

func (l *live) clone() *live {
	return &live{order: slices.Clone(l.order), docs: maps.Clone(l.docs)}
}

// shard returns a Shard holding the live documents.
func (l *live) shard(tb testing.TB) *index.Shard {
	tb.Helper()
	s := index.NewShard(nil)
	for _, u := range l.order {
		if _, err := s.Add(l.docs[u]); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// sameIndex checks that d ranks every query as a Shard holding l's
// documents does, with the same statistics.
func sameIndex(t *testing.T, l *live, d *index.Dir, qs []index.Query) {
	t.Helper()
	want := l.shard(t)
	if got := d.Info().Docs; got != int64(len(l.order)) {
		t.Fatalf("Dir holds %d documents, want %d", got, len(l.order))
	}
	terms := []string{indextest.Word(0), indextest.Word(20), indextest.Word(300), "absent"}
	for _, ts := range [][]string{terms, nil} {
		w, _ := want.Stats(ctx, ts)
		g, err := d.Stats(ctx, ts)
		if err != nil {
			t.Fatal(err)
		}
		if g.Docs != w.Docs || g.Length != w.Length || !maps.Equal(g.DF, w.DF) {
			t.Fatalf("Stats(%d terms): N=%d length=%d %d terms, want N=%d length=%d %d terms",
				len(ts), g.Docs, g.Length, len(g.DF), w.Docs, w.Length, len(w.DF))
		}
	}
	indextest.Compare(t, want, d, qs, nil)
}

func openDir(tb testing.TB, path string, opts index.DirOptions) *index.Dir {
	tb.Helper()
	d, err := index.OpenDir(path, &opts)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// edits returns the collection with a share of re-added URLs (new text
// for an earlier page), as a recrawl produces.
func edits(docs []index.Document, every int) []index.Document {
	out := slices.Clone(docs)
	r := rand.New(rand.NewPCG(uint64(every), 9))
	for i := every; i < len(out); i += every {
		old := out[r.IntN(i)]
		out[i] = index.Document{URL: old.URL, Title: "revisited " + old.Title, Text: out[i].Text}
	}
	return out
}

// A Dir ranks like one Shard holding the same live documents, whatever
// the split between buffer and segments: after adds, flushes,
// replacements across segments, merges and a reopen.
func TestDirMatchesShard(t *testing.T) {
	docs, qs := collection(t)
	docs = edits(docs, 9)
	tests := []struct {
		name     string
		opts     index.DirOptions
		prepared bool // documents analysed in parallel by Prepare, added by AddPrepared
	}{
		{"buffer only", index.DirOptions{MergeFactor: -1}, false},
		{"segments of 97 documents", index.DirOptions{BufferDocs: 97, MergeFactor: -1}, false},
		{"segments of 512 KiB", index.DirOptions{BufferBytes: 512 << 10, MergeFactor: -1}, false},
		{"log of 64 KiB, no cache", index.DirOptions{LogBytes: 64 << 10, MergeFactor: -1, CacheBytes: -1}, false},
		{"prepared, segments of 97 documents", index.DirOptions{BufferDocs: 97, MergeFactor: -1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := t.TempDir()
			d := openDir(t, path, tt.opts)
			defer func() { d.Close() }()
			var l live
			var prepared []*index.PreparedDoc
			if tt.prepared {
				prepared = make([]*index.PreparedDoc, len(docs))
				var wg sync.WaitGroup
				for g := range 4 {
					wg.Go(func() {
						for i := g; i < len(docs); i += 4 {
							p, err := d.Prepare(docs[i])
							if err != nil {
								t.Error(err)
								return
							}
							prepared[i] = p
						}
					})
				}
				wg.Wait()
			}
			for i, doc := range docs {
				var err error
				if tt.prepared {
					err = d.AddPrepared(prepared[i])
				} else {
					err = d.Add(doc)
				}
				if err != nil {
					t.Fatal(err)
				}
				l.add(doc)
			}
			t.Logf("%+v", d.Info())
			t.Run("added", func(t *testing.T) { sameIndex(t, &l, d, qs) })
			if err := d.Merge(ctx); err != nil {
				t.Fatal(err)
			}
			t.Run("merged", func(t *testing.T) { sameIndex(t, &l, d, qs) })
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := d.Optimize(ctx); err != nil {
				t.Fatal(err)
			}
			if in := d.Info(); in.Segments != 1 || in.Buffered != 0 || in.Deleted != 0 {
				t.Errorf("after Flush and Optimize: %+v", in)
			}
			t.Run("optimized", func(t *testing.T) { sameIndex(t, &l, d, qs) })
			for _, doc := range edits(docs[:300], 4) { // replacements of merged documents
				d.Add(doc)
				l.add(doc)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d = openDir(t, path, tt.opts)
			t.Run("reopened", func(t *testing.T) { sameIndex(t, &l, d, qs) })
		})
	}
}

func TestDirEmptyAndErrors(t *testing.T) {
	path := t.TempDir()
	d := openDir(t, path, index.DirOptions{})
	res, err := d.Search(ctx, index.ParseQuery(nil, "anything", index.Or, 10), nil)
	if err != nil || len(res.Hits) != 0 {
		t.Errorf("empty Dir: %v, %v", res, err)
	}
	if err := d.Add(index.Document{Text: "no url"}); !errors.Is(err, index.ErrNoURL) {
		t.Errorf("Add without URL: %v", err)
	}
	if _, err := index.OpenDir(path, nil); !errors.Is(err, index.ErrLocked) {
		t.Errorf("second OpenDir: %v, want ErrLocked", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for name, err := range map[string]error{
		"Add":    d.Add(pages[0]),
		"Flush":  d.Flush(),
		"Merge":  d.Merge(ctx),
		"Rewind": d.Rewind([]byte("x")),
	} {
		if name != "Rewind" && !errors.Is(err, index.ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if _, err := d.Search(ctx, index.Query{Terms: []string{"a"}}, nil); !errors.Is(err, index.ErrClosed) {
		t.Errorf("Search after Close: %v", err)
	}
	if _, err := d.Position(); !errors.Is(err, index.ErrClosed) {
		t.Errorf("Position after Close: %v", err)
	}
	// A directory whose manifest was lost is not mistaken for a new one.
	d = openDir(t, path, index.DirOptions{BufferDocs: 2})
	for _, p := range pages {
		d.Add(p)
	}
	d.Close()
	os.Remove(filepath.Join(path, "MANIFEST"))
	if _, err := index.OpenDir(path, nil); !errors.Is(err, index.ErrCorrupt) {
		t.Errorf("OpenDir without manifest: %v, want ErrCorrupt", err)
	}
}

// Files left by a crash in the middle of a flush or a merge (a segment not
// yet in the manifest, temporary files, a new log) are removed on open.
func TestDirLeftovers(t *testing.T) {
	docs, qs := collection(t)
	path := t.TempDir()
	d := openDir(t, path, index.DirOptions{BufferDocs: 100, MergeFactor: -1})
	var l live
	for _, doc := range docs[:250] {
		d.Add(doc)
		l.add(doc)
	}
	d.Crash()
	segs, _ := filepath.Glob(filepath.Join(path, "*.seg"))
	seg, _ := os.ReadFile(segs[0])
	leftovers := map[string][]byte{
		"00000090.seg":     seg,
		"00000091.seg.tmp": seg[:5000],
		"00000092.log":     []byte("CKLG"),
		"MANIFEST.tmp":     []byte("CKMF"),
	}
	for name, b := range leftovers {
		os.WriteFile(filepath.Join(path, name), b, 0o644)
	}
	d = openDir(t, path, index.DirOptions{MergeFactor: -1})
	defer d.Close()
	for name := range leftovers {
		if _, err := os.Stat(filepath.Join(path, name)); err == nil {
			t.Errorf("%s was not removed", name)
		}
	}
	sameIndex(t, &l, d, qs[:20])
	// New files do not reuse the numbers of the removed ones.
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(path, "00000093.seg")); err != nil {
		t.Errorf("the flush after the leftovers wrote no 00000093.seg: %v", err)
	}
}

// copyDir copies the files of a directory (a crashed Dir's, lock aside).
func copyDir(tb testing.TB, from string) string {
	tb.Helper()
	to := tb.TempDir()
	ents, err := os.ReadDir(from)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return to
}

// logFile returns the path of the one log file of a directory whose
// previous log is gone (or the newest).
func logFile(tb testing.TB, path string) string {
	tb.Helper()
	logs, _ := filepath.Glob(filepath.Join(path, "*.log"))
	if len(logs) == 0 {
		tb.Fatal("no log")
	}
	slices.Sort(logs)
	return logs[len(logs)-1]
}

// A killed process loses nothing that Add returned for; a torn last record
// is cut. The crash leaves the log at some length; whatever prefix of its
// records survives (the log truncated at random offsets), reopening gives
// exactly the documents of the complete records.
func TestDirCrash(t *testing.T) {
	docs, qs := collection(t)
	docs = edits(docs[:400], 7)
	path := t.TempDir()
	d := openDir(t, path, index.DirOptions{BufferDocs: 150, MergeFactor: 2})
	var l live
	type mark struct {
		off int64
		l   *live
	}
	var marks []mark // the log end after each Add of the last log
	for _, doc := range docs {
		if err := d.Add(doc); err != nil {
			t.Fatal(err)
		}
		l.add(doc)
		if d.Info().Buffered == 0 {
			marks = marks[:0]
		}
		marks = append(marks, mark{d.Info().LogBytes, l.clone()})
	}
	d.Crash()

	whole := copyDir(t, path)
	d = openDir(t, whole, index.DirOptions{MergeFactor: -1})
	sameIndex(t, &l, d, qs)
	d.Close()

	r := rand.New(rand.NewPCG(1, 2))
	size := marks[len(marks)-1].off
	cuts := []int64{size, size - 1, 28, 29}
	for range 12 {
		cuts = append(cuts, 28+r.Int64N(size-28))
	}
	for _, cut := range cuts {
		t.Run(fmt.Sprint("cut at ", cut), func(t *testing.T) {
			dir := copyDir(t, path)
			if err := os.Truncate(logFile(t, dir), cut); err != nil {
				t.Fatal(err)
			}
			// The complete records are those that end by the cut (the
			// first mark is the empty log after the last flush).
			want := marks[0].l
			for _, m := range marks {
				if m.off <= cut {
					want = m.l
				}
			}
			d := openDir(t, dir, index.DirOptions{MergeFactor: -1})
			defer d.Close()
			sameIndex(t, want, d, qs[:40])
			// The cut log is appended to normally.
			extra := index.Document{URL: "http://new.example/", Text: "after the crash"}
			if err := d.Add(extra); err != nil {
				t.Fatal(err)
			}
			want = want.clone()
			want.add(extra)
			sameIndex(t, want, d, qs[:10])
		})
	}
}

// Rewind returns to the documents added up to a position, across a flush
// and a merge, undoing replacements; a position older than the previous
// flush is refused with ErrPosition.
func TestDirRewind(t *testing.T) {
	docs, qs := collection(t)
	docs = edits(docs[:600], 5)
	qs = qs[:40]
	// Each script adds documents (a), takes the position (p), flushes (f),
	// merges everything (m); then the Dir crashes, is reopened and rewound
	// to the position.
	tests := []struct {
		name, script string
		wantErr      bool
	}{
		{"nothing added since", "a250 p", false},
		{"within the log", "a220 p a60", false},
		{"before a flush", "a150 p a80 f", false},
		{"just before a flush", "a200 p f a50", false},
		{"after a flush", "a200 f p a10", false},
		{"before a flush and a merge", "a100 f a80 p a80 f m a5", false},
		{"before a merge of the flushed segment", "a100 f a80 p a40 f a10 m", false},
		{"before a flush, replacing flushed documents", "a200 f a100 p a200 f a50", false},
		{"two flushes ago", "a150 p a10 f a10 f", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := t.TempDir()
			opts := index.DirOptions{BufferDocs: 1000, MergeFactor: -1}
			d := openDir(t, path, opts)
			var l, atPos live
			var pos []byte
			next := 0
			for _, step := range strings.Fields(tt.script) {
				var err error
				switch step[0] {
				case 'a':
					var n int
					fmt.Sscan(step[1:], &n)
					for _, doc := range docs[next : next+n] {
						if err = d.Add(doc); err != nil {
							break
						}
						l.add(doc)
					}
					next += n
				case 'p':
					pos, err = d.Position()
					atPos = *l.clone()
				case 'f':
					err = d.Flush()
				case 'm':
					err = d.Optimize(ctx)
				}
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
			}
			d.Crash()
			d = openDir(t, path, opts)
			defer func() { d.Close() }()
			err := d.Rewind(pos)
			if tt.wantErr {
				if !errors.Is(err, index.ErrPosition) {
					t.Fatalf("Rewind: %v, want ErrPosition", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sameIndex(t, &atPos, d, qs)
			// The rewound index goes on: add, reopen.
			for _, doc := range docs[next:] {
				d.Add(doc)
				atPos.add(doc)
			}
			d.Close()
			d = openDir(t, path, opts)
			sameIndex(t, &atPos, d, qs)
		})
	}
}

func TestDirRewindRefuses(t *testing.T) {
	path := t.TempDir()
	d := openDir(t, path, index.DirOptions{MergeFactor: -1})
	defer d.Close()
	for _, p := range pages[:2] {
		d.Add(p)
	}
	early, _ := d.Position()
	for _, p := range pages[2:] {
		d.Add(p)
	}
	late, _ := d.Position()
	other := openDir(t, t.TempDir(), index.DirOptions{})
	foreign, _ := other.Position()
	other.Close()
	flipped := bytes.Clone(late)
	flipped[len(flipped)/2] ^= 1
	if err := d.Rewind(early); err != nil {
		t.Fatal(err)
	}
	for name, pos := range map[string][]byte{
		"empty":            nil,
		"garbage":          []byte("not a position at all"),
		"flipped":          flipped,
		"truncated":        late[:len(late)-1],
		"other directory":  foreign,
		"undone by rewind": late,
	} {
		err := d.Rewind(pos)
		var ie *index.Error
		if !errors.Is(err, index.ErrPosition) || !errors.As(err, &ie) || ie.Op != "rewind" {
			t.Errorf("%s: %v, want an *Error wrapping ErrPosition", name, err)
		}
	}
	if n := d.Info().Docs; n != 2 {
		t.Errorf("refused rewinds changed the index: %d documents", n)
	}
}

// Adds from several goroutines, searches and background merges at the
// same time (checked by -race); the result equals a serial build.
func TestDirConcurrent(t *testing.T) {
	docs, qs := collection(t)
	docs = docs[:600]
	d := openDir(t, t.TempDir(), index.DirOptions{BufferDocs: 40, MergeFactor: 3, OnMergeError: func(err error) { t.Error(err) }})
	defer d.Close()
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := w; i < len(docs); i += 3 {
				if err := d.Add(docs[i]); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					if _, err := d.Position(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for i := range 60 {
				if _, err := d.Search(ctx, qs[i%len(qs)], nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := d.Merge(ctx); err != nil {
		t.Fatal(err)
	}
	var l live
	for _, doc := range docs {
		l.add(doc)
	}
	sameIndex(t, &l, d, qs[:60])
}

// A damaged segment is reported as ErrCorrupt naming the file, by Open
// when the header or footer is hit, by the reads that touch it otherwise.
func TestDirCorruptSegment(t *testing.T) {
	docs, _ := collection(t)
	path := t.TempDir()
	d := openDir(t, path, index.DirOptions{BufferDocs: 200, MergeFactor: -1})
	for _, doc := range docs[:400] {
		d.Add(doc)
	}
	d.Close()
	segs, _ := filepath.Glob(filepath.Join(path, "*.seg"))
	if len(segs) != 2 {
		t.Fatalf("%d segments", len(segs))
	}
	good, _ := os.ReadFile(segs[0])
	for _, at := range []int{0, 100, len(good) / 3, len(good) / 2, len(good) - 5000, len(good) - 10} {
		t.Run(fmt.Sprint("byte ", at), func(t *testing.T) {
			dir := copyDir(t, path)
			bad := bytes.Clone(good)
			bad[at] ^= 0x40
			seg := filepath.Join(dir, filepath.Base(segs[0]))
			os.WriteFile(seg, bad, 0o644)
			d, err := index.OpenDir(dir, &index.DirOptions{MergeFactor: -1})
			if err == nil {
				// Reading everything (merging the two segments) must meet
				// the damage.
				err = d.Optimize(ctx)
				if err == nil {
					_, err = d.Stats(ctx, nil)
				}
				d.Close()
			}
			var ie *index.Error
			if !errors.Is(err, index.ErrCorrupt) || !errors.As(err, &ie) || !strings.Contains(err.Error(), seg) {
				t.Fatalf("got %v, want ErrCorrupt naming %s", err, seg)
			}
		})
	}
}

// TestDirCorruptMessages damages each kind of file of a Dir and checks
// what an operator reads: an error wrapping ErrCorrupt that names the
// file and says "index: " once.
func TestDirCorruptMessages(t *testing.T) {
	docs, _ := collection(t)
	path := t.TempDir()
	d := openDir(t, path, index.DirOptions{BufferDocs: 50, MergeFactor: -1})
	for _, doc := range docs[:120] {
		d.Add(doc)
	}
	d.Close()
	file := func(pattern string) string {
		m, _ := filepath.Glob(filepath.Join(path, pattern))
		if len(m) == 0 {
			t.Fatalf("no %s in %s", pattern, path)
		}
		return filepath.Base(m[len(m)-1])
	}
	for _, tc := range []struct {
		name, file string
		at         int
	}{
		{"manifest header", "MANIFEST", 0},
		{"manifest body", "MANIFEST", 12},
		{"log header", file("*.log"), 1},
		{"segment header", file("*.seg"), 0},
		{"segment page", file("*.seg"), 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, path)
			p := filepath.Join(dir, tc.file)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[tc.at] ^= 0x40
			os.WriteFile(p, b, 0o644)
			d, err := index.OpenDir(dir, &index.DirOptions{MergeFactor: -1})
			if err == nil {
				if err = d.Optimize(ctx); err == nil {
					_, err = d.Stats(ctx, nil)
				}
				d.Close()
			}
			if !errors.Is(err, index.ErrCorrupt) {
				t.Fatalf("%v, want ErrCorrupt", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, p) {
				t.Errorf("%q does not name %s", msg, p)
			}
			if n := strings.Count(msg, "index: "); n != 1 {
				t.Errorf("%q says \"index: \" %d times, want once", msg, n)
			}
		})
	}
}
