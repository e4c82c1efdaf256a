package sinktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/sinktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// refSink is a sink with every capability, on a JSON Lines file: pages
// are records of depth ≥ 0, exchanges records of depth -1. Unless broken
// names a rule to break, it passes the suite.
type refSink struct {
	*crawlkit.JSONLinesFile
	broken string

	mu    sync.Mutex
	held  *crawlkit.Page // "retains-page": the page written at the next Write
	flips atomic.Int32
}

var _ interface {
	crawlkit.PreparingSink
	crawlkit.ExchangeSink
	crawlkit.WireSink
} = (*refSink)(nil)

func (s *refSink) Write(ctx context.Context, p *crawlkit.Page) error {
	switch s.broken {
	case "loses-concurrent":
		// A Write that meets another in progress is dropped.
		if !s.mu.TryLock() {
			return nil
		}
		defer s.mu.Unlock()
		time.Sleep(200 * time.Microsecond)
	case "retains-page":
		// The page is encoded later, after the crawler reused it.
		s.mu.Lock()
		defer s.mu.Unlock()
		prev := s.held
		s.held = p
		if prev == nil {
			return nil
		}
		return s.JSONLinesFile.Write(ctx, prev)
	}
	return s.JSONLinesFile.Write(ctx, p)
}

func (s *refSink) Close() error {
	if s.held != nil {
		s.JSONLinesFile.Write(context.Background(), s.held)
	}
	return s.JSONLinesFile.Close()
}

func (s *refSink) Prepare(ctx context.Context, p *crawlkit.Page) (crawlkit.Prepared, error) {
	if s.broken == "prepare-drops" {
		return nothing{}, nil
	}
	return s.JSONLinesFile.Prepare(ctx, p)
}

type nothing struct{}

func (nothing) Write() error { return nil }

func (s *refSink) Rewind(pos []byte) error {
	switch s.broken {
	case "rewind-keeps":
		return nil
	case "malformed-accepted":
		s.JSONLinesFile.Rewind(pos)
		return nil
	}
	return s.JSONLinesFile.Rewind(pos)
}

func (s *refSink) Exchange(ctx context.Context, resp *fetch.Response, fetched time.Time) error {
	depth := -1
	if s.broken == "exchange-as-page" {
		depth = 0
	}
	return s.JSONLinesFile.Write(ctx, &crawlkit.Page{URL: resp.URL.String(), Depth: depth, Fetched: fetched, Response: resp})
}

func (s *refSink) WantsWire() bool {
	if s.broken == "wire-flips" {
		return s.flips.Add(1)%2 == 0
	}
	return true
}

// closingSink is a sink on a writer that closes the writer.
type closingSink struct {
	*crawlkit.JSONLines
	w io.Writer
}

func (s closingSink) Close() error {
	err := s.JSONLines.Close()
	if c, ok := s.w.(io.Closer); ok {
		c.Close()
	}
	return err
}

func refHarness(broken string) sinktest.Harness {
	return sinktest.Harness{
		Open: func(t *testing.T, dir string) (crawlkit.Sink, error) {
			f, err := crawlkit.OpenJSONLines(filepath.Join(dir, "out.jsonl"))
			if err != nil {
				return nil, err
			}
			return &refSink{JSONLinesFile: f, broken: broken}, nil
		},
		Pages:     func(t *testing.T, dir string) []string { return records(t, dir, true) },
		Exchanges: func(t *testing.T, dir string) []string { return records(t, dir, false) },
		NewOnWriter: func(w io.Writer) crawlkit.Sink {
			if broken == "closes-writer" {
				return closingSink{crawlkit.NewJSONLines(w), w}
			}
			return crawlkit.NewJSONLines(w)
		},
		RewindAfterWrite: sinktest.RewindCuts,
	}
}

// records returns the URLs of the pages (or the exchanges) in dir.
func records(t *testing.T, dir string, pages bool) []string {
	f, err := os.Open(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var urls []string
	for dec := json.NewDecoder(f); ; {
		var rec crawlkit.PageRecord
		if err := dec.Decode(&rec); errors.Is(err, io.EOF) {
			return urls
		} else if err != nil {
			t.Fatal(err)
		}
		if (rec.Depth >= 0) == pages {
			urls = append(urls, rec.URL)
		}
	}
}

// TestReference: the suite passes a sink that keeps its rules.
func TestReference(t *testing.T) {
	sinktest.Run(t, refHarness(""))
}

// TestBrokenSinkHelper is run by TestSuiteCatchesBrokenSinks in a child
// process.
func TestBrokenSinkHelper(t *testing.T) {
	how := os.Getenv("SINKTEST_BROKEN")
	if how == "" {
		t.Skip("run by TestSuiteCatchesBrokenSinks")
	}
	sinktest.Run(t, refHarness(how))
}

// TestSuiteCatchesBrokenSinks checks the suite: a sink breaking one rule
// fails the check that covers it.
func TestSuiteCatchesBrokenSinks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"rewind-keeps":       "Rewind",
		"malformed-accepted": "RewindMalformed",
		"loses-concurrent":   "Concurrent",
		"retains-page":       "NoRetain",
		"closes-writer":      "LeavesWriterOpen",
		"prepare-drops":      "Prepare",
		"exchange-as-page":   "Exchange",
		"wire-flips":         "WantsWire",
	} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBrokenSinkHelper$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "SINKTEST_BROKEN="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a sink that %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenSinkHelper/"+check+" ") {
				t.Fatalf("the suite did not fail %s for a sink that %s:\n%s", check, how, out)
			}
		})
	}
}
