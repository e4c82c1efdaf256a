package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRewind(t *testing.T) {
	tests := []struct {
		name         string
		max          int64
		uncompressed bool
		n, k, extra  int  // exchanges committed, the one rewound to, written after the last commit
		torn         bool // the crash tore a record at the end of the last file
		foreign      bool // another crawl wrote files of the prefix into the directory since
		after        bool // files were created after the position
	}{
		{name: "within one file", n: 10, k: 4, extra: 3},
		{name: "files rotated after the position", max: 1500, n: 10, k: 3, extra: 8, after: true},
		{name: "a file per exchange", max: 1, n: 6, k: 2, extra: 4, after: true},
		{name: "before the first write", n: 5, k: 0, extra: 2, after: true},
		{name: "before the first write, rotating", max: 1, n: 3, k: 0, extra: 2, after: true},
		{name: "at the last commit, torn tail", n: 5, k: 5, torn: true},
		{name: "torn tail after rotation", max: 1500, n: 8, k: 2, extra: 6, torn: true, after: true},
		{name: "other crawls' files stay", max: 1500, n: 8, k: 5, extra: 4, foreign: true, after: true},
		{name: "uncompressed", max: 2500, uncompressed: true, n: 8, k: 3, extra: 5, torn: true, after: true},
		{name: "uncompressed, before the first write", uncompressed: true, n: 2, k: 0, extra: 1, foreign: true, after: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := WriterOptions{Dir: dir, MaxFileSize: tt.max, Uncompressed: tt.uncompressed}
			w, err := NewWriter(&opts)
			if err != nil {
				t.Fatal(err)
			}
			positions := [][]byte{position0(t, w)}
			for i := range tt.n {
				page(t, w, "h.sim.test", i)
				positions = append(positions, position0(t, w))
			}
			for i := tt.n; i < tt.n+tt.extra; i++ {
				page(t, w, "h.sim.test", i)
			}
			if tt.torn {
				tear(t, w.Files()[len(w.Files())-1], tt.uncompressed)
			}
			// w is abandoned without Close, as by a kill.
			var foreign []string
			if tt.foreign {
				fw, err := NewWriter(&opts)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 4 {
					page(t, fw, "other.sim.test", i)
				}
				fw.Close()
				foreign = pageURLs("other.sim.test", 0, 4)
			}

			w2, err := NewWriter(&opts)
			if err != nil {
				t.Fatal(err)
			}
			p, err := parsePosition(positions[tt.k])
			if err != nil {
				t.Fatal(err)
			}
			later := len(w.Files()) - 1 - slices.IndexFunc(w.Files(), func(f string) bool { return filepath.Base(f) == p.file })
			if p.file == "" {
				later = len(w.Files())
			}
			if (later > 0) != tt.after {
				t.Fatalf("%d files created after the position", later)
			}
			before := strings.Count(snapshot(t, dir), "\n")
			if err := w2.Rewind(positions[tt.k]); err != nil {
				t.Fatal(err)
			}
			if removed := before - strings.Count(snapshot(t, dir), "\n"); removed != later {
				t.Errorf("Rewind removed %d files, want %d", removed, later)
			}
			if got := position0(t, w2); !bytes.Equal(got, positions[tt.k]) {
				t.Errorf("Position after Rewind %q, want %q", got, positions[tt.k])
			}
			want := append(pageURLs("h.sim.test", 0, tt.k), foreign...)
			if urls, _ := exchanges(t, dir); !sameSet(urls, want) {
				t.Fatalf("after Rewind: %q, want %q", urls, want)
			}
			for i := tt.k; i < tt.k+3; i++ {
				page(t, w2, "h.sim.test", i)
			}
			if err := w2.Close(); err != nil {
				t.Fatal(err)
			}
			want = append(pageURLs("h.sim.test", 0, tt.k+3), foreign...)
			urls, _ := exchanges(t, dir)
			if !sameSet(urls, want) {
				t.Fatalf("after writing on: %q, want %q", urls, want)
			}
			var ours []string
			for _, u := range urls {
				if strings.Contains(u, "//h.sim.test/") {
					ours = append(ours, u)
				}
			}
			if !slices.Equal(ours, pageURLs("h.sim.test", 0, tt.k+3)) {
				t.Errorf("the crawl's pages in name order %q", ours)
			}
		})
	}
}

// A crawl resumed twice, the second time from a position the first resume
// wrote, ends up with each page once.
func TestRewindTwice(t *testing.T) {
	dir := t.TempDir()
	opts := WriterOptions{Dir: dir, MaxFileSize: 1500, Now: func() time.Time { return when }}
	next := 0
	var pos []byte
	for run := range 3 {
		w, err := NewWriter(&opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Rewind(pos); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if run == 0 {
			pos = position0(t, w)
		}
		for range 4 {
			page(t, w, "h.sim.test", next)
			next++
			pos = position0(t, w)
		}
		page(t, w, "h.sim.test", next) // not committed: written again next run
	}
	if urls, _ := exchanges(t, dir); !slices.Equal(urls, pageURLs("h.sim.test", 0, next+1)) {
		t.Errorf("exchanges %q", urls)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func position0(t testing.TB, w *Writer) []byte {
	t.Helper()
	p, err := w.Position()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tear appends the first half of a record to the file at path, as a
// process killed while writing it leaves.
func tear(t *testing.T, path string, uncompressed bool) {
	t.Helper()
	var buf bytes.Buffer
	r := &Record{Block: rawResp}
	r.Header.Set(FieldType, TypeResponse)
	if err := NewRecordWriter(&buf, !uncompressed).Write(r); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(buf.Bytes()[:buf.Len()/2]); err != nil {
		t.Fatal(err)
	}
}

func TestRewindRefused(t *testing.T) {
	type setup struct {
		dir  string
		pos  position // after three exchanges in one file
		file string   // its path
	}
	forge := func(p position) []byte { return p.appendTo(nil) }
	tests := []struct {
		name string
		// token returns the token to rewind to, after changing the
		// directory as it likes.
		token func(t *testing.T, s setup) []byte
		want  error
	}{
		{"not a token", func(*testing.T, setup) []byte { return []byte("crawlkit-x.warc.gz 1234") }, ErrBadPosition},
		{"a file of another prefix", func(_ *testing.T, s setup) []byte {
			s.pos.file = "other-" + strings.TrimPrefix(s.pos.file, "crawlkit-")
			return forge(s.pos)
		}, ErrBadPosition},
		{"a path, not a name", func(_ *testing.T, s setup) []byte {
			s.pos.file = "../" + s.pos.file
			return forge(s.pos)
		}, ErrBadPosition},
		{"file shorter than the offset", func(t *testing.T, s setup) []byte {
			if err := os.Truncate(s.file, s.pos.end-10); err != nil {
				t.Fatal(err)
			}
			return forge(s.pos)
		}, ErrPositionLost},
		{"file gone", func(t *testing.T, s setup) []byte {
			if err := os.Rename(s.file, s.file+".moved"); err != nil {
				t.Fatal(err)
			}
			return forge(s.pos)
		}, ErrPositionLost},
		{"offset inside a record", func(_ *testing.T, s setup) []byte {
			s.pos.end--
			return forge(s.pos)
		}, ErrPositionLost},
		{"last write misplaced", func(_ *testing.T, s setup) []byte {
			s.pos.last++
			return forge(s.pos)
		}, ErrPositionLost},
		{"another series", func(_ *testing.T, s setup) []byte {
			s.pos.series = "0123456789abcdef"
			return forge(s.pos)
		}, ErrPositionLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewWriter(&WriterOptions{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				page(t, w, "h.sim.test", i)
			}
			p, err := parsePosition(position0(t, w))
			if err != nil {
				t.Fatal(err)
			}
			page(t, w, "h.sim.test", 3)
			w.Close()
			s := setup{dir: dir, pos: p, file: w.Files()[0]}
			token := tt.token(t, s)
			before := snapshot(t, dir)

			w2, err := NewWriter(&WriterOptions{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			err = w2.Rewind(token)
			var we *Error
			if !errors.As(err, &we) || !errors.Is(err, tt.want) {
				t.Fatalf("Rewind: %v, want an *Error wrapping %v", err, tt.want)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("a refused Rewind changed the directory:\n%s\nto\n%s", before, after)
			}
		})
	}
}

func TestRewindAfterWrite(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(&WriterOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	pos := position0(t, w)
	page(t, w, "h.sim.test", 0)
	var we *Error
	if err := w.Rewind(pos); !errors.As(err, &we) {
		t.Fatalf("Rewind after a write: %v, want an *Error", err)
	}
	if err := w.Rewind(nil); !errors.As(err, &we) {
		t.Fatalf("Rewind(nil) after a write: %v, want an *Error", err)
	}
	w.Close()
	if err := w.Rewind(pos); !errors.Is(err, ErrClosed) {
		t.Errorf("Rewind after Close: %v, want ErrClosed", err)
	}
}

// Rewind(nil) names no series, so it removes nothing.
func TestRewindNil(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(&WriterOptions{Dir: dir, MaxFileSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		page(t, w, "h.sim.test", i)
	}
	before := snapshot(t, dir)
	w2, err := NewWriter(&WriterOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, pos := range [][]byte{nil, {}} {
		if err := w2.Rewind(pos); err != nil {
			t.Fatal(err)
		}
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("Rewind(nil) changed the directory:\n%s\nto\n%s", before, after)
	}
}

// failingFile fails a write once n bytes have been written, writing what
// fits first, as a full disk does.
type failingFile struct {
	f io.Writer
	n int
}

func (ff *failingFile) Write(p []byte) (int, error) {
	if len(p) <= ff.n {
		ff.n -= len(p)
		return ff.f.Write(p)
	}
	n, _ := ff.f.Write(p[:ff.n])
	ff.n = 0
	return n, errors.New("no space left on device")
}

// A write that fails half-way is cut off again: the file holds the
// exchanges before it, whole, and the Writer goes on.
func TestFailedWriteUndone(t *testing.T) {
	for _, after := range []int{0, 10, 300, 700} {
		t.Run(fmt.Sprintf("fail after %d bytes", after), func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewWriter(&WriterOptions{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			page(t, w, "h.sim.test", 0)
			pos := position0(t, w)
			w.rw.w = &failingFile{f: w.f, n: after}
			if _, _, err := w.WriteExchange("http://h.sim.test/x", "", when, rawReq, rawResp, map[string]string{"a": "b"}); err == nil {
				t.Fatal("the write did not fail")
			}
			if got := position0(t, w); !bytes.Equal(got, pos) {
				t.Errorf("Position after a failed write %q, want %q", got, pos)
			}
			w.rw.w = w.f
			page(t, w, "h.sim.test", 1)
			w.Close()
			if urls, _ := exchanges(t, dir); !slices.Equal(urls, pageURLs("h.sim.test", 0, 2)) {
				t.Errorf("exchanges %q", urls)
			}
		})
	}
}

// A failed write that cannot be cut off breaks the Writer: later writes
// and Position fail rather than bury the partial write.
func TestFailedUndoBreaksWriter(t *testing.T) {
	w, err := NewWriter(&WriterOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	page(t, w, "h.sim.test", 0)
	w.rw.w = &failingFile{f: io.Discard, n: 100}
	w.f.Close() // the failed write's 100 bytes cannot be cut off
	if _, _, err := w.WriteExchange("http://h.sim.test/x", "", when, rawReq, rawResp, nil); err == nil {
		t.Fatal("the write did not fail")
	}
	if _, err := w.Position(); err == nil {
		t.Error("Position of a broken Writer did not fail")
	}
	if _, _, err := w.WriteExchange("http://h.sim.test/y", "", when, rawReq, rawResp, nil); err == nil {
		t.Error("a broken Writer wrote")
	}
}

func FuzzPosition(f *testing.F) {
	w, err := NewWriter(&WriterOptions{Dir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(position0(f, w))
	page(f, w, "h.sim.test", 0)
	f.Add(position0(f, w))
	w.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePosition(data)
		if err != nil {
			var we *Error
			if !errors.As(err, &we) || !errors.Is(err, ErrBadPosition) {
				t.Fatalf("error %v, want an *Error wrapping ErrBadPosition", err)
			}
			return
		}
		if b := p.appendTo(nil); !bytes.Equal(b, data) {
			t.Fatalf("%q decodes to %+v, which encodes to %q", data, p, b)
		}
		if len(data) != p.size() {
			t.Fatalf("%q is %d bytes long, size says %d", data, len(data), p.size())
		}
	})
}

func BenchmarkPosition(b *testing.B) {
	w, err := NewWriter(&WriterOptions{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	page(b, w, "h.sim.test", 0)
	b.Run("Position", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.Position(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendPosition", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, err = w.AppendPosition(buf[:0])
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Position taken while other goroutines write always falls between
// exchanges: the write before it reads back as one whole exchange.
func TestPositionConcurrent(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(&WriterOptions{Dir: dir, MaxFileSize: 4000})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				u := fmt.Sprintf("http://h.sim.test/%d", g*100+i)
				if _, _, err := w.WriteExchange(u, "", when, rawReq, rawResp, map[string]string{"i": u}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var tokens [][]byte
	wg.Go(func() {
		for range 200 {
			p, err := w.Position()
			if err != nil {
				t.Error(err)
				return
			}
			tokens = append(tokens, p)
		}
	})
	wg.Wait()
	w.Close()
	for _, tok := range tokens {
		p, err := parsePosition(tok)
		if err != nil {
			t.Fatal(err)
		}
		if p.file == "" {
			continue
		}
		f, err := os.Open(filepath.Join(dir, p.file))
		if err != nil {
			t.Fatal(err)
		}
		rd, err := NewReader(io.NewSectionReader(f, p.last, p.end-p.last), nil)
		if err != nil {
			t.Fatal(err)
		}
		var recs []*Record
		for rec, err := range rd.All() {
			if err != nil {
				t.Fatalf("%q: %v", tok, err)
			}
			recs = append(recs, rec)
		}
		f.Close()
		if got := types(recs); got != "response request metadata" && !(p.last == 0 && got == "warcinfo") {
			t.Errorf("%q: the write before it is %q", tok, got)
		}
	}
}

// snapshot describes the files of dir: names and sizes.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		if sideFile(e.Name()) {
			continue // the indexes and originals have tests of their own
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d\n", e.Name(), fi.Size())
	}
	return b.String()
}
