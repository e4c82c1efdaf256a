package crawlkit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/sinktest"
	"github.com/crawlkit/crawlkit/warc"
)

// The sinks of this package run the conformance suite of package
// sinktest, each with a harness that reads its output back as a reader of
// the format would.

func TestWARCSinkConformance(t *testing.T) {
	sinktest.Run(t, sinktest.Harness{
		Open: func(t *testing.T, dir string) (crawlkit.Sink, error) {
			// Small files, so that pages span several and Rewind
			// removes some.
			return crawlkit.NewWARCSink(&warc.WriterOptions{Dir: dir, MaxFileSize: 2 << 10})
		},
		Pages:            func(t *testing.T, dir string) []string { pages, _ := readWARCDir(t, dir); return pages },
		Exchanges:        func(t *testing.T, dir string) []string { _, xs := readWARCDir(t, dir); return xs },
		RewindAfterWrite: sinktest.RewindFails, // warc.Writer.Rewind: "valid only before this Writer writes a record"
	})
}

// readWARCDir reads the WARC files of dir in name order (the order they
// were written): the target URIs of the response records that a metadata
// record describes (pages) and of those without one (exchanges).
func readWARCDir(t *testing.T, dir string) (pages, exchanges []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	var responses []*warc.Record
	described := map[string]bool{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := warc.NewReader(f, nil)
		if err != nil {
			f.Close()
			t.Fatalf("%s: %v", name, err)
		}
		for rec, err := range rd.All() {
			if err != nil {
				f.Close()
				t.Fatalf("%s: %v", name, err)
			}
			switch rec.Type() {
			case warc.TypeResponse:
				responses = append(responses, rec)
			case warc.TypeMetadata:
				described[rec.Header.Get(warc.FieldConcurrentTo)] = true
			}
		}
		f.Close()
	}
	for _, rec := range responses {
		if described[rec.ID()] {
			pages = append(pages, rec.TargetURI())
		} else {
			exchanges = append(exchanges, rec.TargetURI())
		}
	}
	return pages, exchanges
}

func TestJSONLinesFileConformance(t *testing.T) {
	sinktest.Run(t, sinktest.Harness{
		Open: func(t *testing.T, dir string) (crawlkit.Sink, error) {
			return crawlkit.OpenJSONLines(filepath.Join(dir, "pages.jsonl"))
		},
		Pages: func(t *testing.T, dir string) []string {
			return readJSONLinesFile(t, filepath.Join(dir, "pages.jsonl"))
		},
		RewindAfterWrite: sinktest.RewindCuts, // a lineFile truncates at any time
	})
}

func TestJSONLinesConformance(t *testing.T) {
	sinktest.Run(t, sinktest.Harness{
		Open: func(t *testing.T, dir string) (crawlkit.Sink, error) {
			f, err := os.Create(filepath.Join(dir, "pages.jsonl"))
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { f.Close() })
			return crawlkit.NewJSONLines(f), nil
		},
		Pages: func(t *testing.T, dir string) []string {
			return readJSONLinesFile(t, filepath.Join(dir, "pages.jsonl"))
		},
		NewOnWriter: func(w io.Writer) crawlkit.Sink { return crawlkit.NewJSONLines(w) },
	})
}

// readJSONLinesFile returns the URLs of the PageRecords in the file at
// path, in order.
func readJSONLinesFile(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var urls []string
	dec := json.NewDecoder(f)
	for {
		var rec crawlkit.PageRecord
		err := dec.Decode(&rec)
		if errors.Is(err, io.EOF) {
			return urls
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		urls = append(urls, rec.URL)
	}
}

func TestLinkLogFileConformance(t *testing.T) {
	sinktest.Run(t, sinktest.Harness{
		Open: func(t *testing.T, dir string) (crawlkit.Sink, error) {
			return crawlkit.OpenLinkLog(filepath.Join(dir, "links.log"))
		},
		Pages:            func(t *testing.T, dir string) []string { return readLinkLogFile(t, filepath.Join(dir, "links.log")) },
		RewindAfterWrite: sinktest.RewindCuts,
	})
}

func TestLinkLogConformance(t *testing.T) {
	sinktest.Run(t, sinktest.Harness{
		Open: func(t *testing.T, dir string) (crawlkit.Sink, error) {
			f, err := os.Create(filepath.Join(dir, "links.log"))
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { f.Close() })
			return crawlkit.NewLinkLog(f), nil
		},
		Pages:       func(t *testing.T, dir string) []string { return readLinkLogFile(t, filepath.Join(dir, "links.log")) },
		NewOnWriter: func(w io.Writer) crawlkit.Sink { return crawlkit.NewLinkLog(w) },
	})
}

// readLinkLogFile returns the sources of the link log at path, in order.
func readLinkLogFile(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var urls []string
	err = crawlkit.ReadLinkLog(bufio.NewReader(f),
		func(src string) error { urls = append(urls, src); return nil },
		func(src, dst string) error { return nil })
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return urls
}

// TestIndexDirSinkConformance: the harness owns the index.Dir, as the
// crawler's caller does (IndexDirSink.Close leaves it open). Reopening a
// directory closes the Dir a "killed" sink used first: Dir.Close writes
// no segment (the next OpenDir replays the log, as after a kill), and a
// dead process would have released its lock and merge goroutine too.
func TestIndexDirSinkConformance(t *testing.T) {
	var mu sync.Mutex
	dirs := map[string]*index.Dir{}
	openDir := func(t *testing.T, path string) (*index.Dir, error) {
		mu.Lock()
		defer mu.Unlock()
		if d := dirs[path]; d != nil {
			if err := d.Close(); err != nil {
				t.Errorf("closing the Dir of the abandoned sink: %v", err)
			}
			delete(dirs, path)
		}
		// Small buffers, so that positions cross flushes.
		d, err := index.OpenDir(path, &index.DirOptions{BufferDocs: 4})
		if err != nil {
			return nil, err
		}
		dirs[path] = d
		t.Cleanup(func() {
			mu.Lock()
			defer mu.Unlock()
			if dirs[path] == d {
				delete(dirs, path)
			}
			d.Close()
		})
		return d, nil
	}
	sinktest.Run(t, sinktest.Harness{
		Open: func(t *testing.T, dir string) (crawlkit.Sink, error) {
			d, err := openDir(t, dir)
			if err != nil {
				return nil, err
			}
			return &crawlkit.IndexDirSink{Dir: d}, nil
		},
		Pages: func(t *testing.T, dir string) []string {
			mu.Lock()
			d := dirs[dir]
			mu.Unlock()
			if d == nil {
				var err error
				if d, err = openDir(t, dir); err != nil {
					t.Fatal(err)
				}
			}
			return searchAll(t, d, int(d.Info().Docs))
		},
		Unordered:        true,
		RewindAfterWrite: sinktest.RewindCuts, // index.Dir.Rewind "works at any time"
	})
}

func TestIndexSinkConformance(t *testing.T) {
	var mu sync.Mutex
	shards := map[string]*index.Shard{}
	sinktest.Run(t, sinktest.Harness{
		Open: func(t *testing.T, dir string) (crawlkit.Sink, error) {
			mu.Lock()
			defer mu.Unlock()
			s := index.NewShard(nil)
			shards[dir] = s
			return crawlkit.IndexSink{Shard: s}, nil
		},
		Pages: func(t *testing.T, dir string) []string {
			mu.Lock()
			s := shards[dir]
			mu.Unlock()
			return searchAll(t, s, s.Len())
		},
		Unordered: true,
	})
}

// searchAll returns the URLs of the documents of s that hold
// sinktest.TitleWord (every page the suite writes), and checks that they
// are the docs documents s counts.
func searchAll(t *testing.T, s index.Searcher, docs int) []string {
	t.Helper()
	res, err := s.Search(context.Background(), index.ParseQuery(nil, sinktest.TitleWord, index.Or, docs+100), nil)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, h := range res.Hits {
		urls = append(urls, h.URL)
	}
	if len(urls) != docs {
		t.Errorf("the index counts %d documents, a search for %q finds %d", docs, sinktest.TitleWord, len(urls))
	}
	return urls
}

func TestSinkFuncConformance(t *testing.T) {
	var mu sync.Mutex
	written := map[string][]string{}
	sinktest.Run(t, sinktest.Harness{
		Open: func(t *testing.T, dir string) (crawlkit.Sink, error) {
			return crawlkit.SinkFunc(func(_ context.Context, p *crawlkit.Page) error {
				mu.Lock()
				defer mu.Unlock()
				written[dir] = append(written[dir], strings.Clone(p.URL))
				return nil
			}), nil
		},
		Pages: func(t *testing.T, dir string) []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(written[dir])
		},
	})
}
