package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/crawlkit/crawlkit/fetch/render"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/lang"
)

// TestBadFlags runs the command on each rejected command line: exit
// status 2, and one line on stderr that names the problem.
func TestBadFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	comments := filepath.Join(dir, "comments")
	os.WriteFile(comments, []byte("# no seeds here\n\n"), 0o644)
	seed := []string{"-seeds", "http://x/"}
	with := func(args ...string) []string { return append(append([]string(nil), seed...), args...) }
	tests := []struct {
		args []string
		want string
	}{
		{nil, "nothing to crawl"},
		{[]string{"-seeds", "ftp://x/"}, "not an absolute http(s) URL"},
		{[]string{"-seeds", "example.com"}, "not an absolute http(s) URL"},
		{[]string{"-seeds", "garbage"}, `seed "garbage" is not an absolute http(s) URL`},
		{[]string{"-seeds", ","}, `-seeds "," holds no URL`},
		{[]string{"-seeds", " , "}, "holds no URL"},
		{[]string{"-seeds-file", file}, "-seeds-file " + file + " holds no URL"},
		{[]string{"-seeds-file", comments}, "holds no URL"},
		{[]string{"-demo", "-seeds", "http://x/"}, "drop -seeds"},
		{[]string{"-resume"}, "-resume needs the -out"},
		{with("-workers", "0"), "-workers"},
		{with("-workers", "-3"), "-workers"},
		{with("-dns", "localhost"), "want IP:PORT"},
		{with("-max-pages", "-1"), "negative"},
		{with("-max-depth", "-1"), "negative"},
		{with("-duration", "-1s"), "negative"},
		{with("-min-delay", "-1ms"), "negative"},
		{with("-max-delay", "-1ms"), "negative"},
		{with("-delay-factor", "-0.5"), "negative"},
		{with("-dead-after", "-1s"), "negative"},
		{with("-replicas", "-1"), "negative"},
		{with("-replicas", "7"), "at most 5 copies"},
		{with("-replicas", "3"), "-replicas is for a distributed crawl"},
		{with("-duration", "soon"), `invalid value "soon" for flag -duration`},
		{with("-max-per-host", "-2"), "-max-per-host, -max-per-domain and -max-hosts-per-domain take a positive number, or -1"},
		{with("-max-per-host", "0"), "-max-per-host"},
		{with("-max-per-domain", "-5"), "-max-per-domain"},
		{with("-max-hosts-per-domain", "0"), "-max-hosts-per-domain"},
		{with("-trap-alike", "-2"), "-trap-alike takes a positive number"},
		{with("-backoff", "-1s"), "negative"},
		{with("-politeness-key", "url"), `-politeness-key "url": want host, domain or ip`},
		{with("-backoff-max", "-1s"), "negative"},
		{with("-retries", "-1"), "negative"},
		{with("-backoff", "2h", "-backoff-max", "1h"), "-backoff-max 1h0m0s is shorter than -backoff 2h0m0s"},
		{with("-host-rule", "Example.com"), "lower-case host name"},
		{with("-host-rule", "a.test,delay=soon"), "delay=soon: want a duration"},
		{with("-host-rule", "a.test,max-pages=0"), "max-pages=0: want a positive number"},
		{with("-host-rule", "a.test,max-domain-pages=9"), "MaxDomainPages needs a domain rule"},
		{with("-host-rule", "a.test,speed=2"), `unknown key "speed"`},
		{with("-host-rule", "a.test,delay"), "want key=value"},
		{with("-host-rule", "a.test", "-host-rule", "a.test,delay=1s"), "two rules for a.test"},
		{with("-trap-domain-hosts", "0"), "-trap-domain-hosts takes a positive number"},
		{with("-agent", "bad agent"), `-agent "bad agent" is not a robots.txt product token`},
		{with("-agent", "crawlkit/1.0"), "is not a robots.txt product token"},
		{with("-agent", ""), "is not a robots.txt product token"},
		{with("-user-agent", "a\nX-Evil: 1"), "control characters"},
		{with("-private-suffixes", ".blogspot.com"), "-private-suffixes"},
		{with("-private-suffixes", "http://x/"), "-private-suffixes"},
		{[]string{"-demo", "-demo-hosts", "0"}, "-demo-hosts and -demo-pages must be at least 1"},
		{[]string{"-demo", "-demo-pages", "-1"}, "-demo-hosts and -demo-pages"},
		{with("-nats", "nats://127.0.0.1:4222"), "needs -node NAME and -nodes"},
		{with("-node", "a", "-nodes", "a,b"), "need -nats URL or -nats-embed"},
		{with("-nats-embed", "127.0.0.1:0", "-node", "c", "-nodes", "a,b"), `-node "c" is not in -nodes`},
		{with("-nats-embed", "127.0.0.1:0", "-node", "a", "-nodes", "a,,b"), "has an empty name"},
		{with("extra"), "unexpected argument"},
		{[]string{"-seeds-file", filepath.Join(dir, "missing")}, "-seeds-file"},
		{with("-out", filepath.Join(file, "sub")), "-out"},
		{[]string{"-out", dir, "-resume"}, "holds no crawl"},
		{[]string{"-reindex-warc", dir, "-seeds", "http://x/"}, "give it alone"},
		{[]string{"-reindex-warc", file}, "not a directory"},
		{[]string{"-nosuch"}, "flag provided but not defined: -nosuch (-h lists the flags)"},
		{[]string{"-workers", "many"}, `invalid value "many" for flag -workers`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		msg := stderr.String()
		if code != 2 || !strings.HasPrefix(msg, "crawler: ") || !strings.Contains(msg, tt.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("run(%q): exit %d, stderr %q; want 2 and one line with %q", tt.args, code, msg, tt.want)
		}
		if stdout.Len() > 0 {
			t.Errorf("run(%q) printed %q before failing", tt.args, stdout.String())
		}
	}
	// -1 is the documented "no limit" of the budgets, and -h is no error.
	if _, err := parseFlags(with("-max-per-host", "-1", "-max-per-domain", "-1", "-max-hosts-per-domain", "-1", "-trap-alike", "-1", "-trap-domain-hosts", "-1"), io.Discard); err != nil {
		t.Errorf("the budgets' -1: %v", err)
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, io.Discard, &stderr); code != 0 || !strings.Contains(stderr.String(), "-max-per-host") {
		t.Errorf("-h: exit %d, %q", code, stderr.String())
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
	// The summary names the next command with the graph's path as it
	// printed it: examples/connectivity takes that path as it is.
	graph := filepath.Join(out, "graph", "web.graph")
	if !strings.Contains(report, "-store "+graph+" ") || !strings.Contains(report, "(Boldi–Vigna, "+graph+")") {
		t.Errorf("report lacks the connectivity command for %s:\n%s", graph, report)
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

// TestNoOutKeepsGraph: without -out the summary's connectivity command
// names a graph that is still there after the command ends, and says
// that only the graph was kept.
func TestNoOutKeepsGraph(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-demo", "-demo-hosts", "6", "-demo-pages", "4", "-workers", "8", "-delay-factor", "1", "-quiet"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	report := stdout.String()
	graph := storeArg(t, report)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(filepath.Dir(graph))) })
	if !strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(graph))), "crawlkit-graph-") {
		t.Fatalf("graph %s not in a directory of its own", graph)
	}
	for _, f := range []string{graph, strings.TrimSuffix(graph, ".graph") + ".urls", strings.TrimSuffix(graph, ".graph") + "-t.graph"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the printed graph is gone: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(graph)), "links.tsv")); err == nil {
		t.Errorf("the link log was kept too")
	}
	if !strings.Contains(report, "only the graph is kept, in "+filepath.Dir(graph)) {
		t.Errorf("the report does not say what was kept:\n%s", report)
	}
}

// storeArg returns the path after "-store " in the summary's next
// commands.
func storeArg(t *testing.T, report string) string {
	t.Helper()
	_, rest, ok := strings.Cut(report, " -store ")
	if !ok {
		t.Fatalf("no connectivity command in the report:\n%s", report)
	}
	path, _, _ := strings.Cut(rest, " ")
	return path
}

func TestParseHostRule(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want crawlkit.HostRule
	}{
		{"docs.example.com", crawlkit.HostRule{Match: "docs.example.com"}},
		{"docs.example.com,delay=250ms", crawlkit.HostRule{Match: "docs.example.com", MinDelay: 250 * time.Millisecond}},
		{"mine.test,delay=0", crawlkit.HostRule{Match: "mine.test", MinDelay: -1}},
		{".example.com, max-pages=50, max-domain-pages=-1", crawlkit.HostRule{Match: ".example.com", MaxPages: 50, MaxDomainPages: -1}},
	} {
		got, err := parseHostRule(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseHostRule(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	o, err := parseFlags([]string{"-seeds", "http://a.test/", "-host-rule", "a.test,delay=2s", "-host-rule", ".b.test,max-domain-pages=7", "-backoff", "0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rs := o.HostRules.rules(); len(rs) != 2 || rs[0].MinDelay != 2*time.Second || rs[1].MaxDomainPages != 7 {
		t.Errorf("rules %+v", rs)
	}
	if b := backoffOptions(o); b.Base >= 0 {
		t.Errorf("-backoff 0: %+v, want the back-off off", b)
	}
	for _, tc := range []struct {
		args []string
		want int // Config.MaxRetries
	}{
		{nil, 2},
		{[]string{"-retries", "0"}, -1},
		{[]string{"-retries", "5"}, 5},
	} {
		o, err := parseFlags(append([]string{"-seeds", "http://a.test/"}, tc.args...), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := maxRetries(o); got != tc.want {
			t.Errorf("%q: MaxRetries %d, want %d", tc.args, got, tc.want)
		}
	}
}

func TestParserFor(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the outermost parser's type, "" for crawlkit's default
	}{
		{nil, ""},
		{[]string{"-main-text"}, "*fetch.MainTextParser"},
		{[]string{"-detect-lang"}, "*lang.Parser"},
		{[]string{"-main-text", "-detect-lang"}, "*lang.Parser"},
	} {
		o, err := parseFlags(append([]string{"-seeds", "http://a.test/"}, tc.args...), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if p := parserFor(o); p != nil {
			got = fmt.Sprintf("%T", p)
		}
		if got != tc.want {
			t.Errorf("%q: parser %s, want %s", tc.args, got, tc.want)
		}
	}
	if o, _ := parseFlags([]string{"-seeds", "http://a.test/", "-detect-lang"}, io.Discard); analyzerFor(o) == nil || analyzerFor(o).StopByLang == nil {
		t.Error("-detect-lang: the index has no per-language stop words")
	}
	if o, _ := parseFlags([]string{"-seeds", "http://a.test/"}, io.Discard); analyzerFor(o) != nil {
		t.Error("without -detect-lang: the index has an analyzer of its own")
	}
	o, _ := parseFlags([]string{"-seeds", "http://a.test/", "-main-text", "-detect-lang"}, io.Discard)
	if lp, ok := parserFor(o).(*lang.Parser); !ok || fmt.Sprintf("%T", lp.Parser) != "*fetch.MainTextParser" {
		t.Errorf("-main-text -detect-lang: %#v, want language detection over the main text", parserFor(o))
	}
}

// TestDemoRender crawls the demo web with its script-built application
// and shop, rendering where the adaptive policy says: every page is found,
// those only scripts link to included, and the browser's requests keep
// robots.txt and one request at a time per host.
func TestDemoRender(t *testing.T) {
	if render.FindBrowser() == "" {
		t.Skip("no Chromium or Chrome found (install Debian's chromium package, or set CRAWLKIT_CHROMIUM): -render is not tested")
	}
	if testing.Short() {
		t.Skip("-short: a crawl in a browser")
	}
	var stdout, stderr bytes.Buffer
	// Hosts so small that the demo's host budget, fitted to them, must
	// still let the shop's pages in.
	code := run(context.Background(), []string{"-demo", "-demo-hosts", "4", "-demo-pages", "3", "-workers", "8", "-delay-factor", "1", "-quiet",
		"-render", "adaptive", "-render-tabs", "2"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	report := stdout.String()
	for _, want := range []string{"robots.txt violations: 0;", "most concurrent requests to one host: 1", "rendering: "} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	var found, expected, rendered int
	if i := strings.Index(report, "ground truth: "); i < 0 {
		t.Fatalf("no ground truth line:\n%s", report)
	} else if _, err := fmt.Sscanf(report[i:], "ground truth: %d of the %d pages", &found, &expected); err != nil || found != expected || expected == 0 {
		t.Errorf("found %d of %d reachable pages (%v)", found, expected, err)
	}
	if i := strings.Index(report, "rendering: "); i >= 0 {
		if _, err := fmt.Sscanf(report[i:], "rendering: %d pages rendered", &rendered); err != nil || rendered == 0 {
			t.Errorf("rendered %d pages (%v):\n%s", rendered, err, report)
		}
	}
}

func TestRenderFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"-render", "adaptive"}, true},
		{[]string{"-render", "always", "-render-tabs", "4", "-render-timeout", "5s"}, true},
		{[]string{"-render", "hosts=a.test,.b.test"}, true},
		{[]string{"-render", "pattern=/app/"}, true},
		{[]string{"-render", "sometimes"}, false},
		{[]string{"-render", "hosts="}, false},
		{[]string{"-render", "pattern=("}, false},
		{[]string{"-render", "always", "-render-tabs", "0"}, false},
	} {
		_, err := parseFlags(append([]string{"-seeds", "http://a.test/"}, tc.args...), io.Discard)
		var ue usageError
		if tc.ok && err != nil || !tc.ok && !errors.As(err, &ue) {
			t.Errorf("%q: %v", tc.args, err)
		}
	}
}
