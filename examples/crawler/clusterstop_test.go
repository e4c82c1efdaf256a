package main

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// clusterProc is one node of a crawl run as a process.
type clusterProc struct {
	cmd *exec.Cmd
	out syncBuffer
	dir string
}

// startNodes starts nodes a (embedding the NATS server) and b of a
// two-process crawl of web with extra flags, and waits until a's server
// listens.
func startNodes(t *testing.T, bin string, web *fetchtest.Web, dnsAddr string, extra ...string) (a, b *clusterProc, natsURL string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	natsAddr := l.Addr().String()
	l.Close()
	common := append([]string{"-seeds", strings.Join(web.Seeds(), ","), "-dns", dnsAddr, "-allow-private", "-private-suffixes", web.Domain(),
		"-workers", "8", "-delay-factor", "1", "-max-per-host", "40", "-nodes", "a,b", "-quiet"}, extra...)
	start := func(name string, args ...string) *clusterProc {
		p := &clusterProc{dir: filepath.Join(t.TempDir(), name)}
		args = append(append(append([]string{}, common...), "-node", name, "-user-agent", "crawlkit-node-"+name, "-out", p.dir), args...)
		p.cmd = boundCommand(t, 2*time.Minute, bin, args...)
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a = start("a", "-nats-embed", natsAddr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", natsAddr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			a.cmd.Process.Kill()
			t.Fatalf("node a's NATS server never listened:\n%s", a.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	b = start("b", "-nats", "nats://"+natsAddr)
	return a, b, "nats://" + natsAddr
}

// TestClusterSignalStop: SIGTERM to a node of a distributed crawl stops
// it cleanly, exit 0 with the word on how to continue, then the same for
// the node that embeds the NATS server.
func TestClusterSignalStop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command")
	}
	bin := buildCrawler(t)
	web, dnsAddr := simWeb(t, fetchtest.Config{Seed: 12, Hosts: 16, MeanPages: 10, MaxPages: 30, Latency: 100 * time.Millisecond,
		ChangePeriods: []time.Duration{0}, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	a, b, _ := startNodes(t, bin, web, dnsAddr)
	deadline := time.Now().Add(30 * time.Second)
	for len(web.Log()) < 30 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d requests\na:\n%s\nb:\n%s", len(web.Log()), a.out.String(), b.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, p := range []*clusterProc{b, a} {
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := exitCode(p.cmd.Wait()); code != 0 {
			t.Fatalf("%s: exit %d after SIGTERM\n%s", p.dir, code, p.out.String())
		}
		if !strings.Contains(p.out.String(), "-resume") {
			t.Errorf("%s: no word on how to continue:\n%s", p.dir, p.out.String())
		}
	}
}

// TestClusterSignalEndsLinger: the node that embeds the NATS server,
// done with its crawl and waiting for the server's other clients to
// disconnect (here a client that never does), exits 0 at once on SIGTERM
// instead of waiting out the minute.
func TestClusterSignalEndsLinger(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command")
	}
	bin := buildCrawler(t)
	web, dnsAddr := simWeb(t, fetchtest.Config{Seed: 12, Hosts: 8, MeanPages: 6, MaxPages: 12,
		ChangePeriods: []time.Duration{0}, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	a, b, natsURL := startNodes(t, bin, web, dnsAddr)
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if code := exitCode(b.cmd.Wait()); code != 0 {
		t.Fatalf("b: exit %d\n%s", code, b.out.String())
	}
	// a ends its crawl too, builds its graph (its summary names the
	// next commands) and lingers for the client.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(a.out.String(), "connectivity") {
		if time.Now().After(deadline) {
			t.Fatalf("node a did not finish its crawl:\n%s", a.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	a.cmd.Process.Signal(syscall.SIGTERM)
	code := exitCode(a.cmd.Wait())
	if code != 0 {
		t.Fatalf("a: exit %d after SIGTERM while lingering\n%s", code, a.out.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a took %v to exit after SIGTERM while lingering", d)
	}
}

// TestReplicasNeedACluster: -replicas reaches the stream; a single NATS
// server refuses more than one copy, with an error that says so.
func TestReplicasNeedACluster(t *testing.T) {
	var stdout, stderr strings.Builder
	code := run(t.Context(), []string{"-seeds", "http://127.0.0.1:1/", "-allow-private", "-quiet",
		"-nats-embed", "127.0.0.1:0", "-node", "a", "-nodes", "a", "-replicas", "3"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "create stream") || !strings.Contains(stderr.String(), "replicas") {
		t.Errorf("-replicas 3 on one server: exit %d, stderr %q; want 1 and the stream's refusal", code, stderr.String())
	}
}
