package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
)

func TestBadFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{nil, "nothing to crawl"},
		{[]string{"-seeds", "ftp://x/"}, "not an absolute http(s) URL"},
		{[]string{"-seeds", "example.com"}, "not an absolute http(s) URL"},
		{[]string{"-demo", "-seeds", "http://x/"}, "drop -seeds"},
		{[]string{"-resume"}, "-resume needs the -out"},
		{[]string{"-seeds", "http://x/", "-workers", "0"}, "-workers"},
		{[]string{"-seeds", "http://x/", "-dns", "localhost"}, "want IP:PORT"},
		{[]string{"-seeds", "http://x/", "-max-pages", "-1"}, "negative"},
		{[]string{"-seeds", "http://x/", "extra"}, "unexpected argument"},
		{[]string{"-seeds-file", filepath.Join(dir, "missing")}, "-seeds-file"},
		{[]string{"-seeds", "http://x/", "-out", filepath.Join(file, "sub")}, "-out"},
		{[]string{"-out", dir, "-resume"}, "holds no crawl"},
		{[]string{"-reindex-warc", dir, "-seeds", "http://x/"}, "give it alone"},
		{[]string{"-reindex-warc", file}, "not a directory"},
		{[]string{"-nosuch"}, ""},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code == 0 {
			t.Errorf("run(%q) exited 0", tt.args)
			continue
		}
		if !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("run(%q): stderr %q lacks %q", tt.args, stderr.String(), tt.want)
		}
	}
}

// TestUnreachableSeed: a seed on a host that does not resolve is a clear
// failure, not a silent empty crawl.
func TestUnreachableSeed(t *testing.T) {
	srv := dnstest.Start(t, dnstest.Config{})
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-seeds", "http://nosuchhost.sim.test/", "-dns", srv.Addr(), "-allow-private", "-quiet"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "no page could be fetched") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestDemo runs a small -demo end to end and reads its report.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	out := t.TempDir()
	code := run(context.Background(), []string{"-demo", "-demo-hosts", "15", "-demo-pages", "8", "-workers", "16", "-delay-factor", "2", "-out", out, "-status", "127.0.0.1:0"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	report := stdout.String()
	for _, want := range []string{"robots.txt violations: 0;", "most concurrent requests to one host: 1", "bits/link", "most linked pages", "index: "} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	var found, expected int
	if i := strings.Index(report, "ground truth: "); i < 0 {
		t.Fatalf("no ground truth line:\n%s", report)
	} else if _, err := fmt.Sscanf(report[i:], "ground truth: %d of the %d pages", &found, &expected); err != nil || found != expected || expected == 0 {
		t.Errorf("found %d of %d reachable pages (%v)", found, expected, err)
	}
	for _, f := range []string{"links.tsv", "pages.jsonl", "settings.json", "index/MANIFEST", "graph/web.graph", "graph/web-t.graph"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("output %s missing or empty (%v)", f, err)
		}
	}
	m, _ := filepath.Glob(filepath.Join(out, "warc", "*.warc.gz"))
	if len(m) == 0 {
		t.Errorf("no WARC file written")
	}
	// Every WARC file has its CDXJ index, which -reindex-warc rebuilds
	// from the file the same.
	written := map[string]string{}
	for _, f := range m {
		b, err := os.ReadFile(f + ".cdxj")
		if err != nil || len(b) == 0 {
			t.Fatalf("index of %s: %d bytes, %v", f, len(b), err)
		}
		written[f] = string(b)
		os.Remove(f + ".cdxj")
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"-reindex-warc", filepath.Join(out, "warc")}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), fmt.Sprintf("indexed %d WARC files", len(m))) {
		t.Fatalf("-reindex-warc: exit %d, %s %s", code, stdout.String(), stderr.String())
	}
	for f, want := range written {
		if b, err := os.ReadFile(f + ".cdxj"); err != nil || string(b) != want {
			t.Errorf("%s: rebuilt index differs (%v)", f, err)
		}
	}
	if st, err := os.Stat(filepath.Join(out, "state", "db")); err != nil || !st.IsDir() {
		t.Errorf("no crawl state in %s/state (%v)", out, err)
	}
}

// boundCommand is exec.Command for the crawler binary, killed with a test
// error if it runs longer than d: a crawl that never ends fails the test
// with its output instead of hanging until go test's own timeout.
func boundCommand(t *testing.T, d time.Duration, bin string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error {
		t.Errorf("%s %s: still running after %v, killed", filepath.Base(bin), strings.Join(args, " "), d)
		return cmd.Process.Kill()
	}
	return cmd
}
