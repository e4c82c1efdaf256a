package fetch

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// standIn is the address the simulated web's names resolve to in the
// proxy tests: one the private-address guard accepts, which only the
// test proxy (fetchtest.Web.DialAt) knows how to reach. Nothing ever
// dials it: loopbackOnly fails a test that tries.
var standIn = netip.MustParseAddr("192.88.99.7")

// loopbackOnly makes f's TCP connections fail, and the test with them,
// for any address outside 127.0.0.0/8, and records the addresses dialed.
func loopbackOnly(t testing.TB, f *HTTP) *[]string {
	var mu sync.Mutex
	dialed := new([]string)
	d := net.Dialer{Timeout: f.opts.ConnectTimeout}
	f.tcp = func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		*dialed = append(*dialed, addr)
		mu.Unlock()
		if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().IsLoopback() {
			t.Errorf("dialed %s: tests reach 127.0.0.0/8 only", addr)
			return nil, errors.New("test: not a loopback address")
		}
		return d.DialContext(ctx, network, addr)
	}
	return dialed
}

func TestParseProxy(t *testing.T) {
	tests := []struct {
		raw, want, err string
	}{
		{"http://127.0.0.1:3128", "http://127.0.0.1:3128", ""},
		{"HTTP://proxy.example", "http://proxy.example:80", ""},
		{"http://u:p%40ss@proxy.example:8080/", "http://u:p%40ss@proxy.example:8080", ""},
		{"socks5://127.0.0.1", "socks5://127.0.0.1:1080", ""},
		{"SOCKS5://user:pw@[::1]:9050", "socks5://user:pw@[::1]:9050", ""},
		{"socks5h://127.0.0.1:9050", "", "use socks5://"},
		{"https://proxy.example", "", "not supported"},
		{"socks4://proxy.example", "", "not a proxy protocol"},
		{"proxy.example:3128", "", "not a proxy protocol"},
		{"127.0.0.1:3128", "", ""}, // url.Parse fails: first path segment in URL cannot contain colon
		{"//proxy.example:3128", "", "no scheme"},
		{"http://", "", "no host"},
		{"http://proxy.example/path", "", "host and port only"},
		{"http://proxy.example?x=1", "", "host and port only"},
		{"http://proxy.example:0", "", "out of range"},
		{"http://proxy.example:65536", "", "out of range"},
		{"http://u:secret@proxy.example:1/x", "", "xxxxx"}, // the password is not in the message
	}
	for _, tt := range tests {
		u, err := ParseProxy(tt.raw)
		switch {
		case tt.want != "":
			if err != nil || u.String() != tt.want {
				t.Errorf("ParseProxy(%q) = %v, %v; want %s", tt.raw, u, err, tt.want)
			}
		case err == nil || !errors.Is(err, ErrOption):
			t.Errorf("ParseProxy(%q) = %v, %v; want an ErrOption", tt.raw, u, err)
		case !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "secret"):
			t.Errorf("ParseProxy(%q): %v; want it to say %q (and no password)", tt.raw, err, tt.err)
		}
	}
}

// proxyWeb starts a small simulated web whose names resolve to standIn,
// and a proxy on loopback that reaches it there.
func proxyWeb(t testing.TB, cfg fetchtest.Config, pcfg fetchtest.ProxyConfig) (*fetchtest.Web, *fetchtest.Proxy) {
	w := fetchtest.NewWeb(cfg)
	t.Cleanup(w.Close)
	if pcfg.Dial == nil {
		pcfg.Dial = w.DialAt(standIn)
	}
	p := fetchtest.NewProxy(pcfg)
	t.Cleanup(p.Close)
	return w, p
}

// proxied returns a fetcher that judges w's names as public (standIn),
// refuses private targets, and permits the proxy on loopback.
func proxied(t testing.TB, w *fetchtest.Web, pu *url.URL, change func(*Options)) (*HTTP, *[]string) {
	o := &Options{Resolver: newMapResolver("*."+w.Domain(), standIn.String(), "inside.test", "127.0.0.1", "proxy.test", "127.0.0.1"),
		AllowPrivateProxy: true, Proxy: ProxyURL(pu)}
	if change != nil {
		change(o)
	}
	f := NewHTTP(o)
	t.Cleanup(func() { f.Close() })
	return f, loopbackOnly(t, f)
}

// TestProxyCrawl crawls a simulated web through each kind of proxy: every
// page is reached, every request the web logged came through a tunnel
// the proxy opened to the address the fetcher judged, and the fetcher
// dialed nothing but the proxy.
func TestProxyCrawl(t *testing.T) {
	for _, kind := range []string{"http", "socks5"} {
		t.Run(kind, func(t *testing.T) {
			w, p := proxyWeb(t, fetchtest.Config{Seed: 2, Hosts: 3, MeanPages: 6, Mirrors: -1, NearDuplicates: -1}, fetchtest.ProxyConfig{User: "crawl", Password: "pw"})
			pu := p.HTTPURL()
			if kind == "socks5" {
				pu = p.SOCKS5URL()
			}
			f, dialed := proxied(t, w, pu, nil)
			var got []string
			for _, h := range w.OrdinaryHosts() {
				for u := range crawl(t, f, w.URL(h, "/"), h) {
					got = append(got, u)
				}
			}
			want := 0
			for _, h := range w.OrdinaryHosts() {
				want += len(w.PagesOf(h))
			}
			// Every page of the ordinary hosts answers 200 and is linked
			// from its home page.
			if len(got) != want {
				t.Errorf("crawled %d pages, the hosts have %d", len(got), want)
			}
			resp, err := get(t, f, w.Seeds()[0])
			if err != nil || resp.Addr != netip.AddrPortFrom(standIn, uint16(parsePort(w.Port()))) {
				t.Errorf("Response.Addr %v (%v): want the target's, not the proxy's", resp.Addr, err)
			}
			f.Close()
			tunnels := map[string]fetchtest.ProxyRequest{}
			for _, e := range p.Log() {
				if e.Proto != kind || e.Method != "CONNECT" || e.User != "crawl" || e.Target != net.JoinHostPort(standIn.String(), w.Port()) ||
					(kind == "http" && !strings.HasSuffix(e.Host, "."+w.Domain()+":"+w.Port())) {
					t.Errorf("proxy log entry %+v", e)
				}
				tunnels[e.Upstream] = e
			}
			log := w.Log()
			for _, r := range log {
				if _, ok := tunnels[r.Remote]; !ok {
					t.Errorf("%s%s from %s: not through a tunnel of the proxy", r.Host, r.Path, r.Remote)
				}
			}
			if len(log) < want || len(tunnels) == 0 || len(tunnels) > len(log) {
				t.Errorf("%d requests, %d tunnels", len(log), len(tunnels))
			}
			for _, a := range *dialed {
				if a != pu.Host {
					t.Errorf("the fetcher dialed %s, not the proxy %s", a, pu.Host)
				}
			}
		})
	}
}

// TestProxyGuard: a proxy does not open a way around the private-address
// guard. A target that resolves to a private address is refused before
// the proxy is asked; the proxy's own address is judged too, unless
// AllowPrivateProxy or AllowPrivate permit it.
func TestProxyGuard(t *testing.T) {
	w, p := proxyWeb(t, fetchtest.Config{Seed: 1, Hosts: 1}, fetchtest.ProxyConfig{})
	page := w.Seeds()[0]
	named := &url.URL{Scheme: "http", Host: "proxy.test:" + p.HTTPURL().Port()}
	tests := []struct {
		name   string
		pu     *url.URL
		change func(*Options)
		target string
		kind   Kind
		err    error
	}{
		{"private target through http", p.HTTPURL(), nil, "http://inside.test:" + w.Port() + "/", KindRefused, ErrPrivateAddress},
		{"private target through socks5", p.SOCKS5URL(), nil, "http://inside.test:" + w.Port() + "/", KindRefused, ErrPrivateAddress},
		{"loopback literal through http", p.HTTPURL(), nil, "http://127.0.0.1:" + w.Port() + "/", KindRefused, ErrPrivateAddress},
		{"private proxy without permission", p.HTTPURL(), func(o *Options) { o.AllowPrivateProxy = false }, page, KindProxy, ErrPrivateProxy},
		{"private socks5 proxy without permission", p.SOCKS5URL(), func(o *Options) { o.AllowPrivateProxy = false }, page, KindProxy, ErrPrivateProxy},
		{"proxy name resolving to loopback", named, func(o *Options) { o.AllowPrivateProxy = false }, page, KindProxy, ErrPrivateProxy},
		{"proxy name with permission", named, nil, page, 0, nil},
		{"AllowPrivate implies the proxy", p.HTTPURL(), func(o *Options) { o.AllowPrivateProxy, o.AllowPrivate = false, true }, page, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.ResetLog()
			f, dialed := proxied(t, w, tt.pu, tt.change)
			resp, err := get(t, f, tt.target)
			if tt.err == nil {
				if err != nil || resp.Status != 200 {
					t.Fatalf("%v, %v", resp, err)
				}
				return
			}
			wantKind(t, err, tt.kind, tt.err)
			if n := len(p.Log()); n != 0 {
				t.Errorf("the proxy was asked %d times", n)
			}
			if tt.kind == KindProxy && len(*dialed) != 0 {
				t.Errorf("dialed %v", *dialed)
			}
		})
	}
}

// TestProxyFailures: each way a proxy fails is a *Error of the kind it
// is: the proxy's own failures are KindProxy, the target's as reported by
// the proxy are KindConnect, a proxy that stalls times out.
func TestProxyFailures(t *testing.T) {
	w, p := proxyWeb(t, fetchtest.Config{Seed: 1, Hosts: 1}, fetchtest.ProxyConfig{User: "u", Password: "p"})
	page := w.Seeds()[0]
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	down := ln.Addr().String()
	ln.Close()
	stall, _ := net.Listen("tcp", "127.0.0.1:0") // accepts (the kernel does) and never answers
	defer stall.Close()
	wrong := func(u *url.URL) *url.URL { u.User = url.UserPassword("u", "wrong"); return u }
	closedPort := "http://" + w.OrdinaryHosts()[0] + ":1/" // DialAt refuses it: not the web's port
	tests := []struct {
		name   string
		proxy  func(*url.URL) (*url.URL, error)
		target string
		kind   Kind
		is     error
		msg    string
	}{
		{"wrong credentials http", ProxyURL(wrong(p.HTTPURL())), page, KindProxy, nil, "407"},
		{"wrong credentials socks5", ProxyURL(wrong(p.SOCKS5URL())), page, KindProxy, nil, "authentication failed"},
		{"target not allowed http", ProxyURL(p.HTTPURL()), closedPort, KindProxy, nil, "403"},
		{"target not allowed socks5", ProxyURL(p.SOCKS5URL()), closedPort, KindProxy, nil, "not allowed by ruleset"},
		{"proxy down", ProxyURL(&url.URL{Scheme: "http", Host: down}), page, KindProxy, nil, "refused"},
		{"proxy stalls http", ProxyURL(&url.URL{Scheme: "http", Host: stall.Addr().String()}), page, KindTimeout, ErrConnectTimeout, ""},
		{"proxy stalls socks5", ProxyURL(&url.URL{Scheme: "socks5", Host: stall.Addr().String()}), page, KindTimeout, ErrConnectTimeout, ""},
		{"socks5h", ProxyURL(&url.URL{Scheme: "socks5h", Host: down}), page, KindProxy, ErrOption, ""},
		{"Proxy fails", func(*url.URL) (*url.URL, error) { return nil, errors.New("no proxy left") }, page, KindProxy, nil, "no proxy left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := proxied(t, w, nil, func(o *Options) { o.Proxy, o.ConnectTimeout = tt.proxy, 300*time.Millisecond })
			start := time.Now()
			_, err := get(t, f, tt.target)
			wantKind(t, err, tt.kind, tt.is)
			if tt.msg != "" && (err == nil || !strings.Contains(err.Error(), tt.msg)) {
				t.Errorf("error %v does not say %q", err, tt.msg)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}

	// The target refuses: the proxy reports it, and the kind is the
	// target's (KindConnect), as without a proxy.
	lo := fetchtest.NewProxy(fetchtest.ProxyConfig{})
	defer lo.Close()
	for _, pu := range []*url.URL{lo.HTTPURL(), lo.SOCKS5URL()} {
		f := NewHTTP(&Options{Resolver: newMapResolver("closed.test", "127.0.0.1"), AllowPrivate: true, Proxy: ProxyURL(pu)})
		loopbackOnly(t, f)
		_, err := get(t, f, "http://closed.test:"+strings.TrimPrefix(down, "127.0.0.1:")+"/")
		wantKind(t, err, KindConnect, nil)
		var pe *ProxyError
		if !errors.As(err, &pe) || pe.Target != down {
			t.Errorf("%s: %v: want a *ProxyError for %s", pu.Scheme, err, down)
		}
		f.Close()
	}
}

// TestProxyCancel: a fetch canceled while the proxy stalls returns at once.
func TestProxyCancel(t *testing.T) {
	stall, _ := net.Listen("tcp", "127.0.0.1:0")
	defer stall.Close()
	f := NewHTTP(&Options{Resolver: newMapResolver("a.test", "127.0.0.1"), AllowPrivate: true,
		Proxy: ProxyURL(&url.URL{Scheme: "http", Host: stall.Addr().String()})})
	defer f.Close()
	loopbackOnly(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	u, _ := url.Parse("http://a.test/")
	start := time.Now()
	_, err := f.Fetch(ctx, &Request{URL: u})
	wantKind(t, err, KindCanceled, context.Canceled)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestProxyLogin logs in to the members' area and crawls it through a
// SOCKS5 proxy: sessions and proxies together.
func TestProxyLogin(t *testing.T) {
	w, p := proxyWeb(t, fetchtest.Config{Seed: 1, Hosts: 1, Members: true}, fetchtest.ProxyConfig{})
	f, _ := proxied(t, w, p.SOCKS5URL(), func(o *Options) { o.Jar = newJar(t) })
	host := w.Host(fetchtest.Members)
	login, _ := url.Parse(w.URL(host, "/login"))
	resp, err := f.PostForm(context.Background(), login, url.Values{"user": {fetchtest.MembersUser}, "password": {fetchtest.MembersPassword}})
	if err != nil || resp.Status != http.StatusSeeOther {
		t.Fatalf("login: %v, %v", resp, err)
	}
	got := crawl(t, f, w.URL(host, "/members/"), host)
	for _, u := range w.MembersPages() {
		if !got[u] {
			t.Errorf("%s not crawled", u)
		}
	}
}

// BenchmarkFetchProxy compares a fetch from the simulated web direct and
// through each kind of proxy on loopback, on a kept-alive connection (the
// tunnel is reused) and on a new one per fetch (a tunnel opened each
// time).
func BenchmarkFetchProxy(b *testing.B) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 1, ChangePeriods: []time.Duration{0}})
	defer w.Close()
	p := fetchtest.NewProxy(fetchtest.ProxyConfig{})
	defer p.Close()
	u, _ := url.Parse(w.Seeds()[0])
	for _, via := range []string{"direct", "http", "socks5"} {
		for _, fresh := range []bool{false, true} {
			name := via + "/keepalive"
			if fresh {
				name = via + "/newconn"
			}
			b.Run(name, func(b *testing.B) {
				o := &Options{Resolver: newMapResolver("*."+w.Domain(), "127.0.0.1"), AllowPrivate: true}
				switch via {
				case "http":
					o.Proxy = ProxyURL(p.HTTPURL())
				case "socks5":
					o.Proxy = ProxyURL(p.SOCKS5URL())
				}
				f := NewHTTP(o)
				defer f.Close()
				req := &Request{URL: u}
				b.ReportAllocs()
				for b.Loop() {
					if fresh {
						f.Close()
					}
					resp, err := f.Fetch(context.Background(), req)
					if err != nil || resp.Status != 200 {
						b.Fatal(resp, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/fetch")
			})
		}
	}
}

// TestProxyTLS: https goes through both kinds of proxy, TLS end to end
// with the server (SNI and the certificate check use the name, the tunnel
// the IP), HTTP/2 when the server offers it.
func TestProxyTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secret over ", r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the wrong name's handshake fails on purpose
	srv.StartTLS()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tc := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tc.RootCAs = pool
	p := fetchtest.NewProxy(fetchtest.ProxyConfig{})
	defer p.Close()
	res := newMapResolver("example.com", "127.0.0.1", "wrongname.test", "127.0.0.1")
	for _, pu := range []*url.URL{p.HTTPURL(), p.SOCKS5URL()} {
		f := NewHTTP(&Options{Resolver: res, AllowPrivate: true, TLSConfig: tc, Proxy: ProxyURL(pu)})
		loopbackOnly(t, f)
		resp, err := get(t, f, "https://example.com:"+port+"/")
		if err != nil || string(resp.Body) != "secret over HTTP/2.0" {
			t.Errorf("%s: %v, %v", pu.Scheme, resp, err)
		}
		_, err = get(t, f, "https://wrongname.test:"+port+"/")
		wantKind(t, err, KindTLS, nil)
		f.Close()
	}
	want := "127.0.0.1:" + port
	for _, e := range p.Log() {
		if e.Target != want || e.Status != 200 && e.Status != 0 {
			t.Errorf("proxy log %+v, want a tunnel to %s", e, want)
		}
	}
	if n := len(p.Log()); n != 4 {
		t.Errorf("%d tunnels, want 4", n)
	}
}
