package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawldb"
	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/warc"
)

// output is the -out directory: the crawl's state (which locks the
// directory), its settings, and the durable sinks.
type output struct {
	dir   string
	state *crawldb.DB
	index *index.Dir
	sinks []crawlkit.Sink
}

const settingsFile = "settings.json"

// loadSettings reads the settings a crawl saved in dir.
func loadSettings(dir string) (*options, error) {
	b, err := os.ReadFile(filepath.Join(dir, settingsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, usageError{fmt.Sprintf("%s holds no crawl to resume (no %s)", dir, settingsFile)}
	}
	if err != nil {
		return nil, err
	}
	o := defaults()
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, settingsFile), err)
	}
	return &o, nil
}

// openOutput prepares -out: a new crawl needs an empty or absent
// directory, a resumed one its saved state. The state is opened here, so
// the directory is locked before anything else happens.
func openOutput(o *options) (*output, error) {
	if o.out == "" {
		return nil, nil
	}
	if !o.resume {
		ents, err := os.ReadDir(o.out)
		switch {
		case err == nil && len(ents) > 0:
			return nil, usageError{fmt.Sprintf("%s already holds output (%s...): pass -resume to continue the crawl there, or choose an empty directory", o.out, ents[0].Name())}
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return nil, usageError{fmt.Sprintf("-out %s: %v", o.out, err)}
		}
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return nil, usageError{fmt.Sprintf("cannot create -out directory: %v", err)}
		}
	} else if _, err := os.Stat(filepath.Join(o.out, "state")); err != nil {
		return nil, usageError{fmt.Sprintf("%s holds no crawl state to resume", o.out)}
	}
	db, err := crawldb.Open(filepath.Join(o.out, "state"), nil)
	if errors.Is(err, crawldb.ErrLocked) {
		return nil, fmt.Errorf("%s is in use by another crawler process", o.out)
	}
	if err != nil {
		return nil, err
	}
	return &output{dir: o.out, state: db}, nil
}

// saveSettings writes the settings of the crawl, atomically.
func (out *output) saveSettings(o *options) error {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(out.dir, settingsFile)
	if err := os.WriteFile(path+".tmp", append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// configure opens the durable sinks and puts them and the state into cfg.
func (out *output) configure(cfg *crawlkit.Config, o *options) error {
	w, err := crawlkit.NewWARCSink(&warc.WriterOptions{Dir: filepath.Join(out.dir, "warc"), MaxFileSize: 256 << 20, NoRevisits: o.NoRevisits})
	if err != nil {
		return err
	}
	out.sinks = append(out.sinks, w)
	links, err := crawlkit.OpenLinkLog(filepath.Join(out.dir, "links.tsv"))
	if err != nil {
		return err
	}
	out.sinks = append(out.sinks, links)
	pages, err := crawlkit.OpenJSONLines(filepath.Join(out.dir, "pages.jsonl"))
	if err != nil {
		return err
	}
	out.sinks = append(out.sinks, pages)
	if out.index, err = index.OpenDir(filepath.Join(out.dir, "index"), &index.DirOptions{Analyzer: analyzerFor(o)}); err != nil {
		return err
	}
	out.sinks = append(out.sinks, &crawlkit.IndexDirSink{Dir: out.index})
	cfg.Sinks = append(cfg.Sinks, out.sinks...)
	cfg.State = out.state
	return nil
}

// closeAll closes the index and the state, which nothing needs after
// the summary's query; Close after it does nothing.
func (out *output) closeAll() error {
	var err error
	if out.index != nil {
		err = out.index.Close()
		out.index = nil
	}
	if out.state != nil {
		err = errors.Join(err, out.state.Close())
		out.state = nil
	}
	return err
}

// Close closes the index and the state; the sinks were closed by Run.
func (out *output) Close() error { return out.closeAll() }

// titleSink remembers the titles of the first pages, for the summary's
// sample query: the seeds and the pages near them. It keeps at most
// maxTitles.
type titleSink struct {
	mu     sync.Mutex
	titles []string
}

const maxTitles = 100

func (t *titleSink) Write(_ context.Context, p *crawlkit.Page) error {
	if p.Document != nil && p.Document.Title != "" {
		t.mu.Lock()
		if len(t.titles) < maxTitles {
			t.titles = append(t.titles, p.Document.Title)
		}
		t.mu.Unlock()
	}
	return nil
}

func (t *titleSink) Close() error { return nil }

// reindex rebuilds the CDXJ index of every WARC file in o.reindex
// (warc.IndexFile). A crawl writes each file's index when the file is
// complete and its resume rewrites the index of the file it cut back, so
// this is for indexes lost or damaged, or WARC files from elsewhere. A
// file a killed crawl left torn should be repaired first (its resume
// does that, or warc.Repair).
func reindex(_ context.Context, o *options, stdout, _ io.Writer) error {
	ents, err := os.ReadDir(o.reindex)
	if err != nil {
		return err
	}
	files, lines := 0, 0
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".warc") && !strings.HasSuffix(n, ".warc.gz") {
			continue
		}
		k, err := warc.IndexFile(filepath.Join(o.reindex, n))
		if err != nil {
			return err
		}
		files, lines = files+1, lines+k
	}
	fmt.Fprintf(stdout, "crawler: indexed %d WARC files, %d CDXJ lines\n", files, lines)
	return nil
}
