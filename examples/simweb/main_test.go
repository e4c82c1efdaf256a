package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// freeAddr returns a free loopback host:port for the given network.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// start runs the command in-process with args and returns what it printed
// up to "ready"; the command stops when the test ends.
func start(t *testing.T, args ...string) string {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	var lines []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if sc.Text() == "ready" {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	return strings.Join(lines, "\n")
}

// resolve asks the DNS server at dnsAddr for name's A record and fails
// unless it is 127.0.0.1.
func resolve(t *testing.T, dnsAddr, name string) {
	t.Helper()
	m := new(mdns.Msg)
	m.SetQuestion(mdns.Fqdn(name), mdns.TypeA)
	in, err := mdns.Exchange(m, dnsAddr)
	if err != nil {
		t.Fatalf("DNS query to %s: %v", dnsAddr, err)
	}
	if len(in.Answer) != 1 || in.Answer[0].(*mdns.A).A.String() != "127.0.0.1" {
		t.Fatalf("DNS answer for %s: %v", name, in.Answer)
	}
}

// getVia fetches u through the HTTP proxy at httpAddr.
func getVia(t *testing.T, httpAddr, u string) (int, string) {
	t.Helper()
	proxy, _ := url.Parse("http://" + httpAddr)
	tr := &http.Transport{Proxy: http.ProxyURL(proxy)}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s through the proxy address: %v", u, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body)
}

// TestServesWebAndDNS runs the command in-process and uses what it prints
// the way a person would: resolve a seed's host through the DNS server,
// fetch the seed through the proxy address.
func TestServesWebAndDNS(t *testing.T) {
	out := start(t, "-hosts", "5", "-pages", "5", "-addr", "127.0.0.1:0", "-dns", freeAddr(t))
	httpAddr := field(t, out, "HTTP  http://")
	dnsAddr := field(t, out, "DNS   ")
	seed := field(t, out, "seeds:\n  ")

	u, err := url.Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	resolve(t, dnsAddr, u.Hostname())
	if status, body := getVia(t, httpAddr, seed); status != 200 || !strings.Contains(body, "<a ") {
		t.Fatalf("seed answered %d with %.200q", status, body)
	}
	if !strings.Contains(out, "-subdomain-trap") {
		t.Errorf("output does not mention -subdomain-trap:\n%s", out)
	}
}

// TestSubdomainTrap enables the trap and follows the hints: its hosts and
// its bare domain resolve, its entry answers and links 30 hosts under it.
func TestSubdomainTrap(t *testing.T) {
	out := start(t, "-hosts", "3", "-pages", "3", "-addr", "127.0.0.1:0", "-dns", freeAddr(t),
		"-subdomain-trap", "Explode.Test")
	httpAddr := field(t, out, "HTTP  http://")
	dnsAddr := field(t, out, "DNS   ")
	entry := strings.TrimSuffix(field(t, out, `subdomain explosion under "explode.test": `), ",")
	if !strings.HasPrefix(entry, "http://x0.explode.test:") {
		t.Fatalf("entry %q", entry)
	}
	for _, name := range []string{"x0.explode.test", "x1z.explode.test", "explode.test", "h000.sim.test"} {
		resolve(t, dnsAddr, name)
	}
	status, body := getVia(t, httpAddr, entry)
	if status != 200 || strings.Count(body, ".explode.test:") != 30 {
		t.Fatalf("entry answered %d with %.300q", status, body)
	}
	if status, body := getVia(t, httpAddr, field(t, out, "seeds:\n  ")); status != 200 || !strings.Contains(body, entry) {
		t.Errorf("h000 (%d) does not link the trap's entry %s", status, entry)
	}
}

// field returns the first whitespace-delimited word after prefix in out.
func field(t *testing.T, out, prefix string) string {
	t.Helper()
	i := strings.Index(out, prefix)
	if i < 0 {
		t.Fatalf("output lacks %q:\n%s", prefix, out)
	}
	return strings.Fields(out[i+len(prefix):])[0]
}

// TestRefusesBadFlags runs the command on each rejected command line: a
// usage error naming the problem, printed as one line, exit status 2.
func TestRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-addr", "10.0.0.1:80"}, `-addr "10.0.0.1:80" is not a loopback IP:PORT`},
		{[]string{"-addr", ""}, `-addr "" is not a loopback IP:PORT`},
		{[]string{"-addr", "localhost:8080"}, "is not a loopback IP:PORT"},
		{[]string{"-dns", "0.0.0.0:53"}, `-dns "0.0.0.0:53" is not a loopback IP:PORT`},
		{[]string{"-hosts", "0"}, "-hosts and -pages must be at least 1"},
		{[]string{"-pages", "-3"}, "-hosts and -pages must be at least 1"},
		{[]string{"-latency", "-1ms"}, "-latency -1ms cannot be negative"},
		{[]string{"-duration", "-1s"}, "-duration -1s cannot be negative"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-nosuchflag"}, "flag provided but not defined: -nosuchflag (-h lists the flags)"},
		{[]string{"-hosts", "many"}, `invalid value "many" for flag -hosts`},
		{[]string{"-subdomain-trap", "sim.test", "-dns", ""}, `-subdomain-trap "sim.test": Config.SubdomainTrap "sim.test" overlaps`},
		{[]string{"-subdomain-trap", "a.sim.test", "-dns", ""}, "overlaps"},
		{[]string{"-subdomain-trap", "a.explode.test", "-dns", ""}, "is not a registrable domain"},
	} {
		err := run(context.Background(), tc.args, io.Discard, io.Discard)
		var stderr strings.Builder
		code := exitCode(err, &stderr)
		msg := stderr.String()
		if code != 2 || !strings.HasPrefix(msg, "simweb: ") || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("run(%q): exit %d, %q; want 2 and one line with %q", tc.args, code, msg, tc.want)
		}
	}
	// A busy port is no usage error: exit 1.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var stderr strings.Builder
	if code := exitCode(run(context.Background(), []string{"-addr", l.Addr().String(), "-dns", ""}, io.Discard, io.Discard), &stderr); code != 1 {
		t.Errorf("busy port: exit %d, %q", code, stderr.String())
	}
}

// TestProxyHint follows the printed proxy hint with curl itself: the
// seed comes back through the proxy address.
func TestProxyHint(t *testing.T) {
	out := start(t, "-hosts", "3", "-pages", "3", "-addr", "127.0.0.1:0", "-dns", "")
	httpAddr := field(t, out, "HTTP  http://")
	seed := field(t, out, "seeds:\n  ")
	want := "curl -x http://" + httpAddr + " " + seed
	if !strings.Contains(out, want) || strings.Contains(out, "HTTP_PROXY") {
		t.Fatalf("output lacks %q (or names HTTP_PROXY, which curl ignores):\n%s", want, out)
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl to follow the hint with")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := exec.CommandContext(ctx, curl, "-sS", "--noproxy", "", "-x", "http://"+httpAddr, seed).Output()
	if err != nil || !strings.Contains(string(body), "<a ") {
		t.Fatalf("%s: %v\n%.200s", want, err, body)
	}
}
