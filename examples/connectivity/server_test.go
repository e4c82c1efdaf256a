package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/webgraph"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testLinks = []webgraph.Link{
	{Src: "http://www.stanford.edu/alchemy", Dst: "http://www.stanford.edu/biology"},
	{Src: "http://www.stanford.edu/alchemy", Dst: "http://www.stanford.edu/chemistry"},
	{Src: "http://www.stanford.edu/biology", Dst: "http://www.stanford.edu/biology/plant"},
	{Src: "http://www.stanford.edu/biology/plant", Dst: "http://www.stanford.edu/biology/plant/copyright"},
	{Src: "http://www.stanford.edu/biology/plant", Dst: "http://www.stanford.edu/biology/plant/people"},
	{Src: "http://www.stanford.edu/biology/plant/people", Dst: "http://www.stanford.edu/biology/plant/copyright"},
	{Src: "http://www.stanford.edu/chemistry", Dst: "http://www.stanford.edu/biology/plant/copyright"},
	{Src: "http://www.mit.edu/", Dst: "http://www.stanford.edu/biology/plant/copyright"},
}

// stores returns the in-memory store and the compressed one built from a
// TSV link log by buildFromTSV, both over testLinks.
func stores(t *testing.T) map[string]webgraph.GraphStore {
	dir := t.TempDir()
	var tsv strings.Builder
	tsv.WriteString("# a comment\n\nhttp://lonely.example/\n")
	for _, l := range testLinks {
		fmt.Fprintf(&tsv, "%s\t%s\n", l.Src, l.Dst)
	}
	path := filepath.Join(dir, "links.tsv")
	if err := os.WriteFile(path, []byte(tsv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "web")
	if err := buildFromTSV(path, base, dir, checkURL); err != nil {
		t.Fatal(err)
	}
	cs, err := webgraph.OpenStore(base)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]webgraph.GraphStore{
		"mem":        webgraph.NewMemStore(testLinks, "http://lonely.example/"),
		"compressed": cs,
	}
}

func get(t *testing.T, srv *httptest.Server, path string) (int, map[string]any) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" && resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("%s: content type %q", path, ct)
	}
	var v map[string]any
	json.Unmarshal(body, &v)
	return resp.StatusCode, v
}

func urlsOf(v map[string]any) []string {
	var out []string
	links, _ := v["links"].([]any)
	for _, l := range links {
		out = append(out, l.(map[string]any)["url"].(string))
	}
	return out
}

func TestServer(t *testing.T) {
	const copyright = "http://www.stanford.edu/biology/plant/copyright"
	tests := []struct {
		name   string
		path   string
		status int
		degree int
		urls   []string
	}{
		{"out by url", "/out?url=http://www.stanford.edu/alchemy", 200, 2, []string{"http://www.stanford.edu/biology", "http://www.stanford.edu/chemistry"}},
		{"in by url", "/in?url=" + copyright, 200, 4, []string{"http://www.mit.edu/", "http://www.stanford.edu/biology/plant", "http://www.stanford.edu/biology/plant/people", "http://www.stanford.edu/chemistry"}},
		{"in paginated", "/in?url=" + copyright + "&limit=2&offset=1", 200, 4, []string{"http://www.stanford.edu/biology/plant", "http://www.stanford.edu/biology/plant/people"}},
		{"offset past end", "/in?url=" + copyright + "&offset=10", 200, 4, nil},
		{"limit zero", "/out?url=http://www.stanford.edu/alchemy&limit=0", 200, 2, nil},
		{"out by id", "/out?id=0", 200, 1, []string{copyright}}, // id 0 is www.mit.edu (edu.mit sorts first)
		{"no links", "/out?url=http://lonely.example/", 200, 0, nil},
		{"unknown url", "/out?url=http://nowhere.example/", 404, 0, nil},
		{"unknown id", "/in?id=1000", 404, 0, nil},
		{"missing parameter", "/out", 400, 0, nil},
		{"both parameters", "/out?id=1&url=http://www.mit.edu/", 400, 0, nil},
		{"bad id", "/out?id=abc", 400, 0, nil},
		{"negative id", "/in?id=-1", 400, 0, nil},
		{"empty url", "/in?url=", 400, 0, nil},
		{"bad limit", "/out?id=1&limit=x", 400, 0, nil},
		{"limit too large", "/out?id=1&limit=100000", 400, 0, nil},
		{"negative offset", "/out?id=1&offset=-3", 400, 0, nil},
	}
	for name, s := range stores(t) {
		srv := httptest.NewServer(newHandler(s))
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				status, v := get(t, srv, tt.path)
				if status != tt.status {
					t.Fatalf("status %d, want %d (%v)", status, tt.status, v)
				}
				if status != 200 {
					if v["error"] == "" {
						t.Fatal("error answer without message")
					}
					return
				}
				if int(v["degree"].(float64)) != tt.degree {
					t.Errorf("degree %v, want %d", v["degree"], tt.degree)
				}
				got := urlsOf(v)
				if strings.Join(got, " ") != strings.Join(tt.urls, " ") {
					t.Errorf("links %v, want %v", got, tt.urls)
				}
			})
		}
		t.Run(name+"/stats", func(t *testing.T) {
			status, v := get(t, srv, "/stats")
			if status != 200 || v["nodes"].(float64) != 8 || v["arcs"].(float64) != 8 {
				t.Fatalf("stats %d %v", status, v)
			}
			if _, ok := v["bits_per_link"]; ok != (name == "compressed") {
				t.Fatalf("bits_per_link presence wrong: %v", v)
			}
		})
		t.Run(name+"/method", func(t *testing.T) {
			resp, err := srv.Client().Post(srv.URL+"/out?id=1", "text/plain", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Fatalf("POST: %d", resp.StatusCode)
			}
		})
		srv.Close()
	}
}

func TestRunArguments(t *testing.T) {
	ctx := context.Background()
	if err := run(ctx, "127.0.0.1:0", "", "", nil); err == nil {
		t.Fatal("no source: want an error")
	}
	if err := run(ctx, "127.0.0.1:0", "x", "y", nil); err == nil {
		t.Fatal("two sources: want an error")
	}
	if err := run(ctx, "127.0.0.1:0", filepath.Join(t.TempDir(), "missing"), "", nil); err == nil {
		t.Fatal("missing store: want an error")
	}
}

// TestRunServesAndShutsDown runs the command's server from a link log on a
// loopback port, queries it, and cancels it: run must return cleanly and
// leave no goroutines behind (checked by goleak in TestMain).
func TestRunServesAndShutsDown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "links.tsv")
	os.WriteFile(path, []byte("http://a.example/\thttp://b.example/\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1:0", "", path, func(a string) { addrc <- a }) }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatal(err)
	}
	client := &http.Client{}
	resp, err := client.Get("http://" + addr + "/in?url=http://b.example/")
	if err != nil {
		t.Fatal(err)
	}
	var v neighbours
	json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(v.Links) != 1 || v.Links[0].URL != "http://a.example/" {
		t.Fatalf("answer %d %+v", resp.StatusCode, v)
	}
	client.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func Example() {
	s := webgraph.NewMemStore(testLinks)
	srv := httptest.NewServer(newHandler(s))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/out?url=http://www.stanford.edu/alchemy&limit=1")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	io.Copy(os.Stdout, resp.Body)
	// Output:
	// {"id":1,"url":"http://www.stanford.edu/alchemy","degree":2,"offset":0,"limit":1,"links":[{"id":2,"url":"http://www.stanford.edu/biology"}]}
}

// FuzzHandler sends arbitrary query strings: the server answers 200, 400 or
// 404 with JSON, never 500 or a panic.
func FuzzHandler(f *testing.F) {
	for _, q := range []string{"url=http://www.mit.edu/", "id=3&limit=1&offset=1", "id=-1", "url=%zz", "id=99999999999999999999", "limit=5&url=", "id=0&id=1"} {
		f.Add("/out", q)
		f.Add("/in", q)
	}
	h := newHandler(webgraph.NewMemStore(testLinks))
	f.Fuzz(func(t *testing.T, path, query string) {
		if path != "/out" && path != "/in" && path != "/stats" {
			path = "/out"
		}
		req := httptest.NewRequest(http.MethodGet, "http://localhost/", nil)
		req.URL.Path = path
		req.URL.RawQuery = query
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 400, 404:
		default:
			t.Fatalf("%s?%s: status %d", path, query, rec.Code)
		}
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s?%s: body is not JSON: %q", path, query, rec.Body.String())
		}
	})
}

// BenchmarkOutByURL measures a full /out?url= query (URL lookup, random
// access, URL decoding, JSON) against the compressed store.
func BenchmarkOutByURL(b *testing.B) {
	dir := b.TempDir()
	bl, err := webgraph.NewBuilder(&webgraph.BuilderOptions{TempDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer bl.Close()
	var urls []string
	for h := 0; h < 20; h++ {
		for p := 0; p < 200; p++ {
			urls = append(urls, fmt.Sprintf("http://h%02d.example/page/%d", h, p))
		}
	}
	for i, u := range urls {
		for k := 1; k <= 8; k++ {
			bl.AddLink(u, urls[(i+k*k*7)%len(urls)])
		}
	}
	base := filepath.Join(dir, "web")
	if err := bl.Finish(base); err != nil {
		b.Fatal(err)
	}
	s, err := webgraph.OpenStore(base)
	if err != nil {
		b.Fatal(err)
	}
	h := newHandler(s)
	reqs := make([]*http.Request, 256)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/out?url="+urls[(i*37)%len(urls)], nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, reqs[i%len(reqs)])
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}
