package fetch_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchertest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// newHTTP returns a fetcher over fetchertest.WebOptions(w) with change
// applied to the options, closed when t ends.
func newHTTP(t *testing.T, w *fetchtest.Web, change func(*fetch.Options)) *fetch.HTTP {
	o := fetchertest.WebOptions(w)
	if change != nil {
		change(o)
	}
	f := fetch.NewHTTP(o)
	t.Cleanup(func() { f.Close() })
	return f
}

// Every Fetcher of the package passes the fetchertest suite: HTTP (with
// its defaults and keeping the wire bytes), a FetcherFunc around it, and
// Static filled with the answers HTTP got from the suite's web.
func TestFetcherConformance(t *testing.T) {
	tests := []struct {
		name string
		h    fetchertest.Harness
	}{
		{"HTTP", fetchertest.Harness{New: func(t *testing.T, w *fetchtest.Web) fetch.Fetcher {
			return newHTTP(t, w, nil)
		}}},
		{"HTTP/KeepWire", fetchertest.Harness{New: func(t *testing.T, w *fetchtest.Web) fetch.Fetcher {
			return newHTTP(t, w, func(o *fetch.Options) { o.KeepWire = true })
		}}},
		{"FetcherFunc", fetchertest.Harness{New: func(t *testing.T, w *fetchtest.Web) fetch.Fetcher {
			return fetch.FetcherFunc(newHTTP(t, w, nil).Fetch)
		}}},
		{"Static", fetchertest.Harness{New: func(t *testing.T, w *fetchtest.Web) fetch.Fetcher {
			f := newHTTP(t, w, nil)
			s := fetch.Static{}
			for _, raw := range fetchertest.URLs(w) {
				u, err := url.Parse(raw)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := f.Fetch(context.Background(), &fetch.Request{URL: u})
				if err != nil {
					t.Fatal(err)
				}
				s[raw] = resp
			}
			return s
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { fetchertest.Run(t, tt.h) })
	}
}
