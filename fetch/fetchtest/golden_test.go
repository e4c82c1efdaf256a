package fetchtest_test

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden pins the web seed 1 generates: every page's URL and a hash of
// its body (port written as PORT). It fails when a change to the generator
// changes the web, which would silently change every test built on it; run
// with -update after an intended change. PNG bodies are not hashed: their
// bytes come from image/png's compressor and may change with the Go release.
func TestGolden(t *testing.T) {
	clock := func() time.Time { return time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC) }
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 4, MeanPages: 8, Clock: clock})
	defer w.Close()
	var b strings.Builder
	norm := func(s string) string { return strings.ReplaceAll(s, ":"+w.Port(), ":PORT") }
	for _, u := range w.Pages() {
		resp, body := get(t, w, u)
		sum := "png"
		if resp.Header.Get("Content-Type") != "image/png" {
			sum = fmt.Sprintf("%x", sha256.Sum256([]byte(norm(string(body)))))[:16]
		}
		fmt.Fprintf(&b, "%s %d %s %d\n", norm(u), resp.StatusCode, sum, len(w.Links(u)))
	}
	for _, h := range w.Hosts() {
		status, body := w.Robots(h)
		fmt.Fprintf(&b, "robots %s %d %x\n", h, status, sha256.Sum256([]byte(norm(body))))
	}
	path := filepath.Join("testdata", "golden", "seed1.txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("web of seed 1 changed at line %d:\n got %s\nwant %s\n(run with -update if intended)", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("web of seed 1 changed: %d lines, golden has %d", len(gl), len(wl))
	}
}
