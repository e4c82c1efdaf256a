package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStatusServerSlowClients: the status page's server drops a slowloris
// client (a request header sent a byte at a time) once ReadHeaderTimeout
// (5 s) has passed, refuses an oversized header (431), and answers only
// GET / and GET /metrics.
func TestStatusServerSlowClients(t *testing.T) {
	s, err := startStatus("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var (
		wg   sync.WaitGroup
		slow time.Duration
	)
	wg.Add(1)
	go func() { defer wg.Done(); slow = slowloris(t, s.Addr(), 100*time.Millisecond, 9*time.Second) }()

	if code := headerStatus(t, s.Addr(), "/", 16<<10); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("16 KiB header: status %d, want 431", code)
	}
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/", 200}, {"GET", "/metrics", 200}, {"GET", "/nope", 404}, {"GET", "/../../etc/passwd", 404},
		{"POST", "/", 405}, {"DELETE", "/metrics", 405},
	} {
		req, _ := http.NewRequest(tt.method, "http://"+s.Addr()+tt.path, strings.NewReader(strings.Repeat("x", 4<<10)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
		if n > 1<<20 {
			t.Errorf("%s %s: %d-byte answer", tt.method, tt.path, n)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	wg.Wait()
	t.Logf("slowloris client dropped after %v", slow.Round(10*time.Millisecond))
	if slow >= 9*time.Second || slow < 4*time.Second {
		t.Errorf("slowloris client dropped after %v, want about ReadHeaderTimeout (5 s)", slow)
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
