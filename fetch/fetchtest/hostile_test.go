package fetchtest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func TestHostile(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2})
	host := w.Host(fetchtest.Hostile)
	tr := &http.Transport{DialContext: w.DialContext, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	open := func(t *testing.T, path string, timeout time.Duration) (*http.Response, context.CancelFunc) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		req, _ := http.NewRequestWithContext(ctx, "GET", w.URL(host, path), nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", path, err)
		}
		return resp, cancel
	}
	t.Cleanup(w.Close) // after the parallel subtests
	for _, tc := range []struct {
		path  string
		check func(t *testing.T)
	}{
		{"/huge", func(t *testing.T) {
			resp, cancel := open(t, "/huge", 5*time.Second)
			defer cancel()
			defer resp.Body.Close()
			n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			if resp.ContentLength != 64<<20 || n != 1<<20 {
				t.Errorf("Content-Length %d, read %d", resp.ContentLength, n)
			}
		}},
		{"/huge-chunked", func(t *testing.T) {
			resp, cancel := open(t, "/huge-chunked", 5*time.Second)
			defer cancel()
			defer resp.Body.Close()
			n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			if resp.ContentLength != -1 || n != 1<<20 {
				t.Errorf("Content-Length %d, read %d", resp.ContentLength, n)
			}
		}},
		{"/bomb", func(t *testing.T) {
			resp, cancel := open(t, "/bomb", 5*time.Second)
			defer cancel()
			defer resp.Body.Close()
			wire, _ := io.ReadAll(resp.Body)
			if resp.Header.Get("Content-Encoding") != "gzip" || len(wire) > 256<<10 {
				t.Fatalf("encoding %q, %d bytes on the wire", resp.Header.Get("Content-Encoding"), len(wire))
			}
			zr, err := gzip.NewReader(bytes.NewReader(wire))
			if err != nil {
				t.Fatal(err)
			}
			zr.Multistream(false)
			member, _ := io.ReadAll(zr)
			if len(member) != 1<<20 {
				t.Errorf("first member inflates to %d bytes", len(member))
			}
			// The body is 128 copies of that member: 128 MiB inflated.
			one := len(wire) / 128
			if len(wire)%128 != 0 || !bytes.Equal(wire, bytes.Repeat(wire[:one], 128)) {
				t.Errorf("body is not 128 identical members")
			}
		}},
		{"/bad-gzip", func(t *testing.T) {
			resp, cancel := open(t, "/bad-gzip", 5*time.Second)
			defer cancel()
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if _, err := gzip.NewReader(bytes.NewReader(body)); err == nil || resp.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("gzip reader accepted the body (%v)", err)
			}
		}},
		{"/slow", func(t *testing.T) {
			resp, cancel := open(t, "/slow", 700*time.Millisecond)
			defer cancel()
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err == nil || len(body) == 0 || len(body) > 200 {
				t.Errorf("read %d bytes, err %v; want a trickle then a timeout", len(body), err)
			}
		}},
		{"/stall", func(t *testing.T) {
			resp, cancel := open(t, "/stall", 300*time.Millisecond)
			defer cancel()
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err == nil || len(body) != 0 {
				t.Errorf("read %d bytes, err %v; want nothing then a timeout", len(body), err)
			}
		}},
		{"/big-header", func(t *testing.T) {
			tr := &http.Transport{DialContext: w.DialContext, MaxResponseHeaderBytes: 64 << 10}
			defer tr.CloseIdleConnections()
			_, err := (&http.Client{Transport: tr}).Get(w.URL(host, "/big-header"))
			if err == nil || !strings.Contains(err.Error(), "header") {
				t.Errorf("client with a 64 KiB header limit: %v, want a header-size error", err)
			}
		}},
		{"/bad-utf8", func(t *testing.T) {
			resp, body := get(t, w, w.URL(host, "/bad-utf8"))
			if utf8.Valid(body) || !strings.Contains(resp.Header.Get("Content-Type"), "utf-8") {
				t.Error("body is valid UTF-8")
			}
		}},
		{"/mislabeled", func(t *testing.T) {
			resp, body := get(t, w, w.URL(host, "/mislabeled"))
			if !bytes.HasPrefix(body, []byte("\x89PNG")) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Error("not a PNG labelled HTML")
			}
		}},
		{"/long-url", func(t *testing.T) {
			_, body := get(t, w, w.URL(host, "/long-url"))
			links := extractLinks(t, w.URL(host, "/long-url"), body)
			if len(links) != 1 || len(links[0]) < 10000 {
				t.Errorf("links %d, first %d bytes", len(links), len(links[0]))
			}
		}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			tc.check(t)
		})
	}
	if len(fetchtest.HostilePaths()) != 10 {
		t.Errorf("%d hostile paths, test covers 10", len(fetchtest.HostilePaths()))
	}
	for _, p := range w.Pages() {
		if strings.Contains(p, host) {
			t.Fatalf("hostile %s among pages", p)
		}
	}
}

// TestCloseStopsSlowAnswers checks that Close does not wait out a stalled
// answer and leaves no goroutine behind (goleak in TestMain).
func TestCloseStopsSlowAnswers(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 1, Latency: time.Minute,
		HostLatency: map[string]time.Duration{"hostile.sim.test": 0}})
	done := make(chan struct{}, 2)
	for _, u := range []string{w.URL(w.Host(fetchtest.Hostile), "/stall"), w.Seeds()[0]} {
		go func() {
			resp, err := w.Client().Get(u)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			done <- struct{}{}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	w.Close()
	w.Close() // idempotent
	<-done
	<-done
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("Close and the clients took %v", d)
	}
}
