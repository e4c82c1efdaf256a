package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// simWeb starts a simulated web and a DNS server for it.
func simWeb(t *testing.T, cfg fetchtest.Config) (*fetchtest.Web, string) {
	t.Helper()
	web := fetchtest.NewWeb(cfg)
	t.Cleanup(web.Close)
	srv := dnstest.Start(t, dnstest.Config{})
	srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))
	return web, srv.Addr()
}

// buildCrawler builds the command once per test binary, into a
// directory TestMain removes, and returns its path: the tests that run
// it as a process share one build.
func buildCrawler(t testing.TB) string {
	t.Helper()
	crawlerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crawler-test-")
		if err != nil {
			crawlerErr = err
			return
		}
		crawlerDir = dir
		bin := filepath.Join(dir, "crawler")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			crawlerErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		crawlerBin = bin
	})
	if crawlerErr != nil {
		t.Fatal(crawlerErr)
	}
	return crawlerBin
}

var (
	crawlerOnce            sync.Once
	crawlerDir, crawlerBin string
	crawlerErr             error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if crawlerDir != "" {
		os.RemoveAll(crawlerDir)
	}
	os.Exit(code)
}

// pageFetches counts the web's 2xx answers to anything but robots.txt
// and sitemaps: the pages a crawler fetched.
func pageFetches(web *fetchtest.Web) int {
	n := 0
	for _, r := range web.Log() {
		sitemap := strings.HasPrefix(r.Path, "/sitemap")
		if r.Status/100 == 2 && !strings.HasSuffix(r.Path, "robots.txt") && !sitemap {
			n++
		}
	}
	return n
}

// TestMaxPagesExact: -max-pages N fetches exactly N pages, and across a
// resume the limit is the crawl's total.
func TestMaxPagesExact(t *testing.T) {
	for _, n := range []int{1, 7, 60} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			web, dnsAddr := simWeb(t, fetchtest.Config{Seed: 8, Hosts: 10, MeanPages: 20, ChangePeriods: []time.Duration{0},
				CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			args := []string{"-seeds", strings.Join(web.Seeds(), ","), "-dns", dnsAddr, "-allow-private", "-quiet",
				"-workers", "16", "-delay-factor", "1", "-max-pages", fmt.Sprint(n), "-out", out}
			if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			if got := pageFetches(web); got != n {
				t.Errorf("-max-pages %d fetched %d pages", n, got)
			}
			// Resumed with a larger limit: the total is the new limit.
			stdout.Reset()
			args = []string{"-out", out, "-resume", "-max-pages", fmt.Sprint(2 * n), "-quiet"}
			if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
				t.Fatalf("resume: exit %d\n%s", code, stderr.String())
			}
			if got := pageFetches(web); got != 2*n {
				t.Errorf("resumed with -max-pages %d: %d pages in all", 2*n, got)
			}
		})
	}
}

// TestOutRefused: a new crawl refuses an -out that holds output, and
// -resume one that holds no crawl.
func TestOutRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pages.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-seeds", "http://a.test/", "-out", dir}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "already holds output") {
		t.Errorf("exit %d, stderr %q; want 2 and 'already holds output'", code, stderr.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pages.jsonl")); string(b) != "{}\n" {
		t.Errorf("the existing output was changed: %q", b)
	}
	stderr.Reset()
	code = run(context.Background(), []string{"-out", dir, "-resume"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "no crawl to resume") {
		t.Errorf("-resume on a directory without a crawl: exit %d, stderr %q", code, stderr.String())
	}
}

// startCrawl starts the command with args and waits until the web has
// answered n requests.
func startCrawl(t *testing.T, bin string, web *fetchtest.Web, n int, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := boundCommand(t, 2*time.Minute, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(web.Log()) < n {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("only %d requests before the deadline\n%s", len(web.Log()), stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cmd, &stdout, &stderr
}

// exitCode returns the exit status of a finished command (-1 if a signal
// ended it).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// TestOutLocked: a second process on the same -out is refused while the
// first runs, with a message naming the directory.
func TestOutLocked(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command")
	}
	bin := buildCrawler(t)
	web, dnsAddr := simWeb(t, fetchtest.Config{Seed: 9, Hosts: 8, MeanPages: 20, Latency: 20 * time.Millisecond,
		ChangePeriods: []time.Duration{0}, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	out := filepath.Join(t.TempDir(), "out")
	first, _, _ := startCrawl(t, bin, web, 5, "-seeds", strings.Join(web.Seeds(), ","), "-dns", dnsAddr, "-allow-private", "-quiet", "-out", out)
	defer func() {
		first.Process.Kill()
		first.Wait()
	}()
	before := len(web.Log())
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-out", out, "-resume", "-quiet"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "in use by another crawler process") {
		t.Errorf("second process: exit %d, stderr %q", code, stderr.String())
	}
	// Every request since came from the first process (its User-Agent is
	// the same, so count: the second made none before failing).
	if first.ProcessState != nil {
		t.Fatal("the first process ended during the test")
	}
	t.Logf("%d requests before the second process, %d after", before, len(web.Log()))
}

// TestSignalStop: SIGINT stops the crawl cleanly (exit 0, the pages in
// flight committed, a message saying how to continue), and -resume then
// finishes it with outputs that agree; a second SIGINT quits at once
// (exit 130), and the resume after it loses nothing either.
func TestSignalStop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command")
	}
	bin := buildCrawler(t)
	for _, twice := range []bool{false, true} {
		t.Run(fmt.Sprintf("second-signal=%v", twice), func(t *testing.T) {
			// A slow web, so that fetches are in flight when the signal
			// comes.
			web, dnsAddr := simWeb(t, fetchtest.Config{Seed: 12, Hosts: 10, MeanPages: 8, MaxPages: 20, Latency: 150 * time.Millisecond,
				ChangePeriods: []time.Duration{0}, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
			out := filepath.Join(t.TempDir(), "out")
			cmd, stdout, stderr := startCrawl(t, bin, web, 15, "-seeds", strings.Join(web.Seeds(), ","), "-dns", dnsAddr,
				"-allow-private", "-quiet", "-out", out, "-workers", "8", "-delay-factor", "0.5", "-max-per-host", "40",
				// A host whose robots.txt a quit interrupted is left alone
				// for up to the most a Crawl-delay may ask, capped by this.
				"-max-delay", "1s")
			start := time.Now()
			cmd.Process.Signal(syscall.SIGINT)
			if twice {
				time.Sleep(50 * time.Millisecond)
				cmd.Process.Signal(syscall.SIGINT)
			}
			code := exitCode(cmd.Wait())
			took := time.Since(start)
			switch {
			case !twice && code != 0:
				t.Fatalf("clean stop: exit %d\nstderr:\n%s", code, stderr.String())
			case !twice && !strings.Contains(stdout.String(), "crawler -out "+out+" -resume"):
				t.Errorf("clean stop: no word on how to continue:\n%s", stdout.String())
			case !strings.Contains(stderr.String(), "stopping"):
				t.Errorf("no word that the crawl is stopping:\n%s", stderr.String())
			case twice && code != 130:
				t.Fatalf("second signal: exit %d, want 130\nstderr:\n%s", code, stderr.String())
			case twice && took > 150*time.Millisecond:
				t.Errorf("second signal: the process took %v to quit", took)
			}
			t.Logf("exit %d after %v", code, took)

			// The resume finishes the crawl; its outputs agree.
			resume := boundCommand(t, 2*time.Minute, bin, "-out", out, "-resume", "-quiet")
			var rout, rerr bytes.Buffer
			resume.Stdout, resume.Stderr = &rout, &rerr
			if err := resume.Run(); err != nil {
				t.Fatalf("resume: %v\n%s", err, rerr.String())
			}
			checkOutputs(t, out, rout.String())
		})
	}
}
