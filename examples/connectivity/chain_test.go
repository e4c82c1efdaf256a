package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCrawlerChain runs the bundled crawler as an operator does, takes the
// connectivity command it prints, runs this command on the path as
// printed, and asks for the most linked page by a URL typed carelessly:
// upper-case scheme and host, no trailing slash.
func TestCrawlerChain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the crawler")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "crawler")
	if out, err := exec.Command("go", "build", "-o", bin, "../crawler").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := filepath.Join(dir, "crawl")
	report, err := exec.CommandContext(ctx, bin, "-demo", "-demo-hosts", "8", "-demo-pages", "4", "-workers", "8",
		"-delay-factor", "1", "-quiet", "-out", out).Output()
	if err != nil {
		t.Fatalf("crawler: %v\n%s", err, report)
	}
	// "next:\n  browse the link graph:  connectivity -store PATH   (...)"
	_, rest, ok := strings.Cut(string(report), "connectivity -store ")
	if !ok {
		t.Fatalf("the crawler printed no connectivity command:\n%s", report)
	}
	store, _, _ := strings.Cut(rest, " ")
	if want := filepath.Join(out, "graph", "web.graph"); store != want {
		t.Errorf("printed -store %s, want %s", store, want)
	}
	// "most linked pages:\n   NN in-links  URL"
	_, rest, _ = strings.Cut(string(report), "most linked pages:\n")
	line, _, _ := strings.Cut(rest, "\n")
	fields := strings.Fields(line)
	top := fields[len(fields)-1]
	if !strings.HasSuffix(top, "/") || !strings.HasPrefix(top, "http://") {
		t.Fatalf("most linked page %q: want a home page http://host:port/", top)
	}
	typed := strings.ToUpper(strings.TrimSuffix(top, "/")) // HTTP://H000.SIM.TEST:PORT

	addrc := make(chan string, 1)
	done := make(chan error, 1)
	sctx, stop := context.WithCancel(context.Background())
	go func() { done <- run(sctx, "127.0.0.1:0", store, "", func(a string) { addrc <- a }) }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		stop()
		t.Fatalf("connectivity -store %s: %v", store, err)
	}
	client := &http.Client{}
	resp, err := client.Get("http://" + addr + "/in?url=" + url.QueryEscape(typed))
	if err != nil {
		t.Fatal(err)
	}
	var v neighbours
	json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if resp.StatusCode != 200 || v.URL != top || v.Degree == 0 {
		t.Errorf("/in?url=%s: %d %+v; want the in-links of %s", typed, resp.StatusCode, v, top)
	}
	client.CloseIdleConnections()
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
