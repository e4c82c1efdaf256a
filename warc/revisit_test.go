package warc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	story   = strings.Repeat("<p>one story, syndicated</p>", 20) // 560 bytes
	storyV2 = story + "<p>with a correction</p>"
)

func respWith(header, body string) []byte {
	if header != "" {
		header += "\r\n"
	}
	return []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + header + "\r\n" + body)
}

func TestRevisitRecords(t *testing.T) {
	type ex struct {
		url       string
		resp      []byte
		truncated string
		want      string // "response", or "revisit of N": the exchange it refers to
	}
	for _, tt := range []struct {
		name string
		opts WriterOptions
		ex   []ex
	}{
		{"identical payloads", WriterOptions{}, []ex{
			{"http://a.sim.test/", respWith("X-A: 1", story), "", "response"},
			{"http://b.sim.test/", respWith("X-B: 2", story), "", "revisit of 0"},
			{"http://a.sim.test/", respWith("X-A: 3", story), "", "revisit of 0"},
		}},
		{"near-duplicates stay responses", WriterOptions{}, []ex{
			{"http://a.sim.test/", respWith("X-A: 1", story), "", "response"},
			{"http://b.sim.test/", respWith("X-A: 1", storyV2), "", "response"},
			{"http://c.sim.test/", respWith("X-A: 1", storyV2), "", "revisit of 1"},
		}},
		{"small payloads in full", WriterOptions{}, []ex{
			{"http://a.sim.test/", respWith("", story[:MinRevisitPayload-1]), "", "response"},
			{"http://b.sim.test/", respWith("", story[:MinRevisitPayload-1]), "", "response"},
			{"http://c.sim.test/", respWith("", story[:MinRevisitPayload]), "", "response"},
			{"http://d.sim.test/", respWith("", story[:MinRevisitPayload]), "", "revisit of 2"},
		}},
		{"truncated ones neither refer nor are referred to", WriterOptions{}, []ex{
			{"http://a.sim.test/", respWith("", story), TruncatedLength, "response"},
			{"http://b.sim.test/", respWith("", story), "", "response"},
			{"http://c.sim.test/", respWith("", story), TruncatedLength, "response"},
			{"http://d.sim.test/", respWith("", story), "", "revisit of 1"},
		}},
		{"NoRevisits", WriterOptions{NoRevisits: true}, []ex{
			{"http://a.sim.test/", respWith("", story), "", "response"},
			{"http://b.sim.test/", respWith("", story), "", "response"},
		}},
		{"MaxDigests: the first distinct payloads are remembered", WriterOptions{MaxDigests: 1}, []ex{
			{"http://a.sim.test/", respWith("", story), "", "response"},
			{"http://b.sim.test/", respWith("", storyV2), "", "response"},
			{"http://c.sim.test/", respWith("", storyV2), "", "response"},
			{"http://d.sim.test/", respWith("", story), "", "revisit of 0"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Dir = t.TempDir()
			w, err := NewWriter(&opts)
			if err != nil {
				t.Fatal(err)
			}
			date := when
			var offs []int64
			for _, e := range tt.ex {
				_, off, err := w.WriteTruncatedExchange(e.url, "127.0.0.1", date, rawReq, e.resp, map[string]string{"depth": "0"}, e.truncated)
				if err != nil {
					t.Fatal(err)
				}
				offs = append(offs, off)
				date = date.Add(time.Second)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			recs := readAll(t, w.Files()[0])
			at := map[int64]*Record{}
			for _, r := range recs {
				at[r.Offset] = r
			}
			for i, e := range tt.ex {
				r := at[offs[i]]
				if r == nil {
					t.Fatalf("exchange %d: no record at %d", i, offs[i])
				}
				got := r.Type()
				if got == TypeRevisit {
					j := -1
					for k := range i {
						if at[offs[k]].ID() == r.Header.Get(FieldRefersTo) {
							j = k
						}
					}
					got = fmt.Sprintf("revisit of %d", j)
					checkRevisit(t, r, at[offs[max(j, 0)]], e.resp)
				}
				if got != e.want {
					t.Errorf("exchange %d (%s): %s, want %s", i, e.url, got, e.want)
				}
				// The request and metadata records name the record
				// written, revisit or response.
				for _, c := range recs {
					if c.Header.Get(FieldConcurrentTo) == r.ID() && c.TargetURI() != e.url {
						t.Errorf("exchange %d: a %s record of %s is concurrent to it", i, c.Type(), c.TargetURI())
					}
				}
			}
			checkIndexAgrees(t, w.Files()[0])
		})
	}
}

// checkRevisit checks a revisit record against its original and the
// response it replaces.
func checkRevisit(t *testing.T, rev, orig *Record, resp []byte) {
	t.Helper()
	head := resp[:len(resp)-len(HTTPPayload(resp))]
	for _, c := range []struct{ field, want string }{
		{FieldProfile, ProfileIdenticalPayload},
		{FieldRefersTo, orig.ID()},
		{FieldRefersToTargetURI, orig.TargetURI()},
		{FieldRefersToDate, orig.Header.Get(FieldDate)},
		{FieldPayloadDigest, orig.Header.Get(FieldPayloadDigest)},
		{FieldPayloadDigest, Digest(HTTPPayload(resp))},
		{FieldBlockDigest, Digest(head)},
		{FieldContentType, "application/http;msgtype=response"},
		{FieldTruncated, ""},
	} {
		if got := rev.Header.Get(c.field); got != c.want {
			t.Errorf("revisit %s: %q, want %q", c.field, got, c.want)
		}
	}
	if !bytes.Equal(rev.Block, head) {
		t.Errorf("revisit block %q, want the HTTP headers %q", rev.Block, head)
	}
}

// A resumed Writer refers to the originals written before the position
// it rewinds to, and to none of those cut off after it. It learns those
// of the files closed before the position's from their originals lists
// and reads only the position's file, unless a list is missing, cut
// short or names another size: that file is then read too, and its list
// written again.
func TestRevisitsAcrossRewind(t *testing.T) {
	for _, tc := range []struct {
		noIndex bool
		lists   string // what becomes of the originals lists before the Rewind
	}{{false, "kept"}, {true, "kept"}, {false, "removed"}, {false, "cut"}, {false, "resized"}} {
		noIndex := tc.noIndex
		t.Run(fmt.Sprintf("noIndex=%v/lists %s", noIndex, tc.lists), func(t *testing.T) {
			dir := t.TempDir()
			opts := &WriterOptions{Dir: dir, MaxFileSize: 4 << 10, NoIndex: noIndex}
			w, err := NewWriter(opts)
			if err != nil {
				t.Fatal(err)
			}
			payload := func(i int) string { return fmt.Sprintf("%03d%s", i, story) }
			write := func(w *Writer, u string, i int) *Record {
				t.Helper()
				file, off, err := w.WriteExchange(u, "", when, rawReq, respWith("", payload(i)), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range readAll(t, file) {
					if r.Offset == off {
						return r
					}
				}
				t.Fatalf("no record at %d of %s", off, file)
				return nil
			}
			before := map[int]*Record{}
			for i := range 30 { // several files
				before[i] = write(w, fmt.Sprintf("http://a.sim.test/%d", i), i)
			}
			pos := position0(t, w)
			for i := 30; i < 38; i++ { // cut off by the rewind: rotated, indexed, then lost
				write(w, fmt.Sprintf("http://a.sim.test/%d", i), i)
			}
			tear(t, w.Files()[len(w.Files())-1], false)
			// Killed: w is abandoned, not closed.
			pp, err := parsePosition(pos)
			if err != nil {
				t.Fatal(err)
			}
			closed := 0 // files closed before the position's
			for _, f := range w.Files() {
				if filepath.Base(f) == pp.file {
					break
				}
				closed++
				if closed > 2 {
					continue // the first two lists are changed
				}
				switch tc.lists {
				case "removed":
					os.Remove(f + OriginalsSuffix)
				case "cut":
					data, _ := os.ReadFile(f + OriginalsSuffix)
					os.WriteFile(f+OriginalsSuffix, data[:len(data)-5], 0o644)
				case "resized":
					data, _ := os.ReadFile(f + OriginalsSuffix)
					os.WriteFile(f+OriginalsSuffix, bytes.Replace(data, []byte(`"size":`), []byte(`"size":1`), 1), 0o644)
				}
			}
			if closed < 3 {
				t.Fatalf("%d files before the position's, want several", closed)
			}

			w2, err := NewWriter(opts)
			if err != nil {
				t.Fatal(err)
			}
			reread := 0
			testHookKill = func(step string) {
				if step == "reread" {
					reread++
				}
			}
			err = w2.Rewind(pos)
			testHookKill = nil
			if err != nil {
				t.Fatal(err)
			}
			// The position's file, and the files of the two changed lists.
			want := 1
			if tc.lists != "kept" {
				want = 3
			}
			if reread != want {
				t.Errorf("Rewind read %d files back, want %d", reread, want)
			}
			for i := range 38 {
				r := write(w2, fmt.Sprintf("http://b.sim.test/%d", i), i)
				if i < 30 {
					if r.Type() != TypeRevisit || r.Header.Get(FieldRefersTo) != before[i].ID() {
						t.Errorf("payload %d, written before the position: a %s referring to %q, want a revisit of %s", i, r.Type(), r.Header.Get(FieldRefersTo), before[i].ID())
					}
				} else if r.Type() != TypeResponse {
					t.Errorf("payload %d, cut off by the rewind: a %s referring to %q, want a response", i, r.Type(), r.Header.Get(FieldRefersTo))
				}
			}
			if err := w2.Close(); err != nil {
				t.Fatal(err)
			}
			checkArchive(t, dir, !noIndex)
		})
	}
}

// checkArchive checks the WARC files of dir as a whole: every revisit
// refers to a response of the directory, and, with indexes, every WARC
// file has one that agrees with it and no index is left without its file.
func checkArchive(t *testing.T, dir string, indexed bool) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var revisits []*Record
	tables := map[string]*digestTable{} // by series
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		switch {
		case sideFile(e.Name()):
			if _, err := os.Stat(strings.TrimSuffix(strings.TrimSuffix(path, IndexSuffix), OriginalsSuffix)); err != nil {
				t.Errorf("%s outlives its WARC file", e.Name())
			}
			continue
		case strings.HasSuffix(e.Name(), ".tmp"):
			t.Errorf("temporary file %s left", e.Name())
			continue
		}
		recs := readAll(t, path)
		var series string
		if len(recs) > 0 {
			series = warcField(recs[0].Block, seriesField)
		}
		table := tables[series]
		if table == nil {
			table = newDigestTable(defaultMaxDigests)
			tables[series] = table
		}
		var origs []origEntry
		for _, r := range recs {
			switch r.Type() {
			case TypeResponse:
				ids[r.ID()] = true
			case TypeRevisit:
				revisits = append(revisits, r)
			}
			if d, o, ok := originalOf(r); ok {
				if e, ok := table.add(d, o); ok {
					origs = append(origs, e)
				}
			}
		}
		// Its originals, if listed, are those reading it finds.
		if head, listed, err := readOriginals(path); err == nil {
			st, _ := os.Stat(path)
			if head.Series != series || head.Size != st.Size() || !slices.Equal(listed, origs) {
				t.Errorf("%s lists %d originals of series %s, %d bytes; the file holds %d of series %s, %d bytes",
					e.Name(), len(listed), head.Series, head.Size, len(origs), series, st.Size())
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v", e.Name(), err)
		}
		_, err := os.Stat(IndexPath(path))
		if !indexed {
			if err == nil {
				t.Errorf("%s has an index, with NoIndex", e.Name())
			}
			continue
		}
		if err != nil {
			t.Errorf("%s has no index: %v", e.Name(), err)
			continue
		}
		checkIndexAgrees(t, path)
	}
	for _, r := range revisits {
		if !ids[r.Header.Get(FieldRefersTo)] {
			t.Errorf("revisit of %s refers to %s, not in the archive", r.TargetURI(), r.Header.Get(FieldRefersTo))
		}
	}
}

// The crash test of the index: a crawl killed at each point of its
// writes, with rotations in between, and resumed from its last position,
// leaves WARC files and indexes that agree, once the resumed Writer
// closes and before (every complete file has its index).
func TestIndexAfterRewind(t *testing.T) {
	for kill := 1; kill <= 24; kill += 3 {
		t.Run(fmt.Sprintf("kill after %d", kill), func(t *testing.T) {
			dir := t.TempDir()
			opts := &WriterOptions{Dir: dir, MaxFileSize: 6 << 10}
			w, err := NewWriter(opts)
			if err != nil {
				t.Fatal(err)
			}
			pos := position0(t, w)
			writeMixed(t, w, kill)
			if kill%2 == 1 {
				// Written, not committed, and past a rotation or two:
				// the position's file may have been indexed with
				// records after the position, which Rewind cuts off.
				pos = position0(t, w)
				for n := len(w.Files()); len(w.Files()) < n+2; {
					writeMixed(t, w, 1)
				}
			}
			if kill%3 == 1 {
				tear(t, w.Files()[len(w.Files())-1], false)
			}
			w2, err := NewWriter(opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := w2.Rewind(pos); err != nil {
				t.Fatal(err)
			}
			// Before the resumed Writer writes: every file left is
			// complete and indexed.
			checkArchive(t, dir, true)
			writeMixed(t, w2, 7)
			if err := w2.Close(); err != nil {
				t.Fatal(err)
			}
			checkArchive(t, dir, true)
		})
	}
}

// A file a killed Writer left without positions: Repair cuts its torn
// tail, IndexFile indexes what is left, and the two agree.
func TestIndexAfterRepair(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(&WriterOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	writeMixed(t, w, 10)
	path := w.Files()[0]
	tear(t, path, false)
	if _, err := IndexFile(path); err == nil {
		t.Fatal("IndexFile indexed a torn file")
	}
	if _, err := Repair(path); err != nil {
		t.Fatal(err)
	}
	n, err := IndexFile(path)
	if err != nil || n != 10 {
		t.Fatalf("IndexFile: %d lines, %v; want 10", n, err)
	}
	checkArchive(t, dir, true)
}

// BenchmarkDigestTable measures the memory of the table revisits are
// found in, per payload remembered: the figure behind MaxDigests' default.
func BenchmarkDigestTable(b *testing.B) {
	const n = 100_000
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		t := newDigestTable(n)
		for i := range n {
			u := fmt.Sprintf("http://h%03d.sim.test/archive/2026/%06d/a-story-title.html", i%500, i)
			t.add(Digest([]byte(u)), original{id: NewRecordID(), uri: u, date: "2026-11-26T12:00:00Z"})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/digest")
		runtime.KeepAlive(t)
	}
}

// sideFile reports whether name is a file a Writer writes beside its
// WARC files: an index or an originals list.
func sideFile(name string) bool {
	return strings.HasSuffix(name, IndexSuffix) || strings.HasSuffix(name, OriginalsSuffix)
}
