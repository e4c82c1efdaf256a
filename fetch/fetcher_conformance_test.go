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

// throughProxy starts a proxy for one subtest of the suite, and checks
// at its end that if the web was asked anything, the proxy was too.
func throughProxy(t *testing.T, w *fetchtest.Web, cfg fetchtest.ProxyConfig) *fetchtest.Proxy {
	p := fetchtest.NewProxy(cfg)
	before := len(w.Log())
	t.Cleanup(func() {
		if len(w.Log()) > before && len(p.Log()) == 0 {
			t.Error("the web was asked, the proxy never")
		}
		p.Close()
	})
	return p
}

// Every Fetcher of the package passes the fetchertest suite: HTTP (with
// its defaults, keeping the wire bytes, and through each kind of proxy),
// a FetcherFunc around it, and Static filled with the answers HTTP got
// from the suite's web.
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
		{"HTTP/ProxyCONNECT", fetchertest.Harness{New: func(t *testing.T, w *fetchtest.Web) fetch.Fetcher {
			p := throughProxy(t, w, fetchtest.ProxyConfig{User: "crawl", Password: "pw"})
			return newHTTP(t, w, func(o *fetch.Options) { o.Proxy = fetch.ProxyURL(p.HTTPURL()) })
		}}},
		{"HTTP/ProxySOCKS5", fetchertest.Harness{New: func(t *testing.T, w *fetchtest.Web) fetch.Fetcher {
			p := throughProxy(t, w, fetchtest.ProxyConfig{})
			return newHTTP(t, w, func(o *fetch.Options) { o.Proxy = fetch.ProxyURL(p.SOCKS5URL()) })
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
