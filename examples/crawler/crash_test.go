package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/warc"
	"github.com/crawlkit/crawlkit/webgraph"
)

// TestCrashConsistency kills the crawler process with SIGKILL at random
// moments of a crawl with -out, and resumes it after each kill: 6 kills
// by default, 20 with CRAWLKIT_LONG=1. Then it checks everything the
// crawl left against the simulated web's ground truth and request log:
//
//   - every page reachable under robots.txt was fetched, and the pages
//     fetched more than once number at most workers × kills (only the
//     work in flight at a kill may be redone);
//   - no host was asked for more distinct URLs than its budget, and no
//     two requests to a host with a Crawl-delay came closer than it,
//     across the restarts too;
//   - every WARC file reads to its end and has a CDXJ index whose lines
//     all name a record of their URL at their offset; pages.jsonl and
//     links.tsv parse line by line, and the pages of the WARC, of
//     pages.jsonl and of links.tsv are the same, each once;
//   - the web graph's nodes and arcs are those of the link log, and the
//     index holds every indexable page.
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command: not in -short mode")
	}
	kills := 6
	hosts, pages := 16, 10
	if os.Getenv("CRAWLKIT_LONG") == "1" {
		kills, hosts, pages = 20, 40, 14
	}
	bin := buildCrawler(t)
	const crawlDelay = 150 * time.Millisecond
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 17, Hosts: hosts, MeanPages: pages, Latency: 5 * time.Millisecond,
		ChangePeriods: []time.Duration{0}, CrawlDelay: crawlDelay, RetryAfter: 20 * time.Millisecond})
	defer web.Close()
	srv := dnstest.Start(t, dnstest.Config{})
	srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))

	// The host budget bounds the spider traps; it must exceed the largest
	// ordinary host, or pages are refused by design rather than lost.
	budget := 60
	for _, h := range web.Hosts() {
		budget = max(budget, 2*len(web.PagesOf(h)))
	}
	const workers = 8
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"-seeds", strings.Join(web.Seeds(), ","), "-dns", srv.Addr(), "-allow-private", "-private-suffixes", web.Domain(),
		"-out", out, "-workers", fmt.Sprint(workers), "-delay-factor", "2", "-max-per-host", fmt.Sprint(budget),
		// A host whose robots.txt a kill interrupted is left alone for
		// up to MaxDelay after the restart: kept short here.
		"-max-delay", "300ms", "-quiet"}

	seed := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	deadline := time.Now().Add(3 * time.Minute)
	killed, finished := 0, false
	var final bytes.Buffer
	var starts []time.Time // when each run started, for the gap report
	for run := 0; !finished && time.Now().Before(deadline); run++ {
		a := args
		if run > 0 {
			a = []string{"-out", out, "-resume", "-quiet"}
		}
		cmd := boundCommand(t, 2*time.Minute, bin, a...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		before := len(web.Log())
		starts = append(starts, time.Now())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if killed >= kills {
			if err := <-done; err != nil {
				t.Fatalf("final run %d: %v\nstderr:\n%s", run, err, stderr.String())
			}
			finished, final = true, stdout
			break
		}
		// Kill after a random number of new requests (1–60), so that the
		// kill lands anywhere: during start-up and recovery, mid-fetch,
		// mid-commit, mid-write of a sink.
		want := before + 1 + rng.IntN(60)
		var err error
	wait:
		for {
			select {
			case err = <-done:
				break wait
			case <-time.After(time.Millisecond):
				if len(web.Log()) >= want {
					_ = cmd.Process.Signal(syscall.SIGKILL)
					err = <-done
					killed++
					break wait
				}
			}
		}
		if t.Failed() {
			t.FailNow() // boundCommand killed a run that did not end
		}
		if ee, ok := err.(*exec.ExitError); ok && ee.Sys().(syscall.WaitStatus).Signaled() {
			continue // killed
		}
		if err != nil {
			t.Fatalf("run %d: %v\nstderr:\n%s", run, err, stderr.String())
		}
		finished, final = true, stdout // the crawl ended before the kill
	}
	if !finished {
		t.Fatalf("the crawl did not finish by the deadline after %d kills", killed)
	}
	t.Logf("%d kills, %d requests in all, %d pages in the web", killed, len(web.Log()), len(web.Pages()))
	if killed == 0 {
		t.Fatalf("no kill landed: the crawl is too short for the test")
	}

	checkFetches(t, web, workers*killed, budget, crawlDelay, starts)
	checkOutputs(t, out, final.String())
}

// checkFetches checks the web's request log: coverage, pages fetched
// twice, host budgets and Crawl-delay gaps.
func checkFetches(t *testing.T, web *fetchtest.Web, maxTwice, budget int, crawlDelay time.Duration, starts []time.Time) {
	t.Helper()
	type key struct{ host, path string }
	times, retried := map[key]int{}, map[key]bool{}
	paths := map[string]map[string]bool{}
	byHost := map[string][]fetchtest.Request{}
	for _, r := range web.Log() {
		byHost[r.Host] = append(byHost[r.Host], r)
		if strings.Contains(r.Path, "robots") && strings.HasSuffix(r.Path, ".txt") {
			continue // robots.txt is fetched anew by every run
		}
		k := key{r.Host, r.Path}
		times[k]++
		if r.Status == 429 || r.Status == 503 {
			retried[k] = true
		}
		if paths[r.Host] == nil {
			paths[r.Host] = map[string]bool{}
		}
		paths[r.Host][r.Path] = true
	}
	twice := 0
	for k, n := range times {
		if n > 1 && !retried[k] {
			twice += n - 1
		}
	}
	t.Logf("%d repeated fetches (bound %d: the work in flight at the kills)", twice, maxTwice)
	if twice > maxTwice {
		t.Errorf("%d pages fetched again, more than workers × kills = %d", twice, maxTwice)
	}
	for h, ps := range paths {
		if len(ps) > budget {
			t.Errorf("host %s was asked for %d distinct URLs, beyond its budget of %d", h, len(ps), budget)
		}
	}
	filters := frontier.DefaultFilters()
	lost := web.Missed("crawlkit", func(u string) bool {
		pu, err := url.Parse(u)
		return err != nil || filters.Filter(pu) != nil
	})
	if len(lost) > 0 {
		t.Errorf("%d reachable pages never fetched across the kills, e.g. %v", len(lost), lost[:min(5, len(lost))])
	}
	if v := web.RobotsViolations("crawlkit"); len(v) > 0 {
		t.Errorf("%d robots.txt violations across the kills, first %+v", len(v), v[0])
	}

	// Crawl-delay, across restarts: every request to a host that asks for
	// one starts at least that long after the previous one ended (a
	// timer may fire a little early: 5% of slack).
	delayed := 0
	for h, log := range byHost {
		if crawlDelayOf(t, web, h) != crawlDelay {
			continue
		}
		delayed++
		slices.SortFunc(log, func(a, b fetchtest.Request) int { return a.Start.Compare(b.Start) })
		for i := 1; i < len(log); i++ {
			if gap := log[i].Start.Sub(log[i-1].End); gap < crawlDelay*95/100 {
				t.Errorf("%s: %s started %v after %s ended, Crawl-delay is %v (runs %d and %d)", h, log[i].Path, gap, log[i-1].Path, crawlDelay,
					runOf(starts, log[i-1].Start), runOf(starts, log[i].Start))
			}
		}
	}
	if delayed == 0 {
		t.Error("no host of this web has a Crawl-delay: the gap check checks nothing")
	}
}

// runOf returns the number of the run that was going at t.
func runOf(starts []time.Time, t time.Time) int {
	n := 0
	for i, s := range starts {
		if !t.Before(s) {
			n = i
		}
	}
	return n
}

// crawlDelayOf returns the Crawl-delay host's robots.txt asks of crawlkit.
func crawlDelayOf(t *testing.T, web *fetchtest.Web, host string) time.Duration {
	resp, err := web.Client().Get("http://" + host + ":" + webPort(web) + "/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return robots.Parse(resp.StatusCode, body).CrawlDelay("crawlkit")
}

func webPort(web *fetchtest.Web) string {
	_, port, _ := strings.Cut(web.Addr(), ":")
	return port
}

// checkOutputs reads every output of the crawl in dir and checks they
// agree with each other.
func checkOutputs(t *testing.T, dir, report string) {
	t.Helper()
	// The WARC files: each reads to its end; a page is a response with a
	// metadata record (robots.txt, redirects and errors have none).
	files, _ := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz"))
	if len(files) == 0 {
		t.Fatal("no WARC file")
	}
	warcPages := map[string]int{}
	captures := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := warc.NewReader(fh, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for {
			rec, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s does not read to its end: %v", filepath.Base(f), err)
			}
			if rec.Type() == warc.TypeMetadata {
				warcPages[rec.TargetURI()]++
			}
			if rec.Type() == warc.TypeResponse || rec.Type() == warc.TypeRevisit {
				captures++
			}
		}
		fh.Close()
	}
	// The CDXJ indexes: every file has one (the crawl ended with a
	// Close), and every line names a record of its URL at its offset,
	// through kills, rewinds and the indexes rewritten by them.
	cdx, err := warc.OpenIndexDir(filepath.Join(dir, "warc"))
	if err != nil {
		t.Fatal(err)
	}
	defer cdx.Close()
	lines := 0
	for _, f := range files {
		b, err := os.ReadFile(warc.IndexPath(f))
		if err != nil {
			t.Fatalf("no index of %s: %v", filepath.Base(f), err)
		}
		for l := range strings.Lines(string(b)) {
			e, err := warc.ParseIndexLine([]byte(l))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cdx.Record(e); err != nil || e.Filename != filepath.Base(f) {
				t.Fatalf("%s: line %q: %v", filepath.Base(f), l, err)
			}
			lines++
		}
	}
	if lines != captures {
		t.Errorf("%d index lines for %d responses and revisits", lines, captures)
	}

	// pages.jsonl: every line a record, every page once.
	jsonPages := map[string]int{}
	linksOf := map[string]int{}
	indexable := 0
	readLines(t, filepath.Join(dir, "pages.jsonl"), func(line string) {
		var rec crawlkit.PageRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("pages.jsonl: %v in line %q", err, line)
		}
		jsonPages[rec.URL]++
		linksOf[rec.URL] = rec.Links
		if !rec.NoIndex {
			indexable++
		}
	})

	// links.tsv: each page's lines together, as many as its links.
	linkPages := map[string]int{}
	links := map[string]int{}
	nodes := map[string]bool{}
	arcs := map[[2]string]bool{}
	last := ""
	readLines(t, filepath.Join(dir, "links.tsv"), func(line string) {
		if strings.HasPrefix(line, "=\t") {
			// An alias record (rel=canonical): this web has none, and
			// the graph below is compared with the raw log.
			t.Errorf("links.tsv: an alias record on a web without canonicals: %q", line)
			return
		}
		src, dst, hasDst := strings.Cut(line, "\t")
		if src == "" || strings.Contains(dst, "\t") || (hasDst && dst == "") {
			t.Fatalf("links.tsv: malformed line %q", line)
		}
		if src != last {
			linkPages[src]++
			last = src
		}
		nodes[src] = true
		if hasDst {
			links[src]++
			nodes[dst] = true
			arcs[[2]string{src, dst}] = true
		}
	})

	for u, n := range warcPages {
		if n != 1 {
			t.Errorf("%s is in the WARC files %d times", u, n)
		}
		if jsonPages[u] != 1 {
			t.Errorf("%s is in the WARC files but %d times in pages.jsonl", u, jsonPages[u])
		}
		if linkPages[u] != 1 {
			t.Errorf("%s is in the WARC files but its lines are in %d places of links.tsv", u, linkPages[u])
		}
		if links[u] != linksOf[u] {
			t.Errorf("%s: %d links in links.tsv, pages.jsonl says %d", u, links[u], linksOf[u])
		}
	}
	for u := range jsonPages {
		if warcPages[u] == 0 {
			t.Errorf("%s is in pages.jsonl but not in the WARC files", u)
		}
	}
	for u := range linkPages {
		if warcPages[u] == 0 {
			t.Errorf("%s is in links.tsv but not in the WARC files", u)
		}
	}
	t.Logf("%d pages in the WARC files, pages.jsonl and links.tsv; %d nodes and %d arcs in the link log", len(warcPages), len(nodes), len(arcs))

	// The graph the last run built from the link log.
	store, err := webgraph.OpenStore(filepath.Join(dir, "graph", "web"))
	if err != nil {
		t.Fatalf("web graph: %v\nreport:\n%s", err, report)
	}
	if store.NumNodes() != len(nodes) || store.NumArcs() != int64(len(arcs)) {
		t.Errorf("web graph has %d nodes and %d arcs; the link log %d and %d", store.NumNodes(), store.NumArcs(), len(nodes), len(arcs))
	}

	// The index: every indexable page, once.
	ix, err := index.OpenDir(filepath.Join(dir, "index"), nil)
	if err != nil {
		t.Fatalf("index: %v", err)
	}
	defer ix.Close()
	if docs := ix.Info().Docs; docs != int64(indexable) {
		t.Errorf("the index holds %d documents; pages.jsonl has %d indexable pages", docs, indexable)
	}
}

// readLines calls fn for every line of the file at path, failing the test
// on a last line without its newline (a torn record).
func readLines(t *testing.T, path string, fn func(string)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("%s ends in a torn line", filepath.Base(path))
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
