package main

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/console"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/internal/slowclient"
)

// TestStatusServerSlowClients: the status page's server drops a slowloris
// client (a request header sent a byte at a time) once ReadHeaderTimeout
// (5 s) has passed, refuses an oversized header (431), bounds request
// bodies, and answers only the console's paths.
func TestStatusServerSlowClients(t *testing.T) {
	s, err := startStatus("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, _ := httpGet(t, "http://"+s.Addr()+"/"); code != http.StatusServiceUnavailable {
		t.Errorf("before the crawler exists: status %d, want 503", code)
	}
	c, err := crawlkit.New(crawlkit.Config{Seeds: []string{"http://a.test/"}, Resolver: dns.System{}})
	if err != nil {
		t.Fatal(err)
	}
	s.attach(c, &console.Options{Controls: true})
	var (
		wg   sync.WaitGroup
		slow time.Duration
	)
	wg.Add(1)
	go func() { defer wg.Done(); slow = slowclient.Slowloris(t, s.Addr(), 100*time.Millisecond, 9*time.Second) }()

	if code := slowclient.HeaderStatus(t, s.Addr(), "/", 16<<10); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("16 KiB header: status %d, want 431", code)
	}
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/", 200}, {"GET", "/metrics", 200}, {"GET", "/nope", 404}, {"GET", "/../../etc/passwd", 404},
		{"POST", "/", 405}, {"DELETE", "/metrics", 405}, {"GET", "/live", 200}, {"GET", "/pause", 405},
		{"POST", "/pause", 200}, // from loopback: paused, and the redirect to the page followed
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
	if !c.Paused() {
		t.Error("POST /pause from loopback did not pause the crawl")
	}
	http.DefaultClient.CloseIdleConnections()
	wg.Wait()
	t.Logf("slowloris client dropped after %v", slow.Round(10*time.Millisecond))
	if slow >= 9*time.Second || slow < 4*time.Second {
		t.Errorf("slowloris client dropped after %v, want about ReadHeaderTimeout (5 s)", slow)
	}
}
