// Package slowclient holds hostile HTTP clients for testing servers'
// timeouts and limits: a slowloris header, an idle kept-alive connection,
// an oversized header. Each talks to a loopback test server and fails the
// test on a setup error.
package slowclient

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Slowloris opens a connection to addr and sends a request header one
// byte every interval, never finishing it; it returns how long the server
// took to answer or close the connection (capped at limit; limit means it
// never did).
func Slowloris(t testing.TB, addr string, interval, limit time.Duration) time.Duration {
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

// IdleFor sends one complete request on a kept-alive connection, reads
// the answer, then waits: it returns how long the server kept the idle
// connection open (capped at limit).
func IdleFor(t testing.TB, addr, path string, limit time.Duration) time.Duration {
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

// HeaderStatus sends a request with a header of n bytes and returns the
// status code of the answer.
func HeaderStatus(t testing.TB, addr, path string, n int) int {
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
