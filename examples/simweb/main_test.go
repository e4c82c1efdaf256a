package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
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

// TestServesWebAndDNS runs the command in-process and uses what it prints
// the way a person would: resolve a seed's host through the DNS server,
// fetch the seed through the proxy address.
func TestServesWebAndDNS(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-hosts", "5", "-pages", "5", "-addr", "127.0.0.1:0", "-dns", freeAddr(t)}, pw, io.Discard)
		pw.Close()
	}()
	var lines []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if sc.Text() == "ready" {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	out := strings.Join(lines, "\n")
	httpAddr := field(t, out, "HTTP  http://")
	dnsAddr := field(t, out, "DNS   ")
	seed := field(t, out, "seeds:\n  ")

	u, err := url.Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	m := new(mdns.Msg)
	m.SetQuestion(mdns.Fqdn(u.Hostname()), mdns.TypeA)
	in, err := mdns.Exchange(m, dnsAddr)
	if err != nil {
		t.Fatalf("DNS query to %s: %v", dnsAddr, err)
	}
	if len(in.Answer) != 1 || in.Answer[0].(*mdns.A).A.String() != "127.0.0.1" {
		t.Fatalf("DNS answer for %s: %v", u.Hostname(), in.Answer)
	}

	proxy, _ := url.Parse("http://" + httpAddr)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}, Timeout: 5 * time.Second}
	resp, err := c.Get(seed)
	if err != nil {
		t.Fatalf("GET %s through the proxy address: %v", seed, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<a ") {
		t.Fatalf("seed answered %d with %.200q", resp.StatusCode, body)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
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

func TestRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-addr", "10.0.0.1:80"},
		{"-dns", "0.0.0.0:53"},
		{"-hosts", "0"},
		{"extra"},
		{"-nosuchflag"},
	} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
	}
}
