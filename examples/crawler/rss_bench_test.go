package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

var (
	rssSizes = flag.String("crawl.sizes", "10000,100000", "BenchmarkCrawlRSS: comma-separated web sizes in pages (1000000 by hand)")
	rssModes = flag.String("crawl.modes", "disk,memory", "BenchmarkCrawlRSS: crawl with -out (disk) and/or without (memory)")
)

// BenchmarkCrawlRSS runs the bundled crawler as a process over simulated
// webs of growing size (-crawl.sizes, in pages: 40 per host) and reports
// its peak resident set (the kernel's maxrss), the bytes of it per page
// fetched, and its pages/s, with the crawl's state on disk (-out) or in
// memory. The web is served by the benchmark's process, so the figures
// are the crawler's alone; both share the machine's cores.
//
//	go test ./examples/crawler -run '^$' -bench CrawlRSS -benchtime 1x -timeout 60m \
//		-crawl.sizes 10000,100000,1000000
func BenchmarkCrawlRSS(b *testing.B) {
	bin := buildCrawler(b)
	for _, size := range strings.Split(*rssSizes, ",") {
		pages, err := strconv.Atoi(strings.TrimSpace(size))
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range strings.Split(*rssModes, ",") {
			b.Run(fmt.Sprintf("pages=%d/%s", pages, mode), func(b *testing.B) {
				for range b.N {
					r := crawlRSS(b, bin, pages, mode == "disk", nil)
					b.ReportMetric(r.peakMiB, "peak-RSS-MiB")
					b.ReportMetric(r.crawlMiB, "crawl-RSS-MiB")
					b.ReportMetric(r.peakMiB*(1<<20)/float64(r.pages), "RSS-B/page")
					b.ReportMetric(r.rate, "pages/s")
					b.ReportMetric(float64(r.pages), "pages")
				}
			})
		}
	}
}

// rssResult is what crawlRSS measured: the process's peak RSS, the peak
// of the RSS sampled until the crawl's summary (the graph is built after
// it), and the summary's figures.
type rssResult struct {
	peakMiB  float64
	crawlMiB float64
	pages    int
	rate     float64
	stdout   string
}

var summaryRE = regexp.MustCompile(`elapsed [^,]+, (\d+) pages \(([0-9.]+) pages/s\)`)

// crawlRSS crawls a simulated web of about pages pages (40 per host) with
// the crawler binary, with -out when disk, plus extra flags, and returns
// the process's peak RSS and its summary's figures.
func crawlRSS(tb testing.TB, bin string, pages int, disk bool, extra []string, webOpts ...func(*fetchtest.Config)) rssResult {
	tb.Helper()
	cfg := fetchtest.Config{Seed: 11, Hosts: max(1, pages/40), MeanPages: 40, MaxPages: 400, ChangePeriods: []time.Duration{0},
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond, Mirrors: -1}
	for _, o := range webOpts {
		o(&cfg)
	}
	web := fetchtest.NewWeb(cfg)
	defer web.Close()
	srv := dnstest.Start(tb, dnstest.Config{})
	srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))
	seeds := filepath.Join(tb.TempDir(), "seeds")
	if err := os.WriteFile(seeds, []byte(strings.Join(web.Seeds(), "\n")), 0o644); err != nil {
		tb.Fatal(err)
	}
	args := []string{"-seeds-file", seeds, "-dns", srv.Addr(), "-allow-private", "-quiet", "-private-suffixes", web.Domain(),
		"-workers", "128", "-delay-factor", "1", "-max-per-domain", "-1", "-max-hosts-per-domain", "-1"}
	if disk {
		args = append(args, "-out", filepath.Join(tb.TempDir(), "out"))
	}
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&stdout, pw), &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	// Sample the RSS until the summary line shows the crawl is over.
	var crawlMiB atomic.Uint64
	summary := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "elapsed ") {
				close(summary)
				break
			}
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-summary:
				return
			case <-t.C:
				if mib, ok := rssMiB(cmd.Process.Pid); ok && uint64(mib) > crawlMiB.Load() {
					crawlMiB.Store(uint64(mib))
				}
			}
		}
	}()
	err := cmd.Wait()
	pw.Close()
	if err != nil {
		tb.Fatalf("crawler: %v\n%s", err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	m := summaryRE.FindStringSubmatch(stdout.String())
	if m == nil {
		tb.Fatalf("no summary in the crawler's output:\n%s", stdout.String())
	}
	n, _ := strconv.Atoi(m[1])
	rate, _ := strconv.ParseFloat(m[2], 64)
	return rssResult{peakMiB: float64(ru.Maxrss) / 1024, crawlMiB: float64(crawlMiB.Load()), pages: n, rate: rate, stdout: stdout.String()}
}
