package webgraph

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// BuilderOptions configure a Builder. The zero value is usable.
type BuilderOptions struct {
	// TempDir holds the spilled link log and sorted runs; "" means
	// os.TempDir().
	TempDir string
	// BatchURLs is how many distinct URLs are sorted in memory at once.
	// 0 means the default, 1 Mi.
	BatchURLs int
	// BatchArcs bounds the in-memory arc batches (two of them: the graph
	// and its transpose). 0 means the default of SortOptions.
	BatchArcs int
	// Graph are the compression parameters of both graphs; nil means the
	// defaults.
	Graph *Options
}

// Builder turns a link log (source URL, target URL), of any size, into a
// connectivity store with bounded memory: the URL map (basename.urls), the
// graph (basename.graph/.offsets/.properties) and its transpose
// (basename-t.*). Links are appended to a temporary log and distinct URLs are
// sorted in batches spilled to disk; Finish merges the URL runs into the
// front-coded URL map, maps every link to ids by binary search, sorts the
// arcs both ways in spilled batches and compresses both graphs.
//
// Memory: BatchURLs URLs, 2 × BatchArcs arcs, and the finished URL map.
// A Builder is not safe for concurrent use; Close removes its temporary files.
type Builder struct {
	o       BuilderOptions
	log     *os.File
	logw    *bufio.Writer
	urls    map[string]struct{}
	runs    *os.File
	runw    *bufio.Writer
	runLens []int64 // bytes of each run
	links   int64
	done    bool
}

// NewBuilder returns a Builder; its temporary files are created in
// o.TempDir.
func NewBuilder(o *BuilderOptions) (*Builder, error) {
	b := &Builder{urls: map[string]struct{}{}}
	if o != nil {
		b.o = *o
	}
	if b.o.BatchURLs <= 0 {
		b.o.BatchURLs = 1 << 20
	}
	var err error
	if b.log, err = os.CreateTemp(b.o.TempDir, "webgraph-links-*"); err != nil {
		return nil, &Error{Op: "build", Err: err}
	}
	if b.runs, err = os.CreateTemp(b.o.TempDir, "webgraph-urls-*"); err != nil {
		b.Close()
		return nil, &Error{Op: "build", Err: err}
	}
	b.logw = bufio.NewWriterSize(b.log, 1<<16)
	b.runw = bufio.NewWriterSize(b.runs, 1<<16)
	return b, nil
}

func writeString(w *bufio.Writer, s string) error {
	var tmp [binary.MaxVarintLen64]byte
	if _, err := w.Write(tmp[:binary.PutUvarint(tmp[:], uint64(len(s)))]); err != nil {
		return err
	}
	_, err := w.WriteString(s)
	return err
}

func readString(r *bufio.Reader, buf []byte) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return buf, err
	}
	if n > 1<<24 {
		return buf, fmt.Errorf("%w: string of %d bytes in temporary file", ErrFormat, n)
	}
	buf = slices.Grow(buf[:0], int(n))[:n]
	_, err = io.ReadFull(r, buf)
	return buf, err
}

// AddLink records a link from src to dst (both become nodes). Repeated links
// are stored once.
func (b *Builder) AddLink(src, dst string) error {
	return b.add(src, dst, true)
}

// AddURL records a node without links (a page with no out-links that
// nothing links to yet).
func (b *Builder) AddURL(u string) error {
	return b.add(u, "", false)
}

func (b *Builder) add(src, dst string, link bool) error {
	if b.done {
		return &Error{Op: "build", Err: fmt.Errorf("%w: Add after Finish", ErrInput)}
	}
	if src == "" || (link && dst == "") {
		return &Error{Op: "build", Err: fmt.Errorf("%w: empty URL", ErrInput)}
	}
	if len(src) > 1<<20 || len(dst) > 1<<20 {
		return &Error{Op: "build", Err: fmt.Errorf("%w: URL longer than 1 MiB", ErrInput)}
	}
	kind := byte(0)
	if link {
		kind = 1
		b.links++
	}
	if err := b.logw.WriteByte(kind); err != nil {
		return &Error{Op: "build", Err: err}
	}
	if err := writeString(b.logw, src); err != nil {
		return &Error{Op: "build", Err: err}
	}
	b.urls[src] = struct{}{}
	if link {
		if err := writeString(b.logw, dst); err != nil {
			return &Error{Op: "build", Err: err}
		}
		b.urls[dst] = struct{}{}
	}
	if len(b.urls) >= b.o.BatchURLs {
		if err := b.spillURLs(); err != nil {
			return &Error{Op: "build", Err: err}
		}
	}
	return nil
}

type keyed struct{ key, url string }

func compareKeyed(a, b keyed) int {
	if c := strings.Compare(a.key, b.key); c != 0 {
		return c
	}
	return strings.Compare(a.url, b.url)
}

func (b *Builder) spillURLs() error {
	if len(b.urls) == 0 {
		return nil
	}
	s := make([]keyed, 0, len(b.urls))
	for u := range b.urls {
		s = append(s, keyed{SortKey(u), u})
	}
	clear(b.urls)
	slices.SortFunc(s, compareKeyed)
	var size int64
	var tmp [binary.MaxVarintLen64]byte
	for _, e := range s {
		if err := writeString(b.runw, e.url); err != nil {
			return err
		}
		size += int64(binary.PutUvarint(tmp[:], uint64(len(e.url))) + len(e.url))
	}
	b.runLens = append(b.runLens, size)
	return nil
}

type urlSource struct {
	r   *bufio.Reader
	cur keyed
}

type urlHeap []*urlSource

func (h urlHeap) Len() int           { return len(h) }
func (h urlHeap) Less(i, j int) bool { return compareKeyed(h[i].cur, h[j].cur) < 0 }
func (h urlHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *urlHeap) Push(x any)        { *h = append(*h, x.(*urlSource)) }
func (h *urlHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (s *urlSource) next() (bool, error) {
	u, err := readString(s.r, nil)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s.cur = keyed{SortKey(string(u)), string(u)}
	return true, nil
}

// mergeURLs writes the distinct URLs of all runs, in order, to path.
func (b *Builder) mergeURLs(path string) error {
	if err := b.spillURLs(); err != nil {
		return err
	}
	if err := b.runw.Flush(); err != nil {
		return err
	}
	var h urlHeap
	var off int64
	for _, n := range b.runLens {
		src := &urlSource{r: bufio.NewReaderSize(io.NewSectionReader(b.runs, off, n), 1<<14)}
		off += n
		ok, err := src.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, src)
		}
	}
	heap.Init(&h)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fw := NewFrontCodedWriter(f, 0)
	last := ""
	first := true
	for len(h) > 0 {
		top := h[0]
		u := top.cur.url
		ok, err := top.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
		if !first && u == last {
			continue
		}
		first, last = false, u
		if err := fw.Add(u); err != nil {
			return err
		}
	}
	if err := fw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// Finish writes basename.urls, the graph files basename.* and the
// transpose files basename-t.*. The Builder cannot be used afterwards
// except for Close.
func (b *Builder) Finish(basename string) error {
	if b.done {
		return &Error{Op: "build", Err: fmt.Errorf("%w: Finish called twice", ErrInput)}
	}
	b.done = true
	if err := b.finish(basename); err != nil {
		return &Error{Op: "build", Subject: basename, Err: err}
	}
	return nil
}

func (b *Builder) finish(basename string) error {
	if err := b.mergeURLs(basename + ".urls"); err != nil {
		return err
	}
	m, err := OpenURLMap(basename + ".urls")
	if err != nil {
		return err
	}
	if err := b.logw.Flush(); err != nil {
		return err
	}
	so := &SortOptions{TempDir: b.o.TempDir, BatchArcs: b.o.BatchArcs}
	fwd, bwd := newArcSorter(so), newArcSorter(so)
	defer fwd.close()
	defer bwd.close()
	r := bufio.NewReaderSize(io.NewSectionReader(b.log, 0, 1<<62), 1<<16)
	var sbuf, dbuf []byte
	for {
		kind, err := r.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if sbuf, err = readString(r, sbuf); err != nil {
			return err
		}
		if kind == 0 {
			continue
		}
		if dbuf, err = readString(r, dbuf); err != nil {
			return err
		}
		x, err := m.ID(string(sbuf))
		if err != nil {
			return err
		}
		y, err := m.ID(string(dbuf))
		if err != nil {
			return err
		}
		if err := fwd.add(x, y); err != nil {
			return err
		}
		if err := bwd.add(y, x); err != nil {
			return err
		}
	}
	n := m.Len()
	for _, part := range []struct {
		base string
		s    *arcSorter
	}{{basename, fwd}, {basename + "-t", bwd}} {
		_, err := WriteFiles(part.base, b.o.Graph, func(e *Encoder) error {
			return part.s.lists(n, func(_ int, succ []int) error { return e.Add(succ) })
		})
		if err != nil {
			return err
		}
		if err := part.s.close(); err != nil {
			return err
		}
	}
	return nil
}

// Close removes the temporary files. It is safe to call more than once.
func (b *Builder) Close() error {
	var errs []error
	for _, f := range []*os.File{b.log, b.runs} {
		if f == nil {
			continue
		}
		errs = append(errs, f.Close(), os.Remove(f.Name()))
	}
	b.log, b.runs = nil, nil
	b.done = true
	return errors.Join(errs...)
}
