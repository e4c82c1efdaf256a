package warc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// page writes exchange i: a response whose size varies with i, its
// request, and metadata naming i, as the crawler's WARC sink does.
func page(t testing.TB, w *Writer, host string, i int) (file string) {
	t.Helper()
	u := fmt.Sprintf("http://%s/%d", host, i)
	resp := append([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"), strings.Repeat("<p>page text</p>", 1+i%7)...)
	file, _, err := w.WriteExchange(u, "127.0.0.1", when, rawReq, resp, map[string]string{"charset": "utf-8", "i": strconv.Itoa(i)})
	if err != nil {
		t.Fatalf("writing %s: %v", u, err)
	}
	return file
}

// exchanges reads every WARC file in dir to its end, in name order, and
// returns the target of each exchange and the file holding it, checking
// that each file starts with its warcinfo record and that each exchange's
// response, request and metadata records follow each other in one file.
func exchanges(t *testing.T, dir string) (urls, files []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents { // os.ReadDir sorts by name
		if sideFile(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		recs := readAll(t, path)
		if len(recs) == 0 {
			continue
		}
		if recs[0].Type() != TypeWarcinfo {
			t.Fatalf("%s starts with a %s record", e.Name(), recs[0].Type())
		}
		recs = recs[1:]
		for len(recs) > 0 {
			if len(recs) < 3 || types(recs[:3]) != "response request metadata" {
				t.Fatalf("%s: an exchange split or torn: %s", e.Name(), types(recs[:min(3, len(recs))]))
			}
			for _, r := range recs[1:3] {
				if r.Header.Get(FieldConcurrentTo) != recs[0].ID() {
					t.Fatalf("%s: %s record of %s not concurrent to its response", e.Name(), r.Type(), recs[0].TargetURI())
				}
			}
			urls = append(urls, recs[0].TargetURI())
			files = append(files, path)
			recs = recs[3:]
		}
	}
	return urls, files
}

func pageURLs(host string, from, to int) []string {
	var u []string
	for i := from; i < to; i++ {
		u = append(u, fmt.Sprintf("http://%s/%d", host, i))
	}
	return u
}

// Writers opened one after another on a directory, within one second or
// with a clock that steps back, never collide on a name, and the names
// sort in the order the files were written.
func TestNamesAcrossRestarts(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		clocks []time.Time
	}{
		{"same second", []time.Time{t0, t0, t0}},
		{"one second apart", []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second)}},
		{"clock steps back", []time.Time{t0, t0.Add(-time.Hour), t0.Add(time.Second)}},
	}
	for _, tt := range tests {
		for _, uncompressed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/uncompressed=%v", tt.name, uncompressed), func(t *testing.T) {
				dir := t.TempDir()
				var written []string
				for i, now := range tt.clocks {
					w, err := NewWriter(&WriterOptions{Dir: dir, Uncompressed: uncompressed, Now: func() time.Time { return now }})
					if err != nil {
						t.Fatal(err)
					}
					written = append(written, filepath.Base(page(t, w, "h.sim.test", i)))
					if i%2 == 0 {
						w.Close() // the others are abandoned, as by a kill
					}
				}
				var names []string
				ents, _ := os.ReadDir(dir)
				for _, e := range ents {
					if !sideFile(e.Name()) {
						names = append(names, e.Name())
					}
				}
				if !slices.Equal(names, written) || len(slices.Compact(slices.Clone(names))) != len(tt.clocks) {
					t.Fatalf("files in name order %q, written %q", names, written)
				}
				if urls, _ := exchanges(t, dir); !slices.Equal(urls, pageURLs("h.sim.test", 0, len(tt.clocks))) {
					t.Errorf("exchanges %q", urls)
				}
			})
		}
	}
}

// A file is created only under a free name: a name taken since the Writer
// listed the directory is skipped. So it is on a file system without
// hard links, where files are created in place rather than linked to
// their names.
func TestNameTaken(t *testing.T) {
	for _, hardLinks := range []bool{true, false} {
		t.Run(fmt.Sprintf("hardLinks=%v", hardLinks), func(t *testing.T) {
			if !hardLinks {
				link = func(oldname, newname string) error {
					return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: errors.ErrUnsupported}
				}
				defer func() { link = os.Link }()
			}
			dir := t.TempDir()
			now := func() time.Time { return when }
			w, err := NewWriter(&WriterOptions{Dir: dir, Now: now, MaxFileSize: 1500})
			if err != nil {
				t.Fatal(err)
			}
			taken := filepath.Join(dir, "crawlkit-"+when.Format(stampLayout)+"-00000.warc.gz")
			if err := os.WriteFile(taken, []byte("another crawl's"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got, want := filepath.Base(page(t, w, "h.sim.test", 0)), "crawlkit-"+when.Format(stampLayout)+"-00001.warc.gz"; got != want {
				t.Errorf("file %s, want %s", got, want)
			}
			for i := 1; i < 6; i++ { // past a few rotations
				page(t, w, "h.sim.test", i)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if len(w.Files()) < 3 {
				t.Errorf("%d files: no rotation to test", len(w.Files()))
			}
			if b, _ := os.ReadFile(taken); string(b) != "another crawl's" {
				t.Errorf("the taken file was overwritten")
			}
			os.Remove(taken)
			if urls, _ := exchanges(t, dir); !slices.Equal(urls, pageURLs("h.sim.test", 0, 6)) {
				t.Errorf("exchanges %q", urls)
			}
			checkArchive(t, dir, true)
		})
	}
}

// Rotation happens only between exchanges: at any MaxFileSize, every
// exchange's records share a file, and a size under one exchange gives
// each exchange its own file.
func TestExchangeNeverSplit(t *testing.T) {
	const n = 25
	for _, size := range []int64{1, 200, 700, 1500, 3000, 1 << 20} {
		for _, uncompressed := range []bool{false, true} {
			t.Run(fmt.Sprintf("max=%d/uncompressed=%v", size, uncompressed), func(t *testing.T) {
				dir := t.TempDir()
				w, err := NewWriter(&WriterOptions{Dir: dir, MaxFileSize: size, Uncompressed: uncompressed})
				if err != nil {
					t.Fatal(err)
				}
				var wrote []string
				for i := range n {
					wrote = append(wrote, page(t, w, "h.sim.test", i))
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				urls, files := exchanges(t, dir)
				if !slices.Equal(urls, pageURLs("h.sim.test", 0, n)) {
					t.Fatalf("exchanges %q", urls)
				}
				if !slices.Equal(files, wrote) {
					t.Errorf("exchanges read from %q, WriteExchange reported %q", files, wrote)
				}
				if size == 1 && len(w.Files()) != n {
					t.Errorf("%d files, want one per exchange", len(w.Files()))
				}
			})
		}
	}
}

// TestEncodedInParallel encodes exchanges in many goroutines and appends
// them in turn over files that rotate all the time: every record names
// the warcinfo record of the file it is in, every exchange is whole and
// in one file, and each one is there once.
func TestEncodedInParallel(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(&WriterOptions{Dir: dir, MaxFileSize: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 40
	errs := make(chan error, goroutines)
	for g := range goroutines {
		go func() {
			for i := range each {
				u := fmt.Sprintf("http://g%d.test/%d", g, i)
				resp := append([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"), strings.Repeat("<p>text</p>", 1+i%9)...)
				e, err := w.EncodeExchange(u, "", when, rawReq, resp, map[string]string{"i": strconv.Itoa(i)}, "")
				if err == nil {
					_, _, err = w.WriteEncoded(e)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range goroutines {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	urls, files := exchanges(t, dir)
	if len(urls) != goroutines*each {
		t.Fatalf("%d exchanges read back, want %d", len(urls), goroutines*each)
	}
	if slices.Sort(urls); len(slices.Compact(slices.Clone(urls))) != len(urls) {
		t.Error("an exchange was written twice")
	}
	if n := len(slices.Compact(slices.Clone(files))); n < 10 {
		t.Errorf("only %d files: the test did not rotate often", n)
	}
	for _, path := range w.Files() {
		recs := readAll(t, path)
		info := recs[0].ID()
		for _, r := range recs[1:] {
			if got := r.Header.Get(FieldWarcinfoID); got != info {
				t.Fatalf("%s: a %s record names warcinfo %s, the file's is %s", filepath.Base(path), r.Type(), got, info)
			}
		}
	}
}
