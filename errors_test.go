package crawlkit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestErrorMessage: an Error says "crawlkit: " once whatever its cause,
// and errors.Is reaches the cause.
func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Op: "loading the state", Err: ErrStateClosed}, "crawlkit: loading the state: state closed"},
		{&Error{Op: "rewinding sink 0", Err: errors.Join(ErrSinkBehind)}, "crawlkit: rewinding sink 0: sink file is shorter than the crawl's saved position"},
		{&Error{Op: "loading the state", Err: errors.New("crawldb: load /s/db: corrupt record")}, "crawlkit: loading the state: crawldb: load /s/db: corrupt record"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
		if !errors.Is(tc.err, tc.err.Err) {
			t.Errorf("%v does not unwrap", tc.err)
		}
	}
}

// TestResumeSinkBehindMessage resumes a crawl whose link log was cut
// short behind the crawl's back: Run fails with ErrSinkBehind, naming the
// file, with "crawlkit: " once.
func TestResumeSinkBehindMessage(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 5, Hosts: 4, MeanPages: 6, ChangePeriods: []time.Duration{0},
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	state := NewMemState()
	path := filepath.Join(t.TempDir(), "links.tsv")
	run := func() error {
		links, err := OpenLinkLog(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := newTestCrawler(t, web, func(cfg *Config) {
			cfg.State = state
			cfg.Sinks = []Sink{links}
			cfg.MaxPagesPerHost = 20
			cfg.OnPage = func(*Page) { cancel() }
		})
		_, err = c.Run(ctx)
		return err
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	err := run()
	if !errors.Is(err, ErrSinkBehind) {
		t.Fatalf("resume after the link log was cut: %v, want ErrSinkBehind", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, path) || strings.Count(msg, "crawlkit: ") != 1 {
		t.Errorf("%q: want the file named and \"crawlkit: \" once", msg)
	}
}
