package deduptest_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
)

// brokenDurable breaks one rule of the Durable contract over an
// ExactContent.
type brokenDurable struct {
	how string
	*dedup.ExactContent

	mu  sync.Mutex
	log io.Writer
}

// splitWriter writes each record in two calls.
type splitWriter struct{ w io.Writer }

func (s splitWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p[:len(p)/2])
	if err != nil {
		return n, err
	}
	m, err := s.w.Write(p[len(p)/2:])
	return n + m, err
}

// quietWriter drops write errors.
type quietWriter struct{ w io.Writer }

func (q quietWriter) Write(p []byte) (int, error) {
	q.w.Write(p)
	return len(p), nil
}

func (b *brokenDurable) LogTo(w io.Writer) {
	b.mu.Lock()
	b.log = w
	b.mu.Unlock()
	if w != nil {
		switch b.how {
		case "split-records":
			w = splitWriter{w}
		case "drops-write-errors":
			w = quietWriter{w}
		}
	}
	b.ExactContent.LogTo(w)
}

func (b *brokenDurable) Replay(r io.Reader) (int64, error) {
	if b.how != "torn-tail-is-lost" {
		return b.ExactContent.Replay(r)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	n, err := b.ExactContent.Replay(bytes.NewReader(data))
	if err == nil && n < int64(len(data)) {
		return int64(len(data)), nil // the caller would append after the torn bytes
	}
	return n, err
}

func (b *brokenDurable) Rewrite(w io.Writer) error {
	if b.how != "rewrite-keeps-old-log" {
		return b.ExactContent.Rewrite(w)
	}
	b.mu.Lock()
	old := b.log
	b.mu.Unlock()
	err := b.ExactContent.Rewrite(w)
	b.ExactContent.LogTo(old)
	return err
}

// TestBrokenDurableHelper is run by TestDurableSuiteCatchesBrokenLogs in
// a child process.
func TestBrokenDurableHelper(t *testing.T) {
	how := os.Getenv("DEDUPTEST_BROKEN_DURABLE")
	if how == "" {
		t.Skip("a helper: TestDurableSuiteCatchesBrokenLogs runs it in a child process with DEDUPTEST_BROKEN_DURABLE set")
	}
	deduptest.TestDurable(t, deduptest.DurableHarness{New: func(*testing.T) deduptest.DurableContent {
		return &brokenDurable{how: how, ExactContent: new(dedup.ExactContent)}
	}})
}

// TestDurableSuiteCatchesBrokenLogs checks the suite: an implementation
// breaking one rule fails the check that covers it.
func TestDurableSuiteCatchesBrokenLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"split-records":         "Records",
		"drops-write-errors":    "WriteErrors",
		"torn-tail-is-lost":     "TornTail",
		"rewrite-keeps-old-log": "Rewrite",
	} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenDurableHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "DEDUPTEST_BROKEN_DURABLE="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed an implementation that %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenDurableHelper/"+check) {
				t.Fatalf("the suite did not fail %s for %s:\n%s", check, how, out)
			}
		})
	}
}
