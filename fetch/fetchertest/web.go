package fetchertest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// slowLabel is the host of the suite's web that answers only after a
// minute (Config.HostLatency), for the cancellation checks.
const slowLabel = fetchtest.DeepTrap

// newWeb starts the web the suite runs on: three small ordinary hosts and
// the special ones, pages that never change, one host that is slow.
func newWeb(t *testing.T) *fetchtest.Web {
	// Seed 7 gives the three hosts 41 pages, among them PDF, PNG and JSON
	// resources.
	cfg := fetchtest.Config{Seed: 7, Hosts: 3, MeanPages: 8, MaxPages: 24, Mirrors: -1, NearDuplicates: -1,
		ChangePeriods: []time.Duration{0}, RetryAfter: time.Second, Domain: "sim.test"}
	cfg.HostLatency = map[string]time.Duration{slowLabel + "." + cfg.Domain: time.Minute}
	w := fetchtest.NewWeb(cfg)
	t.Cleanup(w.Close)
	return w
}

// Resolver returns a dns.Resolver that answers 127.0.0.1 for every name
// under w's domain and IP literals as they are, and fails every other
// name with a dns.NotFound *dns.Error, so that a fetcher using it talks
// to w's server and nowhere else. Safe for concurrent use.
func Resolver(w *fetchtest.Web) dns.Resolver {
	suffix := "." + w.Domain()
	lo := netip.MustParseAddr("127.0.0.1")
	return dns.ResolverFunc(func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, err := netip.ParseAddr(host); err == nil {
			return []netip.Addr{a}, nil
		}
		if strings.HasSuffix(strings.ToLower(strings.TrimSuffix(host, ".")), suffix) {
			return []netip.Addr{lo}, nil
		}
		return nil, &dns.Error{Name: host, Kind: dns.NotFound, Err: dns.NotFound}
	})
}

// WebOptions returns the options of a fetch.HTTP that reaches w: its
// Resolver maps w's host names to 127.0.0.1 (see Resolver), AllowPrivate
// lets it dial loopback, and every other field is the default. Each call
// returns new options, for fetch.NewHTTP or to change first.
func WebOptions(w *fetchtest.Web) *fetch.Options {
	return &fetch.Options{Resolver: Resolver(w), AllowPrivate: true}
}

// URLs returns the URLs the suite fetches from w, for fetchers that must
// be filled with their answers beforehand: every page and resource (HTML,
// PDF, PNG, JSON) of the ordinary hosts, the first host's robots.txt and
// sitemaps (XML and gzip), pages in ISO-8859-1 and windows-1252,
// redirects (relative and absolute Location, a self loop), error statuses
// and a path the web does not have.
func URLs(w *fetchtest.Web) []string {
	var out []string
	for _, h := range w.OrdinaryHosts() {
		out = append(out, w.PagesOf(h)...)
	}
	host := w.OrdinaryHosts()[0]
	for _, p := range []string{"/robots.txt", "/sitemap.xml", "/sitemaps/pages-2.xml.gz", "/no-such-page"} {
		out = append(out, w.URL(host, p))
	}
	for _, label := range []string{fetchtest.Latin1, fetchtest.Windows1252} {
		pages := w.PagesOf(w.Host(label))
		out = append(out, pages[:min(2, len(pages))]...)
	}
	redir := w.Host(fetchtest.Redirects)
	for _, p := range []string{"/chain/0/0", "/chain/0/1", "/chain/1/0", "/chain/1/1", "/loop/1/0"} {
		if u := w.URL(redir, p); w.Status(u)/100 == 3 {
			out = append(out, u)
		}
	}
	st := w.Host(fetchtest.Statuses)
	for _, code := range []string{"404", "410", "429", "500", "503"} {
		out = append(out, w.URL(st, "/"+code+"/x"))
	}
	return out
}

// Exchange is one answer of the web as received: for fetchers that answer
// from stored content, and for the suite's own expectations.
type Exchange struct {
	// URL is the URL asked for.
	URL string
	// Response is the HTTP/1.1 response message: status line, header
	// and body as sent, Content-Encoding (gzip) not removed.
	Response []byte
}

// Record asks w for each of urls the way a crawler does (GET, gzip
// accepted, redirects not followed) and returns the answers as received,
// in the order of urls. It fails tb if w does not answer.
func Record(tb testing.TB, w *fetchtest.Web, urls []string) []Exchange {
	tb.Helper()
	tr := &http.Transport{DialContext: w.DialContext, DisableCompression: true}
	defer tr.CloseIdleConnections()
	out := make([]Exchange, 0, len(urls))
	for _, u := range urls {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			tb.Fatalf("fetchertest: %s: %v", u, err)
		}
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("User-Agent", "fetchertest")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			tb.Fatalf("fetchertest: %s: %v", u, err)
		}
		raw, err := httputil.DumpResponse(resp, true)
		resp.Body.Close()
		if err != nil {
			tb.Fatalf("fetchertest: %s: %v", u, err)
		}
		out = append(out, Exchange{URL: u, Response: raw})
	}
	return out
}

// parsed is an Exchange taken apart: what a fetcher must report for it.
type parsed struct {
	status   int
	header   http.Header
	body     []byte // Content-Encoding removed, in the server's charset
	location string // the Location header, "" if none
}

func parse(tb testing.TB, e Exchange) parsed {
	tb.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(e.Response)), nil)
	if err != nil {
		tb.Fatalf("fetchertest: %s: recorded answer: %v", e.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("fetchertest: %s: recorded body: %v", e.URL, err)
	}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			tb.Fatalf("fetchertest: %s: recorded gzip body: %v", e.URL, err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			tb.Fatalf("fetchertest: %s: recorded gzip body: %v", e.URL, err)
		}
	}
	return parsed{status: resp.StatusCode, header: resp.Header, body: body, location: resp.Header.Get("Location")}
}
