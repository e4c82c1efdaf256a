package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
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
	if m, _ := filepath.Glob(filepath.Join(out, "warc", "*.warc.gz")); len(m) == 0 {
		t.Errorf("no WARC file written")
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

// TestKillAndResume starts the crawler as a process, kills it with
// SIGKILL in mid-crawl, resumes it, and checks on the server's request
// log that no URL was lost and only the pages in flight at the kill were
// fetched twice.
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command: not in -short mode")
	}
	bin := filepath.Join(t.TempDir(), "crawler")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 20, MeanPages: 12, Latency: 5 * time.Millisecond,
		ChangePeriods: []time.Duration{0}, CrawlDelay: 20 * time.Millisecond, RetryAfter: 20 * time.Millisecond})
	defer web.Close()
	srv := dnstest.Start(t, dnstest.Config{})
	srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))

	const workers = 8
	out := t.TempDir()
	args := []string{"-seeds", strings.Join(web.Seeds(), ","), "-dns", srv.Addr(), "-allow-private",
		"-out", out, "-workers", fmt.Sprint(workers), "-delay-factor", "2", "-max-per-host", "60", "-quiet"}

	first := boundCommand(t, 2*time.Minute, bin, args...)
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(web.Log()) < 120 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	killedAt := len(web.Log())
	if killedAt < 120 {
		t.Fatalf("crawler made only %d requests before the deadline; stderr:\n%s", killedAt, firstErr.String())
	}

	second := boundCommand(t, 2*time.Minute, bin, append(args, "-resume")...)
	var stdout, stderr bytes.Buffer
	second.Stdout, second.Stderr = &stdout, &stderr
	if err := second.Run(); err != nil {
		t.Fatalf("resumed crawl: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Logf("killed after %d requests; %d in all", killedAt, len(web.Log()))

	// Requests per URL, robots.txt and retried answers aside.
	type key struct{ host, path string }
	times, retried := map[key]int{}, map[key]bool{}
	for _, r := range web.Log() {
		if strings.Contains(r.Path, "robots") && strings.HasSuffix(r.Path, ".txt") {
			continue // robots.txt (and its redirect hops) is fetched anew by every run
		}
		k := key{r.Host, r.Path}
		times[k]++
		if r.Status == 429 || r.Status == 503 {
			retried[k] = true
		}
	}
	twice := 0
	for k, n := range times {
		if n > 1 && !retried[k] {
			twice += n - 1
			t.Logf("fetched %d times: %s%s", n, k.host, k.path)
		}
	}
	if twice > workers {
		t.Errorf("%d pages fetched twice, more than the %d that can be in flight", twice, workers)
	}

	filters := frontier.DefaultFilters()
	lost := web.Missed("crawlkit", func(u string) bool {
		pu, err := url.Parse(u)
		return err != nil || filters.Filter(pu) != nil
	})
	if len(lost) > 0 {
		t.Errorf("%d reachable pages never fetched across the kill, e.g. %v", len(lost), lost[:min(5, len(lost))])
	}
	if v := web.RobotsViolations("crawlkit"); len(v) > 0 {
		t.Errorf("%d robots.txt violations", len(v))
	}
}
