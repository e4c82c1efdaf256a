package fetchtest_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/proxy"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestProxyForward: a plain http request in absolute form goes through
// the HTTP proxy to the web, and the proxy's upstream connection is the
// one the web saw.
func TestProxyForward(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2})
	defer w.Close()
	p := fetchtest.NewProxy(fetchtest.ProxyConfig{Dial: w.DialContext})
	defer p.Close()
	tr := &http.Transport{Proxy: http.ProxyURL(p.HTTPURL())}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for _, u := range w.PagesOf(w.OrdinaryHosts()[0])[:3] {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != w.Status(u) || len(b) == 0 {
			t.Errorf("%s: %d, %d bytes", u, resp.StatusCode, len(b))
		}
	}
	plog, wlog := p.Log(), w.Log()
	if len(plog) != 3 || len(wlog) != 3 {
		t.Fatalf("proxy log %d, web log %d entries; want 3 each", len(plog), len(wlog))
	}
	for i, e := range plog {
		if e.Proto != "http" || e.Method != "GET" || e.Target != w.URL(wlog[i].Host, wlog[i].Path) || e.Upstream != wlog[i].Remote || e.Status != 200 {
			t.Errorf("proxy log %+v; web log %+v", e, wlog[i])
		}
	}
}

// TestProxyTunnels: CONNECT and SOCKS5 tunnels reach the web; the log
// shows the target asked for, the Host header of a CONNECT, the user, and
// the upstream connection the web saw.
func TestProxyTunnels(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2})
	defer w.Close()
	p := fetchtest.NewProxy(fetchtest.ProxyConfig{User: "u", Password: "p w"})
	defer p.Close()
	target := w.Addr() // 127.0.0.1:PORT: the default Dial allows loopback
	page := w.Seeds()[0]
	pu, _ := url.Parse(page)

	get := func(conn net.Conn) int {
		req, _ := http.NewRequest("GET", page, nil)
		if err := req.Write(conn); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	// CONNECT to IP:port, the name in Host.
	conn, err := net.Dial("tcp", p.HTTPURL().Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "CONNECT "+target+" HTTP/1.1\r\nHost: "+pu.Host+"\r\nProxy-Authorization: Basic dTpwIHc=\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v, %v", resp, err)
	}
	if s := get(conn); s != 200 {
		t.Errorf("GET through CONNECT: %d", s)
	}

	// SOCKS5 with user and password (golang.org/x/net/proxy's client).
	d, err := proxy.SOCKS5("tcp", p.SOCKS5URL().Host, &proxy.Auth{User: "u", Password: "p w"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := d.(proxy.ContextDialer).DialContext(context.Background(), "tcp", target)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if s := get(sc); s != 200 {
		t.Errorf("GET through SOCKS5: %d", s)
	}

	log, wlog := p.Log(), w.Log()
	if len(log) != 2 || len(wlog) != 2 {
		t.Fatalf("proxy log %+v, web log %d entries", log, len(wlog))
	}
	want := []fetchtest.ProxyRequest{
		{Proto: "http", Method: "CONNECT", Target: target, Host: pu.Host, User: "u", Status: 200, Upstream: wlog[0].Remote},
		{Proto: "socks5", Method: "CONNECT", Target: target, User: "u", Status: 0, Upstream: wlog[1].Remote},
	}
	for i, e := range log {
		e.Time = want[i].Time
		if e != want[i] {
			t.Errorf("log[%d] = %+v, want %+v", i, e, want[i])
		}
	}
}

// TestProxyRefusals: wrong credentials, an address Dial does not allow
// and a port nobody listens on, over both protocols.
func TestProxyRefusals(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	p := fetchtest.NewProxy(fetchtest.ProxyConfig{User: "u", Password: "p"})
	defer p.Close()

	connect := func(target, auth string) int {
		conn, err := net.Dial("tcp", p.HTTPURL().Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n"+auth+"\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: "CONNECT"})
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	socks := func(target string, auth *proxy.Auth) error {
		d, _ := proxy.SOCKS5("tcp", p.SOCKS5URL().Host, auth, nil)
		c, err := d.(proxy.ContextDialer).DialContext(context.Background(), "tcp", target)
		if err == nil {
			c.Close()
		}
		return err
	}
	good := "Proxy-Authorization: Basic dTpw\r\n"
	for _, tt := range []struct {
		target, auth string
		http         int
		socksErr     string
	}{
		{closed, "", 407, "authentication failed"},
		{"10.1.2.3:80", good, 403, "connection not allowed by ruleset"},
		{"example.com:80", good, 403, "connection not allowed by ruleset"},
		{closed, good, 502, "connection refused"},
	} {
		if got := connect(tt.target, tt.auth); got != tt.http {
			t.Errorf("CONNECT %s (%q): %d, want %d", tt.target, tt.auth, got, tt.http)
		}
		auth := &proxy.Auth{User: "u", Password: "p"}
		if tt.auth == "" {
			auth.Password = "wrong"
		}
		if err := socks(tt.target, auth); err == nil || !strings.Contains(err.Error(), tt.socksErr) {
			t.Errorf("SOCKS5 %s: %v, want %q", tt.target, err, tt.socksErr)
		}
	}
	for _, e := range p.Log() {
		if e.Upstream != "" {
			t.Errorf("refused %+v made a connection", e)
		}
	}
}

// TestDialAt: the web answers at a stand-in address only through DialAt.
func TestDialAt(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 1})
	defer w.Close()
	ip := netip.MustParseAddr("192.88.99.7")
	dial := w.DialAt(ip)
	c, err := dial(context.Background(), "tcp", netip.AddrPortFrom(ip, uint16(atoi(w.Port()))).String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	for _, addr := range []string{"192.88.99.8:" + w.Port(), "192.88.99.7:1", w.Addr()} {
		if _, err := dial(context.Background(), "tcp", addr); err == nil {
			t.Errorf("DialAt(%s) dialed %s", ip, addr)
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
