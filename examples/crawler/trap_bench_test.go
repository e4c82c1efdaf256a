package main

import (
	"bytes"
	"flag"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/urlnorm"
)

var (
	trapFor  = flag.Duration("crawl.trapfor", time.Minute, "BenchmarkSubdomainTrapRSS: how long the crawl runs (10m by hand)")
	trapRule = flag.Bool("crawl.domainrule", false, "BenchmarkSubdomainTrapRSS: keep the domain rule on (off by default, so that the explosion lasts and the memory is tested)")
)

// BenchmarkSubdomainTrapRSS runs the bundled crawler, as a process with
// -out and -continuous (so that it never ends by itself), for
// -crawl.trapfor over a simulated web whose h000 links a subdomain
// explosion (every page of every host under explode.test links 30 fresh
// host names), sampling its resident set every second. It reports the
// peak, the growth from the first quarter of the run to its end in MiB per
// minute, and the requests the trap cost against the whole crawl's. The
// trap defence's domain rule, which stops the explosion within a few
// dozen hosts, is off unless -crawl.domainrule, so that the explosion
// goes on and the memory under it is what is measured.
//
//	go test ./examples/crawler -run '^$' -bench SubdomainTrapRSS -benchtime 1x -crawl.trapfor 10m -timeout 30m
func BenchmarkSubdomainTrapRSS(b *testing.B) {
	bin := buildCrawler(b)
	for range b.N {
		web := fetchtest.NewWeb(fetchtest.Config{Seed: 5, Hosts: 200, MeanPages: 30, SubdomainTrap: "explode.test",
			ChangePeriods: []time.Duration{0}, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
		srv := dnstest.Start(b, dnstest.Config{})
		srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))
		srv.AddWildcard("explode.test", 300, netip.MustParseAddr("127.0.0.1"))
		cmd := exec.Command(bin, "-seeds", strings.Join(web.Seeds(), ","), "-dns", srv.Addr(), "-allow-private", "-quiet", "-private-suffixes", web.Domain(),
			"-out", filepath.Join(b.TempDir(), "out"), "-workers", "64", "-delay-factor", "1", "-continuous",
			"-duration", trapFor.String())
		if !*trapRule {
			cmd.Args = append(cmd.Args, "-trap-domain-hosts", "-1")
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var samples []float64 // MiB, one a second
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		tick := time.NewTicker(time.Second)
	run:
		for {
			select {
			case err := <-done:
				if err != nil {
					b.Fatalf("crawler: %v\n%s", err, stderr.String())
				}
				break run
			case <-tick.C:
				if mib, ok := rssMiB(cmd.Process.Pid); ok {
					samples = append(samples, mib)
				}
			}
		}
		tick.Stop()
		trap, all := 0, 0
		for _, r := range web.Log() {
			all++
			if urlnorm.Domain(r.Host) == "explode.test" {
				trap++
			}
		}
		web.Close()
		if len(samples) < 8 {
			b.Fatalf("only %d samples", len(samples))
		}
		peak := 0.0
		for _, s := range samples {
			peak = max(peak, s)
		}
		q := len(samples) / 4
		minutes := float64(len(samples)-1-q) / 60
		b.ReportMetric(peak, "peak-RSS-MiB")
		b.ReportMetric((samples[len(samples)-1]-samples[q])/minutes, "RSS-MiB/min")
		b.ReportMetric(float64(trap), "trap-requests")
		b.ReportMetric(100*float64(trap)/float64(all), "trap-%-requests")
	}
}

// rssMiB reads the resident set of process pid from /proc (Linux).
func rssMiB(pid int) (float64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err == nil
		}
	}
	return 0, false
}
