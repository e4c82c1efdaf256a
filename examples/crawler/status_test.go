package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls until cond holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var statusAddr = regexp.MustCompile(`status page: (http://[^/\s]+/)`)

// TestStatusConsoleLingers: with -status the command serves the console
// (page, live part, metrics, profiler) during the crawl, and with
// -status-linger still after it, with the final figures, until the wait
// ends (here by the context, as Ctrl-C ends it).
func TestStatusConsoleLingers(t *testing.T) {
	var stdout, stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-demo", "-demo-hosts", "6", "-demo-pages", "5", "-workers", "8", "-quiet",
			"-status", "127.0.0.1:0", "-status-linger", "1m"}, &stdout, &stderr)
	}()
	var base string
	waitFor(t, 20*time.Second, "status address", func() bool {
		m := statusAddr.FindStringSubmatch(stdout.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})
	waitFor(t, 20*time.Second, "console", func() bool { c, _ := httpGet(t, base); return c == 200 })
	waitFor(t, 60*time.Second, "end of the crawl", func() bool { return strings.Contains(stdout.String(), "crawl over; the console stays at") })
	c, page := httpGet(t, base)
	for _, want := range []string{">finished<", "output directory", "simulated: 6 hosts"} {
		if c != 200 || !strings.Contains(page, want) {
			t.Errorf("after the crawl: status %d, page lacks %q", c, want)
		}
	}
	if strings.Contains(page, `action="pause"`) {
		t.Error("a finished crawl offers Pause")
	}
	if c, m := httpGet(t, base+"metrics"); c != 200 || !strings.Contains(m, "crawlkit_urls_finished_total{outcome=\"fetched\"}") || !strings.Contains(m, "go_goroutines") {
		t.Errorf("/metrics after the crawl: %d\n%.500s", c, m)
	}
	if c, _ := httpGet(t, base+"live"); c != 200 {
		t.Errorf("/live after the crawl: %d", c)
	}
	if c, _ := httpGet(t, base+"debug/pprof/"); c != 200 {
		t.Errorf("/debug/pprof/ after the crawl: %d", c)
	}
	select {
	case n := <-code:
		t.Fatalf("the command exited (%d) during -status-linger", n)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case n := <-code:
		if n != 0 {
			t.Errorf("exit %d\n%s", n, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not end when its wait was cut short")
	}
}
