package main

import (
	"context"
	"github.com/crawlkit/crawlkit/internal/slowclient"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServerHostileClients starts the connectivity server as the command
// does (run) and attacks it: hostile query parameters are refused with
// 400 or 404 and answers stay small; a slowloris client (a request
// header sent a byte at a time) is dropped at ReadHeaderTimeout (10 s);
// a kept-alive idle connection should be closed too (see the skip).
func TestServerHostileClients(t *testing.T) {
	path := filepath.Join(t.TempDir(), "links.tsv")
	if err := os.WriteFile(path, []byte("http://a.example/\thttp://b.example/\nhttp://b.example/\thttp://a.example/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	const limit = 12 * time.Second
	var (
		wg         sync.WaitGroup
		slow, idle time.Duration
	)
	wg.Add(2)
	go func() { defer wg.Done(); slow = slowclient.Slowloris(t, addr, 100*time.Millisecond, limit) }()
	go func() { defer wg.Done(); idle = slowclient.IdleFor(t, addr, "/stats", limit) }()

	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	long := "http://a.example/" + strings.Repeat("x", 100<<10)
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"/out?url=" + url.QueryEscape("http://a.example/"), 200},
		{"/out", 400},
		{"/out?url=x&id=0", 400},
		{"/out?id=-1", 400},
		{"/out?id=99999999999999999999999", 400},
		{"/out?id=0&limit=99999999999999999999", 400},
		{"/out?id=0&limit=10001", 400},
		{"/out?id=0&limit=-5", 400},
		{"/out?id=0&offset=-1", 400},
		{"/out?id=0&offset=99999999999", 200},
		{"/out?id=0&offset=18446744073709551615", 200}, // past the end on any int size
		{"/out?id=0&offset=18446744073709551616", 400},
		{"/out?id=8589934592", 404}, // a node no graph here has, not malformed
		{"/out?id=+1", 400},
		{"/out?id=12345", 404},
		{"/out?url=", 400},
		{"/out?url=" + url.QueryEscape(long), 431}, // the request line alone exceeds MaxHeaderBytes
		{"/in?url=%zz", 400},
		{"/nope", 404},
		{"/../../etc/passwd", 404},
	} {
		resp, err := client.Get("http://" + addr + tt.query)
		if err != nil {
			t.Fatalf("%.60s: %v", tt.query, err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%.60s: status %d, want %d", tt.query, resp.StatusCode, tt.want)
		}
		if n > 64<<10 {
			t.Errorf("%.60s: %d-byte answer", tt.query, n)
		}
	}
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		req, _ := http.NewRequest(m, "http://"+addr+"/out?id=0", strings.NewReader("x"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", m, resp.StatusCode)
		}
	}
	bigHeader := slowclient.HeaderStatus(t, addr, "/stats", 512<<10)
	wg.Wait()
	t.Logf("slowloris dropped after %v; idle connection closed after %v; 512 KiB header answered %d",
		slow.Round(10*time.Millisecond), idle.Round(10*time.Millisecond), bigHeader)
	if slow >= limit || slow < 8*time.Second {
		t.Errorf("slowloris client dropped after %v, want about ReadHeaderTimeout (10 s)", slow)
	}
	if idle >= limit || bigHeader != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("an idle kept-alive connection stayed open %v (want IdleTimeout) and a 512 KiB request header was answered %d (want 431)",
			idle.Round(time.Second), bigHeader)
	}
}
