package index

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

var update = flag.Bool("update", false, "rewrite the seed corpora of the Dir fuzz tests in testdata/fuzz")

var fuzzDocs = []Document{
	{URL: "http://a.example/", Title: "Crawl", Text: "ka lo mi ka ka"},
	{URL: "http://a.example/b", Title: "Index", Text: "lo ne ru lo"},
	{URL: "http://b.example/", Title: "", Text: "mi mi mi ta"},
	{URL: "http://b.example/c", Title: "Rank", Text: "ka ta so so vi"},
}

// segmentBytes returns the segment file of a shard holding docs.
func segmentBytes(tb testing.TB, docs []Document) []byte {
	tb.Helper()
	s := NewShard(nil)
	for _, d := range docs {
		s.Add(d)
	}
	path := filepath.Join(tb.TempDir(), "x.seg")
	if _, err := writeShardSegment(path, s); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// resealPages rewrites the trailer of every page, so that fuzzing reaches
// the decoders behind the checksums.
func resealPages(data []byte) []byte {
	b := bytes.Clone(data)
	for i := 0; i+pageSize <= len(b); i += pageSize {
		sealPage(b[i:i+pageSize], uint32(i/pageSize))
	}
	return b
}

// checkReadErr fails unless err is an *Error naming the file, wrapping
// ErrCorrupt or ErrVersion.
func checkReadErr(t *testing.T, err error, name string) {
	t.Helper()
	var ie *Error
	if !errors.As(err, &ie) || ie.Subject != name || !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
		t.Fatalf("error %v (%T) is not ErrCorrupt or ErrVersion naming %s", err, err, name)
	}
}

// exerciseSegment reads everything of a segment the way queries and
// merges do; it must fail cleanly or succeed, never panic, and a merge of
// it must give a valid segment.
func exerciseSegment(t *testing.T, data []byte) {
	const name = "fuzz.seg"
	r, err := openSegReader(bytes.NewReader(data), int64(len(data)), name, 1, newCache(1<<20))
	if err != nil {
		checkReadErr(t, err, name)
		return
	}
	for id := uint32(0); uint64(id) < min(r.docs, 64); id++ {
		if _, err := r.length(id); err != nil {
			checkReadErr(t, err, name)
		}
		url, _, err := r.fields(id)
		if err != nil {
			checkReadErr(t, err, name)
			continue
		}
		if err := r.lookupURL(url, &readBuf{}, func(uint32) bool { return true }); err != nil {
			checkReadErr(t, err, name)
		}
	}
	it := r.termIter()
	for n := 0; n < 100 && it.next(); n++ {
		e, ok, err := r.lookupTerm(it.e.term)
		if err != nil {
			checkReadErr(t, err, name)
			continue
		}
		if !ok || e != it.e {
			t.Fatalf("lookupTerm(%q) = %+v, %v; the scan says %+v", it.e.term, e, ok, it.e)
		}
		pl, err := r.postings(e, true)
		if err != nil {
			checkReadErr(t, err, name)
			continue
		}
		qt := []qterm{{idx: 0, pl: pl, idf: 1, ub: pl.upperBound(BM25{}.withDefaults(), 1, 10)}}
		sd := newSegDocs(r)
		for _, op := range []Op{Or, And} {
			e := engine{p: BM25{}.withDefaults(), avgdl: 10, seg: sd}
			hits, _ := e.run(qt, 1, op, 3)
			for _, h := range hits {
				if math.IsNaN(h.Score) {
					t.Fatalf("NaN score %+v", h)
				}
			}
		}
		if sd.err != nil {
			checkReadErr(t, sd.err, name)
		}
	}
	if it.err != nil {
		checkReadErr(t, it.err, name)
	}
	var out bytes.Buffer
	ins := []mergeInput{{r: r, del: roaring.New()}}
	n := mergedDocs(ins)
	if n >= 1<<32-1 {
		return
	}
	if _, err := mergeInto(newSegWriter(&out, n), ins, func() error { return nil }); err != nil {
		if errors.Is(err, ErrCorrupt) {
			checkReadErr(t, err, name)
		}
		return
	}
	m, err := openSegReader(bytes.NewReader(out.Bytes()), int64(out.Len()), "merged", 2, nil)
	if err != nil {
		t.Fatalf("merge output: %v", err)
	}
	if m.docs != n {
		t.Fatalf("merge output: %d documents of %d", m.docs, n)
	}
	for it := m.termIter(); it.next(); {
		if _, err := m.postings(it.e, false); err != nil {
			t.Fatalf("merge output: %v", err)
		}
	}
}

// FuzzSegment feeds arbitrary files to the segment reader, with the page
// checksums fixed up half of the time.
func FuzzSegment(f *testing.F) {
	f.Add(segmentBytes(f, fuzzDocs), false)
	f.Add(segmentBytes(f, nil), false)
	f.Fuzz(func(t *testing.T, data []byte, reseal bool) {
		if reseal {
			data = resealPages(data)
		}
		exerciseSegment(t, data)
	})
}

func logBytes(docs []Document) []byte {
	b := appendLogHeader(nil, 7, 3)
	for _, d := range docs {
		b = appendLogRecord(b, d)
	}
	return b
}

// FuzzLog feeds arbitrary logs to the log scanner: the records it accepts
// must re-encode to exactly the bytes it consumed.
func FuzzLog(f *testing.F) {
	f.Add(logBytes(fuzzDocs))
	f.Add(logBytes(fuzzDocs)[:100])
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, _, err := decodeLogHeader(data); err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
			t.Fatalf("header: %v", err)
		}
		if len(data) < logHeaderSize {
			return
		}
		sc := newLogScanner(bytes.NewReader(data[logHeaderSize:]), int64(len(data)))
		var re []byte
		for {
			doc, ok := sc.next()
			if !ok {
				break
			}
			re = appendLogRecord(re, doc)
		}
		if sc.err != nil {
			t.Fatal(sc.err)
		}
		if !bytes.Equal(re, data[logHeaderSize:sc.end]) {
			t.Fatalf("records re-encode differently")
		}
	})
}

func manifestBytes() []byte {
	del := roaring.BitmapOf(1, 5, 70000)
	m := &manifest{dirID: 9, next: 12, log: 11, cur: []segMeta{{2, roaring.New()}, {8, del}},
		hasPrev: true, prevLog: 9, prev: []segMeta{{2, del}}}
	return m.encode()
}

// FuzzManifest feeds arbitrary manifests to the decoder: an accepted one
// re-encodes to the same bytes.
func FuzzManifest(f *testing.F) {
	f.Add(manifestBytes())
	f.Add((&manifest{dirID: 1, next: 2, log: 1}).encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeManifest(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatal(err)
			}
			return
		}
		if again, err := decodeManifest(m.encode()); err != nil || !bytes.Equal(again.encode(), m.encode()) {
			t.Fatalf("manifest does not round-trip: %v", err)
		}
	})
}

// FuzzPosition feeds arbitrary tokens to Rewind's decoder.
func FuzzPosition(f *testing.F) {
	f.Add(position{dirID: 3, log: 5, off: 1000}.append(nil))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodePosition(data)
		if err != nil {
			if !errors.Is(err, ErrPosition) {
				t.Fatal(err)
			}
			return
		}
		if !bytes.Equal(p.append(nil), data) {
			t.Fatal("position does not round-trip")
		}
	})
}

// TestFuzzSeeds writes the seed corpora with -update; otherwise it checks
// that they are there.
func TestFuzzSeeds(t *testing.T) {
	valid := segmentBytes(t, fuzzDocs)
	seg := map[string][]any{
		"valid":       {valid, false},
		"empty":       {segmentBytes(t, nil), false},
		"bad-crc":     {func() []byte { b := bytes.Clone(valid); b[40]++; return b }(), false},
		"resealed":    {func() []byte { b := bytes.Clone(valid); b[40]++; return b }(), true},
		"truncated":   {valid[:pageSize/2], true},
		"bad-footer":  {func() []byte { b := bytes.Clone(valid); b[pageData-100] = 0xff; return b }(), true},
		"two-docs":    {segmentBytes(t, fuzzDocs[:2]), false},
		"bad-version": {func() []byte { b := bytes.Clone(valid); b[4] = 9; return b }(), true},
	}
	lg := logBytes(fuzzDocs)
	logs := map[string][]any{
		"valid":     {lg},
		"torn":      {lg[:len(lg)-3]},
		"bad-crc":   {func() []byte { b := bytes.Clone(lg); b[logHeaderSize+5]++; return b }()},
		"header":    {lg[:logHeaderSize]},
		"huge-size": {func() []byte { b := bytes.Clone(lg); b[logHeaderSize+3] = 0x7f; return b }()},
	}
	mf := manifestBytes()
	mans := map[string][]any{
		"valid":   {mf},
		"empty":   {(&manifest{dirID: 1, next: 2, log: 1}).encode()},
		"bad-crc": {func() []byte { b := bytes.Clone(mf); b[20]++; return b }()},
	}
	pos := map[string][]any{
		"valid":     {position{dirID: 3, log: 5, off: 1000}.append(nil)},
		"truncated": {position{dirID: 3, log: 5, off: 1000}.append(nil)[:9]},
	}
	for target, seeds := range map[string]map[string][]any{"FuzzSegment": seg, "FuzzLog": logs, "FuzzManifest": mans, "FuzzPosition": pos} {
		dir := filepath.Join("testdata", "fuzz", target)
		for name, args := range seeds {
			path := filepath.Join(dir, name)
			if !*update {
				if _, err := os.Stat(path); err != nil {
					t.Errorf("seed %s missing (go test -run TestFuzzSeeds -update)", path)
				}
				continue
			}
			var b bytes.Buffer
			b.WriteString("go test fuzz v1\n")
			for _, a := range args {
				switch v := a.(type) {
				case []byte:
					fmt.Fprintf(&b, "[]byte(%q)\n", v)
				case bool:
					fmt.Fprintf(&b, "bool(%v)\n", v)
				}
			}
			os.MkdirAll(dir, 0o755)
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
