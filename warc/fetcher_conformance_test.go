package warc_test

import (
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchertest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/warc"
)

// TestReplayFetcherConformance runs the fetchertest suite on Replay over
// an archive of the suite's web: its answers to fetchertest.URLs, as
// received, written with WriteExchange (gzip-compressed records, and
// uncompressed ones).
func TestReplayFetcherConformance(t *testing.T) {
	for _, uncompressed := range []bool{false, true} {
		name := "gzip"
		if uncompressed {
			name = "uncompressed"
		}
		t.Run(name, func(t *testing.T) {
			fetchertest.Run(t, fetchertest.Harness{
				New: func(t *testing.T, web *fetchtest.Web) fetch.Fetcher {
					w, err := warc.NewWriter(&warc.WriterOptions{Dir: t.TempDir(), Uncompressed: uncompressed})
					if err != nil {
						t.Fatal(err)
					}
					when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
					for _, e := range fetchertest.Record(t, web, fetchertest.URLs(web)) {
						if _, _, err := w.WriteExchange(e.URL, "127.0.0.1", when, nil, e.Response, nil); err != nil {
							t.Fatal(err)
						}
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					r, err := warc.OpenReplay(w.Files(), nil)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { r.Close() })
					return r
				},
			})
		})
	}
}
