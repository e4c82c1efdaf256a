package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testServer starts an httptest server for h and returns it with a fetcher
// resolving example.test to it.
func testServer(t *testing.T, h http.HandlerFunc, opts Options) (*httptest.Server, *HTTP, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if opts.Resolver == nil {
		opts.Resolver = newMapResolver("example.test", "127.0.0.1")
	}
	opts.AllowPrivate = true
	f := NewHTTP(&opts)
	t.Cleanup(func() { f.Close() })
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return srv, f, "http://example.test:" + port
}

func get(t *testing.T, f Fetcher, raw string) (*Response, error) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return f.Fetch(context.Background(), &Request{URL: u})
}

func wantKind(t *testing.T, err error, k Kind, sentinel error) {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *fetch.Error", err, err)
	}
	if fe.Kind != k {
		t.Errorf("kind = %v, want %v (error: %v)", fe.Kind, k, err)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("error %v does not wrap %v", err, sentinel)
	}
}

func TestFetchBasic(t *testing.T) {
	var ua, accept atomic.Value
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		ua.Store(r.UserAgent())
		accept.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("ETag", `"v1"`)
		fmt.Fprint(w, "<title>héllo</title>")
	}, Options{UserAgent: "testbot/1"})
	resp, err := get(t, f, base+"/a")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || string(resp.Body) != "<title>héllo</title>" || resp.ContentType != "text/html" ||
		resp.Charset != "utf-8" || resp.ETag != `"v1"` || resp.Truncated || resp.Location != nil {
		t.Errorf("response = %+v", resp)
	}
	if ua.Load() != "testbot/1" || accept.Load() != "gzip" {
		t.Errorf("User-Agent %q, Accept-Encoding %q", ua.Load(), accept.Load())
	}
	if resp.Addr.Addr() != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("Addr = %v", resp.Addr)
	}
	tm := resp.Timings
	if tm.Start.IsZero() || tm.Connect <= 0 || tm.FirstByte <= 0 || tm.Total < tm.FirstByte || tm.Reused {
		t.Errorf("timings = %+v", tm)
	}
	resp, err = get(t, f, base+"/b")
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Timings.Reused || resp.Timings.DNS != 0 || resp.Timings.Connect != 0 {
		t.Errorf("second fetch timings = %+v, want a reused connection", resp.Timings)
	}
}

func TestDefaults(t *testing.T) {
	o := NewHTTP(nil).Options()
	if o.MaxBodySize != 10<<20 || o.MaxHeaderSize != 64<<10 || o.MaxRatio != 100 || o.AllowPrivate ||
		o.Timeout != time.Minute || o.ConnectTimeout != 10*time.Second || o.FirstByteTimeout != 30*time.Second ||
		o.MinRate != 1024 || o.UserAgent != DefaultUserAgent || o.Resolver == nil {
		t.Errorf("defaults = %+v", o)
	}
}

func TestIsPrivate(t *testing.T) {
	for _, tt := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true}, {"127.8.9.10", true}, {"::1", true}, {"10.1.2.3", true},
		{"172.16.0.1", true}, {"192.168.1.1", true}, {"169.254.169.254", true}, {"fe80::1", true},
		{"fc00::1", true}, {"224.0.0.1", true}, {"ff02::1", true}, {"0.0.0.0", true}, {"::", true},
		{"100.64.0.1", true}, {"255.255.255.255", true}, {"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", true},
		{"8.8.8.8", false}, {"93.184.216.34", false}, {"2606:4700::1111", false}, {"172.32.0.1", false},
		// IPv6 addresses that carry an IPv4 one reach it through a
		// translator: NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
		{"64:ff9b::7f00:1", true}, {"64:ff9b::a00:1", true}, {"64:ff9b::a9fe:a9fe", true},
		{"64:ff9b::808:808", false},
		{"2002:7f00:1::1", true}, {"2002:c0a8:101::1", true}, {"2002:808:808::1", false},
	} {
		if got := IsPrivate(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("IsPrivate(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

func TestPrivateAddressRefused(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	res := newMapResolver("loop.test", "127.0.0.1", "ten.test", "10.0.0.1", "mixed.test", "10.0.0.1,127.0.0.1,::1",
		"meta.test", "169.254.169.254", "v6.test", "::1", "mapped.test", "::ffff:127.0.0.1", "zero.test", "0.0.0.0")
	f := NewHTTP(&Options{Resolver: res})
	defer f.Close()
	for _, host := range []string{"127.0.0.1", "[::1]", "loop.test", "ten.test", "mixed.test", "meta.test", "v6.test", "mapped.test", "zero.test"} {
		_, err := get(t, f, "http://"+host+":"+port+"/")
		wantKind(t, err, KindRefused, ErrPrivateAddress)
	}
	if hits.Load() != 0 {
		t.Errorf("server was reached %d times", hits.Load())
	}
	// The same fetcher with AllowPrivate reaches it.
	g := NewHTTP(&Options{Resolver: res, AllowPrivate: true})
	defer g.Close()
	if resp, err := get(t, g, "http://loop.test:"+port+"/"); err != nil || resp.Status != 200 {
		t.Errorf("AllowPrivate fetch = %v, %v", resp, err)
	}
}

// TestRebinding: a name passes a check made before the fetch (say by a URL
// filter) with a public address, then resolves to loopback when the fetcher
// dials. The fetcher checks the address it dials, so it refuses.
func TestRebinding(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	res := newMapResolver()
	res.seq["rebind.test"] = [][]netip.Addr{{netip.MustParseAddr("93.184.216.34")}, {netip.MustParseAddr("127.0.0.1")}}
	first, _ := res.LookupNetIP(context.Background(), "rebind.test")
	if IsPrivate(first[0]) {
		t.Fatal("first answer should look public")
	}
	f := NewHTTP(&Options{Resolver: res})
	defer f.Close()
	_, err := get(t, f, "http://rebind.test:"+port+"/")
	wantKind(t, err, KindRefused, ErrPrivateAddress)
	if hits.Load() != 0 || res.lookups("rebind.test") != 2 {
		t.Errorf("hits %d, lookups %d", hits.Load(), res.lookups("rebind.test"))
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var hits atomic.Int32
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/a/b":
			http.Redirect(w, r, "../c?x=1", http.StatusMovedPermanently)
		case "/abs":
			w.Header().Set("Location", "HTTP://Other.test/ü")
			w.WriteHeader(http.StatusFound)
		case "/none":
			w.WriteHeader(http.StatusFound)
		}
	}, Options{})
	for _, tt := range []struct {
		path, loc string
		status    int
	}{
		{"/a/b", base + "/c?x=1", 301},
		{"/abs", "http://other.test/%C3%BC", 302}, // resolved as browsers do: host lower-cased
		{"/none", "", 302},
	} {
		resp, err := get(t, f, base+tt.path)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if resp.Location != nil {
			got = resp.Location.String()
		}
		if resp.Status != tt.status || got != tt.loc || resp.Redirect() != (tt.loc != "") {
			t.Errorf("%s: status %d location %q, want %d %q", tt.path, resp.Status, got, tt.status, tt.loc)
		}
	}
	if hits.Load() != 3 {
		t.Errorf("%d requests, want 3 (no redirect followed)", hits.Load())
	}
}

func TestConditionalGet(t *testing.T) {
	mod := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"abc"`)
		http.ServeContent(w, r, "x.html", mod, strings.NewReader("<p>page</p>"))
	}, Options{})
	u, _ := url.Parse(base + "/x")
	resp, err := f.Fetch(context.Background(), &Request{URL: u})
	if err != nil || resp.Status != 200 || resp.ETag != `"abc"` || resp.LastModified != mod.Format(http.TimeFormat) {
		t.Fatalf("first fetch = %+v, %v", resp, err)
	}
	for _, req := range []*Request{{URL: u, ETag: resp.ETag}, {URL: u, LastModified: resp.LastModified}} {
		r2, err := f.Fetch(context.Background(), req)
		if err != nil || !r2.NotModified() || len(r2.Body) != 0 {
			t.Errorf("conditional fetch %+v = %v, %v", req, r2, err)
		}
	}
	r3, err := f.Fetch(context.Background(), &Request{URL: u, ETag: `"old"`})
	if err != nil || r3.Status != 200 {
		t.Errorf("stale ETag = %v, %v", r3, err)
	}
}

func TestBodyLimits(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	gzBig := gzipped(big)
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		switch r.URL.Path {
		case "/plain":
			w.Write(big)
		case "/small":
			w.Write(big[:1000])
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzBig)
		}
	}, Options{MaxBodySize: 100 << 10, MaxRatio: 1 << 30})
	for _, path := range []string{"/plain", "/gzip"} {
		resp, err := get(t, f, base+path)
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Truncated || len(resp.Body) != 100<<10 || !bytes.Equal(resp.Body, big[:100<<10]) {
			t.Errorf("%s: truncated %v, %d bytes", path, resp.Truncated, len(resp.Body))
		}
	}
	resp, err := get(t, f, base+"/small")
	if err != nil || resp.Truncated || len(resp.Body) != 1000 {
		t.Errorf("small: %v, %v", resp, err)
	}
}

// TestUnlimitedBody: a MaxBodySize of math.MaxInt64 (no practical
// limit) reads bodies whole; limit arithmetic must not overflow.
func TestUnlimitedBody(t *testing.T) {
	page := strings.Repeat("<p>no limit</p>\n", 1000)
	gz := gzipped([]byte(page))
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Path == "/gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz)
			return
		}
		io.WriteString(w, page)
	}, Options{MaxBodySize: math.MaxInt64, KeepWire: true})
	for _, path := range []string{"/plain", "/gzip"} {
		resp, err := get(t, f, base+path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if string(resp.Body) != page || resp.Truncated {
			t.Errorf("%s: %d bytes, truncated %v; want the %d-byte page", path, len(resp.Body), resp.Truncated, len(page))
		}
	}
	if b, cut, err := DecodeBody(gz, "gzip", math.MaxInt64); err != nil || cut || string(b) != page {
		t.Errorf("DecodeBody with no limit: %d bytes, %v, %v", len(b), cut, err)
	}
}

// gzipped returns p gzip-compressed.
func gzipped(p []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(p)
	zw.Close()
	return b.Bytes()
}

func TestGzip(t *testing.T) {
	page := strings.Repeat("<p>Hello, gzip.</p>\n", 100)
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		switch r.URL.Path {
		case "/ok":
			zw := gzip.NewWriter(w)
			io.WriteString(zw, page)
			zw.Close()
		case "/corrupt":
			p := gzipped([]byte(page))
			p[len(p)-6] ^= 0xff // break the CRC
			w.Write(p)
		case "/notgzip":
			io.WriteString(w, page)
		case "/empty":
		}
	}, Options{})
	resp, err := get(t, f, base+"/ok")
	if err != nil || string(resp.Body) != page || resp.WireBytes >= int64(len(page)) {
		t.Fatalf("gzip: %v, %v", resp, err)
	}
	for _, p := range []string{"/corrupt", "/notgzip"} {
		_, err = get(t, f, base+p)
		wantKind(t, err, KindProtocol, nil)
	}
	if resp, err := get(t, f, base+"/empty"); err != nil || len(resp.Body) != 0 {
		t.Errorf("empty gzip body: %v, %v", resp, err)
	}
}

// TestGzipPoolsAfterFailures fetches through the pooled gzip readers and
// body buffers in an order where a failed response comes first: a reader
// put back after a bad header once held no decoder and the next response
// panicked. A body must also stay as it was when later fetches reuse the
// buffers it was read into.
func TestGzipPoolsAfterFailures(t *testing.T) {
	page := func(p string) string { return strings.Repeat("<p>"+p+"</p>\n", 200) }
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		switch {
		case r.URL.Path == "/notgzip":
			io.WriteString(w, page(r.URL.Path))
		case r.URL.Path == "/empty":
		default:
			zw := gzip.NewWriter(w)
			io.WriteString(zw, page(r.URL.Path))
			zw.Close()
		}
	}, Options{})
	var kept []*Response
	for i := range 8 {
		for _, bad := range []string{"/notgzip", "/empty"} {
			resp, err := get(t, f, base+bad)
			if bad == "/empty" && (err != nil || len(resp.Body) != 0) {
				t.Fatalf("%s: %v, %v", bad, resp, err)
			}
			p := fmt.Sprintf("/ok%d%s", i, bad)
			if resp, err = get(t, f, base+p); err != nil || string(resp.Body) != page(p) {
				t.Fatalf("%s after %s: %v", p, bad, err)
			}
			kept = append(kept, resp)
		}
	}
	for _, resp := range kept {
		if p := resp.URL.Path; string(resp.Body) != page(p) {
			t.Errorf("the body of %s changed after later fetches", p)
		}
	}
}

func TestCompressionBomb(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write(make([]byte, 2<<20)) // 2 MiB of zeros: about 2 KiB compressed
	zw.Close()
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb.Bytes())
	}, Options{})
	_, err := get(t, f, base+"/")
	wantKind(t, err, KindTooLarge, ErrCompressionBomb)
}

func TestHeaderTooLarge(t *testing.T) {
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("x", 32<<10))
	}, Options{MaxHeaderSize: 8 << 10})
	_, err := get(t, f, base+"/")
	wantKind(t, err, KindTooLarge, ErrHeaderTooLarge)
}

func TestTimeouts(t *testing.T) {
	release := make(chan struct{})
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/silent":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/drip":
			w.WriteHeader(200)
			for i := 0; i < 100; i++ {
				w.Write([]byte("x"))
				w.(http.Flusher).Flush()
				select {
				case <-time.After(20 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
		case "/long":
			w.WriteHeader(200)
			for i := 0; i < 100; i++ {
				w.Write(make([]byte, 4096))
				w.(http.Flusher).Flush()
				select {
				case <-time.After(10 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
		}
	}, Options{FirstByteTimeout: 100 * time.Millisecond, Timeout: 300 * time.Millisecond,
		MinRate: 1000, RateWindow: 100 * time.Millisecond})
	defer close(release)

	start := time.Now()
	_, err := get(t, f, base+"/silent")
	wantKind(t, err, KindTimeout, ErrFirstByte)
	_, err = get(t, f, base+"/drip")
	wantKind(t, err, KindTimeout, ErrTooSlow)
	_, err = get(t, f, base+"/long")
	wantKind(t, err, KindTimeout, ErrTimeout)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("timeouts took %v", d)
	}
	var fe *Error
	if errors.As(err, &fe) && !fe.Timeout() {
		t.Error("Timeout() = false")
	}
}

func TestFailures(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/short":
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte("only a few bytes"))
		case "/hangup":
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		case "/cut-header":
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Le"))
			c.Close()
		case "/garbage":
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Write([]byte("SSH-2.0-OpenSSH\r\n\r\n"))
			c.Close()
		}
	}, Options{})
	for _, tt := range []struct {
		url  string
		kind Kind
	}{
		{base + "/short", KindReset},
		{base + "/hangup", KindReset},
		{base + "/garbage", KindProtocol},
		{base + "/cut-header", KindProtocol},
		{"http://nxdomain.test/", KindDNS},
		{fmt.Sprintf("http://127.0.0.1:%d/", closedPort), KindConnect},
		{"ftp://example.test/", KindBadURL},
		{"/relative", KindBadURL},
	} {
		_, err := get(t, f, tt.url)
		var fe *Error
		if !errors.As(err, &fe) || fe.Kind != tt.kind {
			t.Errorf("%s: error %v, want kind %v", tt.url, err, tt.kind)
		}
		if fe != nil && fe.URL == "" && tt.kind != KindBadURL {
			t.Errorf("%s: error without URL: %v", tt.url, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	u, _ := url.Parse(base + "/short")
	_, err := f.Fetch(ctx, &Request{URL: u})
	wantKind(t, err, KindCanceled, context.Canceled)
}

func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secret")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	res := newMapResolver("example.com", "127.0.0.1")
	f := NewHTTP(&Options{Resolver: res, AllowPrivate: true})
	defer f.Close()
	_, err := get(t, f, "https://example.com:"+port+"/")
	wantKind(t, err, KindTLS, nil)

	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tc := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tc.RootCAs = pool
	g := NewHTTP(&Options{Resolver: res, AllowPrivate: true, TLSConfig: tc})
	defer g.Close()
	resp, err := get(t, g, "https://example.com:"+port+"/")
	if err != nil || string(resp.Body) != "secret" {
		t.Fatalf("trusted TLS fetch: %v, %v", resp, err)
	}
	_, err = get(t, g, "https://wrongname.test:"+port+"/")
	wantKind(t, err, KindDNS, nil)
	res.addrs["wrongname.test"] = res.addrs["example.com"]
	_, err = get(t, g, "https://wrongname.test:"+port+"/")
	wantKind(t, err, KindTLS, nil)
}

func TestCharset(t *testing.T) {
	latin1 := []byte("<html><body>caf\xe9 na\xefve \xa3</body></html>")
	cp1252 := []byte("<p>\x93quoted\x94 \x80 \x96</p>")
	sjis := []byte("<meta charset=\"shift_jis\"><p>\x93\xfa\x96\x7b</p>")
	_, f, base := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/latin1":
			w.Header().Set("Content-Type", "text/html")
			w.Write(latin1)
		case "/latin1-declared":
			w.Header().Set("Content-Type", "text/html; charset=ISO-8859-1")
			w.Write(latin1)
		case "/cp1252":
			w.Header().Set("Content-Type", "text/html")
			w.Write(cp1252)
		case "/sjis":
			w.Header().Set("Content-Type", "text/html")
			w.Write(sjis)
		case "/utf8-late":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(strings.Repeat(" ", 2000) + "naïve"))
		case "/declared-wrong":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<p>x\xe9</p>"))
		case "/binary":
			w.Header().Set("Content-Type", "image/png")
			w.Write(latin1)
		case "/sniff":
			w.Header()["Content-Type"] = nil // no header, no server-side sniffing
			w.Write([]byte("<!DOCTYPE html><title>x\xe9</title>"))
		}
	}, Options{})
	for _, tt := range []struct{ path, body, charset, ctype string }{
		{"/latin1", "<html><body>café naïve £</body></html>", "windows-1252", "text/html"},
		{"/latin1-declared", "<html><body>café naïve £</body></html>", "windows-1252", "text/html"},
		{"/cp1252", "<p>“quoted” € –</p>", "windows-1252", "text/html"},
		{"/sjis", "<meta charset=\"shift_jis\"><p>日本</p>", "shift_jis", "text/html"},
		{"/utf8-late", strings.Repeat(" ", 2000) + "naïve", "utf-8", "text/html"},
		{"/binary", string(latin1), "", "image/png"},
		{"/declared-wrong", "<p>x\uFFFD</p>", "utf-8", "text/html"},
		{"/sniff", "<!DOCTYPE html><title>xé</title>", "windows-1252", "text/html"},
	} {
		resp, err := get(t, f, base+tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.Body) != tt.body || resp.Charset != tt.charset || resp.ContentType != tt.ctype {
			t.Errorf("%s: body %q charset %q type %q; want %q %q %q", tt.path, resp.Body, resp.Charset, resp.ContentType, tt.body, tt.charset, tt.ctype)
		}
	}
}

func TestDNSTiming(t *testing.T) {
	res := &slowResolver{delay: 20 * time.Millisecond, r: newMapResolver("slow.test", "127.0.0.1")}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	f := NewHTTP(&Options{Resolver: res, AllowPrivate: true})
	defer f.Close()
	resp, err := get(t, f, "http://slow.test:"+port+"/")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Timings.DNS < 20*time.Millisecond || resp.Timings.FirstByte < resp.Timings.DNS {
		t.Errorf("timings = %+v", resp.Timings)
	}
}

type slowResolver struct {
	delay time.Duration
	r     *mapResolver
}

func (s *slowResolver) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.r.LookupNetIP(ctx, host)
}

func TestStatic(t *testing.T) {
	s := Static{"http://a.test/": {Status: 200, Body: []byte("hi"), ETag: `"1"`}}
	resp, err := get(t, s, "http://a.test/")
	if err != nil || resp.Status != 200 || string(resp.Body) != "hi" || resp.URL.String() != "http://a.test/" {
		t.Errorf("Static hit = %+v, %v", resp, err)
	}
	u, _ := url.Parse("http://a.test/")
	if resp, _ := s.Fetch(context.Background(), &Request{URL: u, ETag: `"1"`}); !resp.NotModified() || resp.Body != nil {
		t.Errorf("Static conditional = %+v", resp)
	}
	if resp, _ := get(t, s, "http://a.test/missing"); resp.Status != 404 {
		t.Errorf("Static miss = %+v", resp)
	}
	var ff Fetcher = FetcherFunc(func(ctx context.Context, req *Request) (*Response, error) {
		return &Response{URL: req.URL, Status: 418}, nil
	})
	if resp, _ := get(t, ff, "http://x.test/"); resp.Status != 418 {
		t.Errorf("FetcherFunc = %+v", resp)
	}
}

// TestResolverTimeout: a resolver that hangs is cut by the total timeout.
func TestResolverTimeout(t *testing.T) {
	res := &slowResolver{delay: 10 * time.Second, r: newMapResolver()}
	f := NewHTTP(&Options{Resolver: res, Timeout: 100 * time.Millisecond})
	defer f.Close()
	start := time.Now()
	_, err := get(t, f, "http://hang.test/")
	wantKind(t, err, KindTimeout, ErrTimeout)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

// BenchmarkFetch measures fetches per second from a loopback server (a
// 20 KiB gzip-encoded HTML page on a kept-alive connection), which bounds
// what one worker can do when the network is not the bottleneck.
func BenchmarkFetch(b *testing.B) {
	page := strings.Repeat("<p>Some text of a page, with <a href=/x>links</a>.</p>\n", 400)
	var gzPage bytes.Buffer
	zw := gzip.NewWriter(&gzPage)
	io.WriteString(zw, page)
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gzPage.Bytes())
	}))
	defer srv.Close()
	f := NewHTTP(&Options{Resolver: newMapResolver("bench.test", "127.0.0.1"), AllowPrivate: true})
	defer f.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	u, _ := url.Parse("http://bench.test:" + port + "/")
	req := &Request{URL: u}
	b.ReportAllocs()
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		resp, err := f.Fetch(context.Background(), req)
		if err != nil || len(resp.Body) != len(page) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}

// TestKeepWire: with KeepWire the body as received is kept beside the
// decoded one: the gzip stream for gzip, the bytes before charset
// conversion for text, nothing without the option; a wire copy cut short
// of a complete body is dropped rather than passed off as whole.
func TestKeepWire(t *testing.T) {
	page := strings.Repeat("<p>Caf\xe9 cr\xe8me, gzip.</p>\n", 100) // windows-1252
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, page)
	zw.Close()
	noise := make([]byte, 64<<10) // incompressible: longer gzipped than plain
	rand.NewChaCha8([32]byte{1}).Read(noise)
	var gzNoise bytes.Buffer
	zw = gzip.NewWriter(&gzNoise)
	zw.Write(noise)
	zw.Close()
	handler := func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gzip":
			w.Header().Set("Content-Type", "text/html; charset=windows-1252")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz.Bytes())
		case "/plain":
			w.Header().Set("Content-Type", "text/html; charset=windows-1252")
			io.WriteString(w, page)
		case "/noise":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzNoise.Bytes())
		}
	}
	utf8Page := strings.NewReplacer("\xe9", "é", "\xe8", "è").Replace(page)
	tests := []struct {
		name     string
		keep     bool
		path     string
		wantWire []byte
		wantBody string
	}{
		{"gzip kept", true, "/gzip", gz.Bytes(), utf8Page},
		{"plain kept", true, "/plain", []byte(page), utf8Page},
		{"gzip not kept", false, "/gzip", nil, utf8Page},
		{"plain not kept", false, "/plain", nil, utf8Page},
		{"wire longer than the body limit", true, "/noise", nil, string(noise)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, f, base := testServer(t, handler, Options{KeepWire: tt.keep, MaxBodySize: int64(len(noise))})
			resp, err := get(t, f, base+tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Body) != tt.wantBody || resp.Truncated {
				t.Errorf("body: %d bytes, truncated %v", len(resp.Body), resp.Truncated)
			}
			if !bytes.Equal(resp.Wire, tt.wantWire) || (tt.wantWire == nil) != (resp.Wire == nil) {
				t.Errorf("wire: %d bytes, want %d", len(resp.Wire), len(tt.wantWire))
			}
		})
	}
}
