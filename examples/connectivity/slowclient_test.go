package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
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
	go func() { defer wg.Done(); slow = slowloris(t, addr, 100*time.Millisecond, limit) }()
	go func() { defer wg.Done(); idle = idleFor(t, addr, "/stats", limit) }()

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
	bigHeader := headerStatus(t, addr, "/stats", 512<<10)
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

// slowloris opens a connection to addr and sends a request header one
// byte every interval, never finishing it; it returns how long the server
// took to answer or close the connection (capped at limit; limit means it
// never did).
func slowloris(t *testing.T, addr string, interval, limit time.Duration) time.Duration {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		var b [512]byte
		_, _ = conn.Read(b[:]) // returns on the server's answer (408) or close
	}()
	header := "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 10000)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-closed:
			return time.Since(start)
		case <-tick.C:
			if time.Since(start) >= limit {
				return limit
			}
			if _, err := conn.Write([]byte{header[i%len(header)]}); err != nil {
				<-closed
				return time.Since(start)
			}
		}
	}
}

// idleFor sends one complete request on a kept-alive connection, reads
// the answer, then waits: it returns how long the server kept the idle
// connection open (capped at limit).
func idleFor(t *testing.T, addr, path string, limit time.Duration) time.Duration {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	start := time.Now()
	_ = conn.SetReadDeadline(start.Add(limit))
	_, _ = br.ReadByte() // EOF when the server closes, timeout at limit
	return min(time.Since(start), limit)
}

// headerStatus sends a request with a header of n bytes and returns the
// status code of the answer.
func headerStatus(t *testing.T, addr, path string, n int) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	go fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", path, strings.Repeat("b", n))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
