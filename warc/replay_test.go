package warc_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/warc"
	"go.uber.org/goleak"
)

func parseURL(s string) (*url.URL, error) { return url.Parse(s) }

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// writeArchive writes exchanges (target → raw HTTP response) with a
// Writer and returns the files.
func writeArchive(t testing.TB, opts warc.WriterOptions, pages [][2]string, meta map[string]string) []string {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	w, err := warc.NewWriter(&opts)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, p := range pages {
		req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if _, _, err := w.WriteExchange(p[0], "127.0.0.1", when.Add(time.Duration(i)*time.Second), req, []byte(p[1]), meta); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Files()
}

func TestReplayResponses(t *testing.T) {
	defer goleak.VerifyNone(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("<title>zipped</title>"))
	zw.Close()
	pages := [][2]string{
		{"http://a.test/", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nETag: \"v1\"\r\nLast-Modified: Sun, 22 Nov 2026 10:00:00 GMT\r\nContent-Length: 5\r\n\r\nhello"},
		{"http://a.test/moved", "HTTP/1.1 301 Moved Permanently\r\nLocation: ../new?x=1\r\nContent-Length: 0\r\n\r\n"},
		{"http://a.test/chunked", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"},
		{"http://a.test/gz", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: " + fmt.Sprint(gz.Len()) + "\r\n\r\n" + gz.String()},
		{"http://a.test/latin1", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=iso-8859-1\r\n\r\ncaf\xe9"},
		{"http://a.test/gone", "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\nno"},
		{"http://a.test/png", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG\xe9"},
		{"http://a.test/robots.txt", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nUser-agent: *\nDisallow: /x\n"},
		{"http://a.test/", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: \"v2\"\r\n\r\nnewer"},
		{"http://a.test/broken", "this is not HTTP"},
	}
	for _, gzipped := range []bool{true, false} {
		t.Run(fmt.Sprintf("gzip=%v", gzipped), func(t *testing.T) {
			files := writeArchive(t, warc.WriterOptions{Uncompressed: !gzipped}, pages, nil)
			r, err := warc.OpenReplay(files, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			tests := []struct {
				url, body, ct, charset, loc, etag string
				status                            int
				notArchived                       bool
				protocol                          bool
			}{
				{url: "http://a.test/", status: 200, body: "newer", ct: "text/html", charset: "utf-8", etag: `"v2"`},
				{url: "HTTP://A.TEST:80/", status: 200, body: "newer", ct: "text/html", charset: "utf-8", etag: `"v2"`},
				{url: "http://a.test/moved", status: 301, loc: "http://a.test/new?x=1"},
				{url: "http://a.test/chunked", status: 200, body: "hello world", ct: "text/plain", charset: "utf-8"},
				{url: "http://a.test/gz", status: 200, body: "<title>zipped</title>", ct: "text/html", charset: "utf-8"},
				{url: "http://a.test/latin1", status: 200, body: "café", ct: "text/html", charset: "windows-1252"},
				{url: "http://a.test/gone", status: 404, body: "no", ct: "text/html", charset: "utf-8"},
				{url: "http://a.test/png", status: 200, body: "\x89PNG\xe9", ct: "image/png"},
				{url: "http://a.test/robots.txt", status: 200, body: "User-agent: *\nDisallow: /x\n", ct: "text/plain", charset: "utf-8"},
				{url: "http://b.test/robots.txt", status: 404},
				{url: "http://a.test/nope", notArchived: true},
				{url: "http://b.test/robots.txt?x", notArchived: true},
				{url: "http://a.test/broken", protocol: true},
			}
			for _, tt := range tests {
				resp, err := r.Fetch(context.Background(), &fetch.Request{URL: mustURL(tt.url)})
				var fe *fetch.Error
				switch {
				case tt.notArchived:
					if !errors.Is(err, warc.ErrNotArchived) || !errors.As(err, &fe) || fe.URL != tt.url {
						t.Errorf("%s: err %v, want *fetch.Error wrapping ErrNotArchived", tt.url, err)
					}
					continue
				case tt.protocol:
					if !errors.As(err, &fe) || fe.Kind != fetch.KindProtocol || !errors.Is(err, warc.ErrFormat) {
						t.Errorf("%s: err %v, want a KindProtocol *fetch.Error wrapping ErrFormat", tt.url, err)
					}
					continue
				case err != nil:
					t.Errorf("%s: %v", tt.url, err)
					continue
				}
				loc := ""
				if resp.Location != nil {
					loc = resp.Location.String()
				}
				if resp.Status != tt.status || string(resp.Body) != tt.body || resp.ContentType != tt.ct ||
					resp.Charset != tt.charset || loc != tt.loc || resp.ETag != tt.etag || resp.URL.String() != mustURL(tt.url).String() {
					t.Errorf("%s: got status %d body %q ct %q charset %q loc %q etag %q url %s", tt.url,
						resp.Status, resp.Body, resp.ContentType, resp.Charset, loc, resp.ETag, resp.URL)
				}
				if resp.Timings.Start.IsZero() || resp.Timings.Total <= 0 {
					t.Errorf("%s: timings %+v: the crawler's politeness needs a start and a duration", tt.url, resp.Timings)
				}
			}
			// Conditional fetch of the newest version.
			resp, err := r.Fetch(context.Background(), &fetch.Request{URL: mustURL("http://a.test/"), ETag: `"v2"`})
			if err != nil || !resp.NotModified() || len(resp.Body) != 0 {
				t.Errorf("conditional fetch: %v %+v", err, resp)
			}
			if got := r.Len(); got != 9 {
				t.Errorf("Len = %d, want 9", got)
			}
			if _, _, ok := r.Locate("http://a.test/gz"); !ok {
				t.Error("Locate misses an archived URL")
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := r.Fetch(ctx, &fetch.Request{URL: mustURL("http://a.test/")}); !errors.As(err, new(*fetch.Error)) || !errors.Is(err, context.Canceled) {
				t.Errorf("canceled fetch: %v", err)
			}
		})
	}
}

// TestReplayCharsetFromMetadata: crawlkit's sink stores text converted to
// UTF-8 and the original charset in the metadata record; Replay reports
// the original, as fetch.HTTP did.
func TestReplayCharsetFromMetadata(t *testing.T) {
	files := writeArchive(t, warc.WriterOptions{}, [][2]string{
		{"http://a.test/", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\ncafé"},
	}, map[string]string{"charset": "windows-1252"})
	r, err := warc.OpenReplay(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	resp, err := r.Fetch(context.Background(), &fetch.Request{URL: mustURL("http://a.test/")})
	if err != nil || resp.Charset != "windows-1252" || string(resp.Body) != "café" || resp.Addr != netip.MustParseAddrPort("127.0.0.1:80") {
		t.Fatalf("%v %+v", err, resp)
	}
}

// TestReplaySingleMember reads a file compressed as one gzip member, where
// records cannot be reached by seeking.
func TestReplaySingleMember(t *testing.T) {
	files := writeArchive(t, warc.WriterOptions{Uncompressed: true}, [][2]string{
		{"http://a.test/1", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\none"},
		{"http://a.test/2", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\ntwo"},
	}, nil)
	plain, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(plain)
	zw.Close()
	path := filepath.Join(t.TempDir(), "one.warc.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := warc.OpenReplay([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, n := range []string{"one", "two"} {
		u := "http://a.test/1"
		if n == "two" {
			u = "http://a.test/2"
		}
		resp, err := r.Fetch(context.Background(), &fetch.Request{URL: mustURL(u)})
		if err != nil || string(resp.Body) != n {
			t.Fatalf("%s: %v %+v", u, err, resp)
		}
	}
}

func TestOpenReplayErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.warc")
	os.WriteFile(bad, []byte("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 99999\r\n\r\nshort"), 0o644)
	tests := []struct {
		name  string
		paths []string
		want  error
	}{
		{"missing file", []string{filepath.Join(dir, "none.warc")}, os.ErrNotExist},
		{"truncated record", []string{bad}, warc.ErrFormat},
	}
	for _, tt := range tests {
		_, err := warc.OpenReplay(tt.paths, nil)
		var we *warc.Error
		if !errors.Is(err, tt.want) || !errors.As(err, &we) {
			t.Errorf("%s: %v, want a *warc.Error wrapping %v", tt.name, err, tt.want)
		}
	}
	if _, err := warc.OpenReplayDir(filepath.Join(dir, "nodir"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenReplayDir of a missing directory: %v", err)
	}
}

// crawlOutput is what a crawl leaves: its link log lines and its index.
type crawlOutput struct {
	links map[string]bool
	shard *index.Shard
	pages []string
	stats crawlkit.Stats
	// fetched are the URLs a Fetcher of the test's own was asked for.
	fetched []string
}

func crawl(t *testing.T, web *fetchtest.Web, f fetch.Fetcher, sinks ...crawlkit.Sink) crawlOutput {
	t.Helper()
	var log bytes.Buffer
	out := crawlOutput{links: map[string]bool{}, shard: index.NewShard(nil)}
	var traps []string
	for _, p := range web.Traps() {
		traps = append(traps, mustURL(p).Hostname())
	}
	pages := make(chan string, 10000)
	cfg := crawlkit.Config{
		Seeds:   web.Seeds(),
		Fetcher: f,
		Resolver: dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}),
		AllowPrivate: true,
		Workers:      8,
		DelayFactor:  -1,
		// Each simulated site is a registrable domain of its own.
		PrivateSuffixes: []string{web.Domain()},
		// Which aliases learned URL rules park depends on the order of
		// the fetches, which the replay does not repeat.
		NoURLRules:  true,
		MaxDuration: 30 * time.Second,
		// Spider traps are endless: which of their pages a crawl reaches
		// depends on timing, so they are left out of the comparison.
		Filters: append(frontier.DefaultFilters(), frontier.Domains(nil, traps)),
		Sinks:   append([]crawlkit.Sink{crawlkit.NewLinkLog(&log), crawlkit.IndexSink{Shard: out.shard}}, sinks...),
		OnPage:  func(p *crawlkit.Page) { pages <- p.URL },
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if f != nil {
		cfg.AllowPrivate = false // a Fetcher of its own: the flag is the default fetcher's
		var mu sync.Mutex
		cfg.Fetcher = fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
			mu.Lock()
			out.fetched = append(out.fetched, req.URL.String())
			mu.Unlock()
			return f.Fetch(ctx, req)
		})
	}
	c, err := crawlkit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out.stats, err = c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	close(pages)
	for p := range pages {
		out.pages = append(out.pages, p)
	}
	sort.Strings(out.pages)
	for line := range strings.SplitSeq(log.String(), "\n") {
		if line != "" {
			out.links[line] = true
		}
	}
	return out
}

// TestReplayReproducesCrawl crawls a simulated web with the real crawler
// writing WARC files, a link log and an index, then crawls again with a
// Replay over the archive instead of the network, and compares.
func TestReplayReproducesCrawl(t *testing.T) {
	defer goleak.VerifyNone(t)
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 12, MeanPages: 12, ChangePeriods: []time.Duration{0}, CrawlDelay: 10 * time.Millisecond})
	defer web.Close()
	dir := t.TempDir()
	sink, err := crawlkit.NewWARCSink(&warc.WriterOptions{Dir: dir, MaxFileSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	live := crawl(t, web, nil, sink)
	if len(sink.Files()) < 2 {
		t.Fatalf("want the archive rotated over several files, got %d", len(sink.Files()))
	}

	r, err := warc.OpenReplayDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The archive holds every page, and every other exchange too
	// (robots.txt, redirects, errors: crawlkit.ExchangeSink).
	if r.Len() <= len(live.pages) {
		t.Fatalf("archive holds %d URLs, the crawl fetched %d pages and more", r.Len(), len(live.pages))
	}
	for _, u := range live.pages {
		if _, _, ok := r.Locate(u); !ok {
			t.Fatalf("page %s is not in the archive", u)
		}
	}
	// The web's exact duplicates are archived as revisit records, which
	// the replay must resolve to reach what the crawl reached.
	revisits := 0
	for _, rec := range recordsOf(t, sink.Files()...) {
		if rec.Type() == warc.TypeRevisit {
			revisits++
		}
	}
	if revisits == 0 {
		t.Fatal("no revisit record in the archive: the test needs some")
	}
	requests := len(web.Log())
	replayed := crawl(t, web, r)
	if n := len(web.Log()); n != requests {
		t.Fatalf("the replayed crawl made %d requests to the web", n-requests)
	}

	t.Logf("live crawl: %d pages, %d links, %d files, %d revisits: %v; replay: %v", len(live.pages), len(live.links), len(sink.Files()), revisits, live.stats, replayed.stats)
	if len(live.pages) < 100 {
		t.Fatalf("live crawl fetched only %d pages", len(live.pages))
	}
	// The replay asks for exactly the URLs the live crawl fetched: every
	// exchange is in the archive, duplicates included, and a duplicate's
	// links are followed in both.
	var fetchedLive []string
	for _, r := range web.Log() {
		fetchedLive = append(fetchedLive, "http://"+r.Host+":"+web.Port()+r.Path)
	}
	if got, want := sortedSet(replayed.fetched), sortedSet(fetchedLive); !slices.Equal(got, want) {
		t.Errorf("the replay fetched %d URLs, the live crawl %d", len(got), len(want))
		for _, u := range want {
			if !slices.Contains(got, u) {
				t.Errorf("not fetched by the replay: %s", u)
				break
			}
		}
	}
	// Which copy of a duplicate is kept as the page depends on which was
	// fetched first, so pages, links and documents are compared up to the
	// web's duplicate clusters.
	rep := duplicateRepresentatives(web)
	same := slices.Equal(live.pages, replayed.pages)
	exact := make(map[string]bool) // members of exact-duplicate clusters
	for _, c := range web.ExactDuplicates() {
		for _, u := range c {
			exact[u] = true
		}
	}
	// Texts are the same in both crawls when every page kept differently
	// is a byte-identical copy of the one kept before.
	sameText := true
	if !same {
		var flips []string
		for _, p := range live.pages {
			if !slices.Contains(replayed.pages, p) {
				flips = append(flips, p)
				sameText = sameText && exact[p]
			}
		}
		t.Logf("the replay kept another copy of %d duplicates: %v", len(flips), flips)
	}
	if a, b := mapped(live.pages, rep), mapped(replayed.pages, rep); !slices.Equal(a, b) {
		t.Errorf("pages differ: live %d, replay %d", len(a), len(b))
	}
	// A page's links are a function of its URL and bytes, the same in
	// both crawls: the link log lines of the pages both kept are equal.
	both := make(map[string]bool)
	for _, p := range live.pages {
		if slices.Contains(replayed.pages, p) {
			both[p] = true
		}
	}
	liveLinks, replayLinks := linksFrom(live.links, both), linksFrom(replayed.links, both)
	if len(liveLinks) != len(replayLinks) || len(liveLinks) < len(live.links)/2 {
		t.Errorf("link log: live %d lines (%d of pages both kept), replay %d", len(live.links), len(liveLinks), len(replayLinks))
	}
	for l := range liveLinks {
		if !replayLinks[l] {
			t.Errorf("link %q missing from the replayed graph", l)
			break
		}
	}
	// Every exchange was archived: the replay meets the errors the live
	// crawl met (robots.txt unreachable) and no others.
	if !maps.Equal(live.stats.Errors, replayed.stats.Errors) {
		t.Errorf("errors: live %v, replay %v", live.stats.Errors, replayed.stats.Errors)
	}

	if live.shard.Len() != replayed.shard.Len() {
		t.Errorf("index: live %d documents, replay %d", live.shard.Len(), replayed.shard.Len())
	}
	for _, p := range live.pages {
		if !same {
			break
		}
		if live.shard.Has(p) != replayed.shard.Has(p) {
			t.Errorf("index disagrees on %s", p)
		}
	}
	for _, q := range []string{"river", "mountain garden", "song of the sea", "electric engine"} {
		var hits, urls [2][]string
		for i, s := range []*index.Shard{live.shard, replayed.shard} {
			res, err := s.Search(context.Background(), index.ParseQuery(s.Analyzer(), q, index.Or, 10), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				u := h.URL
				if r, ok := rep[u]; ok {
					u = r
				}
				hits[i] = append(hits[i], fmt.Sprintf("%s %.4f", u, h.Score))
				urls[i] = append(urls[i], u)
			}
		}
		if len(hits[0]) == 0 {
			t.Errorf("query %q: no hits", q)
		}
		// With the same texts indexed the rankings are equal, scores
		// and all; another copy of a near-duplicate has other text (a
		// date line, an advertisement) and moves the scores a little,
		// but not which documents answer.
		if sameText && !slices.Equal(hits[0], hits[1]) {
			t.Errorf("query %q: live %v, replay %v", q, hits[0], hits[1])
		}
		if !sameText && !slices.Equal(sortedSet(urls[0]), sortedSet(urls[1])) {
			t.Errorf("query %q: live %v, replay %v", q, hits[0], hits[1])
		}
	}
}

// duplicateRepresentatives maps every member of one of web's exact or
// near-duplicate clusters to the cluster's first URL; clusters that share
// a member are merged.
func duplicateRepresentatives(web *fetchtest.Web) map[string]string {
	rep := make(map[string]string)
	find := func(u string) string {
		for {
			r, ok := rep[u]
			if !ok || r == u {
				return u
			}
			u = r
		}
	}
	for _, c := range append(web.ExactDuplicates(), web.NearDuplicates()...) {
		root := find(c[0])
		for _, u := range c {
			r := find(u)
			a, b := min(root, r), max(root, r)
			rep[b], rep[a] = a, a
			root = a
		}
	}
	out := make(map[string]string, len(rep))
	for u := range rep {
		out[u] = find(u)
	}
	return out
}

// mapped returns urls with each replaced by its representative, sorted.
func mapped(urls []string, rep map[string]string) []string {
	out := make([]string, 0, len(urls))
	for _, u := range urls {
		if r, ok := rep[u]; ok {
			u = r
		}
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// linksFrom returns the link log lines whose source is in pages.
func linksFrom(lines map[string]bool, pages map[string]bool) map[string]bool {
	out := make(map[string]bool)
	for l := range lines {
		if from, _, _ := strings.Cut(l, "\t"); pages[from] {
			out[l] = true
		}
	}
	return out
}

// sortedSet returns the distinct strings of s, sorted.
func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// ExampleReplay wraps a Replay in a fetch.FetcherFunc that counts what
// the archive could not answer: a Fetcher wrapper, the pattern for
// logging, metrics or fallbacks to the network.
func ExampleReplay() {
	dir, _ := os.MkdirTemp("", "replay")
	defer os.RemoveAll(dir)
	w, _ := warc.NewWriter(&warc.WriterOptions{Dir: dir})
	w.WriteExchange("http://example.test/", "", time.Now(), nil,
		[]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>Archived</title>"), nil)
	w.Close()

	r, err := warc.OpenReplayDir(dir, nil)
	if err != nil {
		panic(err)
	}
	defer r.Close()
	missing := 0
	f := fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
		resp, err := r.Fetch(ctx, req)
		if errors.Is(err, warc.ErrNotArchived) {
			missing++
		}
		return resp, err
	})
	for _, u := range []string{"http://example.test/", "http://example.test/robots.txt", "http://example.test/other"} {
		resp, err := f.Fetch(context.Background(), &fetch.Request{URL: mustURL(u)})
		if err != nil {
			fmt.Println(u, "error:", err)
			continue
		}
		fmt.Printf("%s %d %q %q\n", u, resp.Status, resp.ContentType, resp.Body)
	}
	fmt.Println("not archived:", missing)
	// Output:
	// http://example.test/ 200 "text/html" "<title>Archived</title>"
	// http://example.test/robots.txt 404 "" ""
	// http://example.test/other error: fetch: replay http://example.test/other: other: warc: URL not in the archive
	// not archived: 1
}

// BenchmarkReplayFetch replays pages of 4 KiB from a gzip archive, the
// cost a re-run of a crawl pays per page instead of a network fetch.
func BenchmarkReplayFetch(b *testing.B) {
	var pages [][2]string
	body := strings.Repeat("<p>river and boat </p>", 4096/22)
	for i := range 500 {
		pages = append(pages, [2]string{fmt.Sprintf("http://h%03d.test/p%d", i%50, i),
			fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(body), body)})
	}
	files := writeArchive(b, warc.WriterOptions{}, pages, map[string]string{"charset": "utf-8"})
	start := time.Now()
	r, err := warc.OpenReplay(files, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	indexCost := float64(time.Since(start).Microseconds()) / float64(len(pages))
	urls := make([]*url.URL, len(pages))
	for i, p := range pages {
		urls[i] = mustURL(p[0])
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	i := 0
	t0 := time.Now()
	for b.Loop() {
		if _, err := r.Fetch(ctx, &fetch.Request{URL: urls[i%len(urls)]}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(i)/time.Since(t0).Seconds(), "pages/s")
	b.ReportMetric(indexCost, "µs-index/page")
}

// TestReplayTruncatedRecord: a response record marked WARC-Truncated holds
// a prefix of the message (its Content-Length announces more); Replay
// gives that prefix, marked Truncated, and a record written with no reason
// carries no WARC-Truncated field.
func TestReplayTruncatedRecord(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.NewWriter(&warc.WriterOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cut := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nthe first bytes"
	whole := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nwhole"
	if _, _, err := w.WriteTruncatedExchange("http://a.test/cut", "", when, nil, []byte(cut), nil, warc.TruncatedLength); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.WriteTruncatedExchange("http://a.test/whole", "", when, nil, []byte(whole), nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(w.Files()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rd, err := warc.NewReader(fh, nil)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for rec, err := range rd.All() {
		if err != nil {
			t.Fatal(err)
		}
		fields[rec.TargetURI()] = rec.Header.Get(warc.FieldTruncated)
	}
	if fields["http://a.test/cut"] != "length" || fields["http://a.test/whole"] != "" {
		t.Errorf("WARC-Truncated fields %q", fields)
	}
	r, err := warc.OpenReplay(w.Files(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tt := range []struct {
		url, body string
		truncated bool
	}{
		{"http://a.test/cut", "the first bytes", true},
		{"http://a.test/whole", "whole", false},
	} {
		resp, err := r.Fetch(context.Background(), &fetch.Request{URL: mustURL(tt.url)})
		if err != nil {
			t.Errorf("%s: %v", tt.url, err)
			continue
		}
		if string(resp.Body) != tt.body || resp.Truncated != tt.truncated {
			t.Errorf("%s: body %q, truncated %v; want %q, %v", tt.url, resp.Body, resp.Truncated, tt.body, tt.truncated)
		}
	}
}

// recordsOf reads every record of the WARC files at paths, in order.
func recordsOf(t *testing.T, paths ...string) []*warc.Record {
	t.Helper()
	var recs []*warc.Record
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := warc.NewReader(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range rd.All() {
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			recs = append(recs, rec)
		}
		f.Close()
	}
	return recs
}

func TestReplayRevisits(t *testing.T) {
	body := strings.Repeat("<p>the same story on two sites</p>", 10)
	page := func(status, etag string) string {
		return "HTTP/1.1 " + status + "\r\nContent-Type: text/html\r\nETag: " + etag + "\r\n\r\n" + body
	}
	files := writeArchive(t, warc.WriterOptions{MaxFileSize: 1}, [][2]string{
		{"http://a.sim.test/", page("200 OK", `"a"`)},
		{"http://b.sim.test/", page("200 OK", `"b"`)},
		{"http://c.sim.test/gone", page("404 Not Found", `"c"`)},
	}, nil)
	if len(files) != 3 {
		t.Fatalf("want a file per exchange, got %d", len(files))
	}
	revisits := 0
	for _, rec := range recordsOf(t, files...) {
		if rec.Type() == warc.TypeRevisit {
			revisits++
		}
	}
	if revisits != 2 {
		t.Fatalf("%d revisit records, want 2", revisits)
	}

	r, err := warc.OpenReplay(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		url, etag string
		status    int
	}{{"http://a.sim.test/", `"a"`, 200}, {"http://b.sim.test/", `"b"`, 200}, {"http://c.sim.test/gone", `"c"`, 404}} {
		resp, err := r.Fetch(context.Background(), &fetch.Request{URL: mustURL(c.url)})
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		// The revisit's own status and headers, the original's payload.
		if resp.Status != c.status || resp.ETag != c.etag || string(resp.Body) != body || resp.Truncated {
			t.Errorf("%s: status %d, ETag %s, %d bytes, truncated %v", c.url, resp.Status, resp.ETag, len(resp.Body), resp.Truncated)
		}
	}

	// Without the file of the original, a revisit has nothing to stand for.
	partial, err := warc.OpenReplay(files[1:], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer partial.Close()
	_, err = partial.Fetch(context.Background(), &fetch.Request{URL: mustURL("http://b.sim.test/")})
	var fe *fetch.Error
	if !errors.Is(err, warc.ErrRevisitUnresolved) || !errors.As(err, &fe) {
		t.Errorf("revisit without its original: %v, want a *fetch.Error wrapping ErrRevisitUnresolved", err)
	}
}

// A revisit whose WARC-Refers-To is missing is resolved through
// WARC-Refers-To-Target-URI, and only to a record of the same payload
// digest.
func TestReplayRevisitByTargetURI(t *testing.T) {
	body := strings.Repeat("x", 300)
	orig := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + body
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Copy: 1\r\n\r\n"
	for _, tt := range []struct {
		name, digest string
		wantErr      error
	}{
		{"same digest", warc.Digest([]byte(body)), nil},
		{"other digest", warc.Digest([]byte("other")), warc.ErrRevisitUnresolved},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := warc.NewWriter(&warc.WriterOptions{Dir: dir, NoRevisits: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := w.WriteExchange("http://a.sim.test/", "", time.Now(), nil, []byte(orig), nil); err != nil {
				t.Fatal(err)
			}
			rev := &warc.Record{Block: []byte(head)}
			rev.Header.Set(warc.FieldType, warc.TypeRevisit)
			rev.Header.Set(warc.FieldTargetURI, "http://b.sim.test/")
			rev.Header.Set(warc.FieldContentType, "application/http;msgtype=response")
			rev.Header.Set(warc.FieldProfile, warc.ProfileIdenticalPayload)
			rev.Header.Set(warc.FieldRefersToTargetURI, "http://a.sim.test/")
			rev.Header.Set(warc.FieldPayloadDigest, tt.digest)
			if err := w.Write(rev); err != nil {
				t.Fatal(err)
			}
			w.Close()
			r, err := warc.OpenReplayDir(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			resp, err := r.Fetch(context.Background(), &fetch.Request{URL: mustURL("http://b.sim.test/")})
			if !errors.Is(err, tt.wantErr) || err == nil && (string(resp.Body) != body || resp.Header.Get("X-Copy") != "1") {
				t.Fatalf("Fetch: %v, want %v", err, tt.wantErr)
			}
		})
	}
}
