package fetchtest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNotAllowed is the error of a ProxyConfig.Dial that refuses an
// address: the proxy answers 403 (HTTP) or reply 2, "connection not
// allowed by ruleset" (SOCKS5).
var ErrNotAllowed = errors.New("fetchtest: the proxy does not connect there")

// ProxyConfig configures a Proxy. The zero value is a proxy without
// authentication that connects only to loopback IP addresses.
type ProxyConfig struct {
	// Dial connects to the address a client asks for (host:port, the host
	// an IP address or a name as the client sent it). An error wrapping
	// ErrNotAllowed is answered 403 / SOCKS5 reply 2, a refused
	// connection 502 / reply 5, a timeout 504 / reply 6, any other error
	// 502 / reply 4. Default: IP addresses in 127.0.0.0/8 and ::1 only,
	// dialed directly; any name or other address is not allowed, so the
	// proxy never reaches beyond the machine. Web.DialAt stands a web in
	// for a public network.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// User and Password, when User is set, are the credentials clients
	// must give: Proxy-Authorization Basic (HTTP; 407 without them) or
	// the SOCKS5 user/password method (RFC 1929). Default: none asked.
	User, Password string
}

// ProxyRequest is one entry of a Proxy's log: a tunnel opened or refused
// (HTTP CONNECT, SOCKS5 CONNECT) or a request forwarded (an HTTP request
// in absolute form). The requests that go through a tunnel are not
// seen by the proxy; match Upstream with the web's Request.Remote.
type ProxyRequest struct {
	Proto    string    // "http" or "socks5"
	Method   string    // "CONNECT", or the method of a forwarded request
	Target   string    // the address asked for (host:port), or a forwarded request's absolute URL
	Host     string    // the Host header (HTTP), "" if none
	User     string    // the user name the client authenticated as, "" if none
	Upstream string    // the proxy's own address on its connection to the target, "" if none was made
	Status   int       // the HTTP status answered; for SOCKS5 the reply code (0: success)
	Time     time.Time // when the proxy answered
}

// Proxy is a forward proxy on 127.0.0.1 for tests: an HTTP proxy (CONNECT
// tunnels, and plain http requests in absolute form forwarded) and a
// SOCKS5 server (CONNECT to an IPv4, IPv6 or name address), each on a
// port of its own, with a log of every tunnel and request. Create it with
// NewProxy and stop it with Close; all methods are safe for concurrent
// use.
type Proxy struct {
	cfg     ProxyConfig
	httpLn  net.Listener
	socksLn net.Listener
	tr      *http.Transport // forwarded requests
	closing chan struct{}   // closed by Close: dials and forwarded requests stop

	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{} // every open connection, closed by Close
	closed bool
	log    []ProxyRequest
}

// NewProxy starts a proxy. It panics if it cannot listen, like
// httptest.NewServer.
func NewProxy(cfg ProxyConfig) *Proxy {
	if cfg.Dial == nil {
		cfg.Dial = dialLoopback
	}
	p := &Proxy{cfg: cfg, conns: map[net.Conn]struct{}{}}
	p.closing = make(chan struct{})
	var err error
	if p.httpLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		panic(fmt.Sprintf("fetchtest: proxy: listen: %v", err))
	}
	if p.socksLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		p.httpLn.Close()
		panic(fmt.Sprintf("fetchtest: proxy: listen: %v", err))
	}
	p.tr = &http.Transport{DialContext: cfg.Dial, DisableCompression: true, DisableKeepAlives: true,
		ResponseHeaderTimeout: time.Minute}
	p.wg.Add(2)
	go p.accept(p.httpLn, p.serveHTTP)
	go p.accept(p.socksLn, p.serveSOCKS)
	return p
}

// dialLoopback is the default ProxyConfig.Dial.
func dialLoopback(ctx context.Context, network, addr string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		return nil, fmt.Errorf("%w: %s is not a loopback IP address", ErrNotAllowed, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// DialAt returns a dial function for a Proxy (ProxyConfig.Dial) that
// connects to w's server when asked for ip:Port() and refuses
// (ErrNotAllowed) every other address. A test resolves the web's host
// names to ip, an address a private-address guard accepts (one outside
// the loopback, private, documentation and other special-use ranges),
// while the proxy itself is on loopback: the web is then a public
// network only the proxy reaches, and a fetcher that judges addresses
// must let the web's names through and still refuse loopback targets.
func (w *Web) DialAt(ip netip.Addr) func(ctx context.Context, network, addr string) (net.Conn, error) {
	want := netip.AddrPortFrom(ip, uint16(mustAtoi(w.port))).String()
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != want {
			return nil, fmt.Errorf("%w: %s", ErrNotAllowed, addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, "tcp", w.addr)
	}
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

// HTTPURL returns the HTTP proxy's URL, http://127.0.0.1:PORT, with the
// configured credentials.
func (p *Proxy) HTTPURL() *url.URL { return p.url("http", p.httpLn) }

// SOCKS5URL returns the SOCKS5 server's URL, socks5://127.0.0.1:PORT,
// with the configured credentials.
func (p *Proxy) SOCKS5URL() *url.URL { return p.url("socks5", p.socksLn) }

func (p *Proxy) url(scheme string, ln net.Listener) *url.URL {
	u := &url.URL{Scheme: scheme, Host: ln.Addr().String()}
	if p.cfg.User != "" {
		u.User = url.UserPassword(p.cfg.User, p.cfg.Password)
	}
	return u
}

// Log returns a copy of the log, in the order the proxy answered.
func (p *Proxy) Log() []ProxyRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.log)
}

// ResetLog empties the log.
func (p *Proxy) ResetLog() {
	p.mu.Lock()
	p.log = nil
	p.mu.Unlock()
}

func (p *Proxy) record(r ProxyRequest) {
	r.Time = time.Now()
	p.mu.Lock()
	p.log = append(p.log, r)
	p.mu.Unlock()
}

// Close stops the proxy, closes every connection (open tunnels too) and
// waits for its goroutines. Calling it again does nothing.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.closing)
	p.httpLn.Close()
	p.socksLn.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	p.tr.CloseIdleConnections()
}

// track registers c to be closed by Close; false if the proxy is closed
// (c is then closed).
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) accept(ln net.Listener, serve func(net.Conn)) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			serve(c)
		}()
	}
}

// opContext returns the context of one dial or forwarded request: done
// after d, or when Close is called. It is called from a goroutine of
// p.wg, so the one it starts is waited for too.
func (p *Proxy) opContext(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		select {
		case <-p.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// dial connects to addr for a client, registered for Close.
func (p *Proxy) dial(ctx context.Context, addr string) (net.Conn, error) {
	up, err := p.cfg.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if !p.track(up) {
		return nil, net.ErrClosed
	}
	return up, nil
}

// relay copies between the client (reading through br, which may hold
// bytes already) and the target until either side closes.
func (p *Proxy) relay(c net.Conn, br *bufio.Reader, up net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(up, br)
		up.Close()
	}()
	_, _ = io.Copy(c, up)
	c.Close()
	up.Close()
	<-done
	p.untrack(up)
}

// dialStatus is the HTTP status and SOCKS5 reply for a Dial error.
func dialStatus(err error) (int, byte) {
	var ne net.Error
	switch {
	case errors.Is(err, ErrNotAllowed):
		return http.StatusForbidden, 2
	case errors.Is(err, syscall.ECONNREFUSED):
		return http.StatusBadGateway, 5
	case errors.As(err, &ne) && ne.Timeout():
		return http.StatusGatewayTimeout, 6
	}
	return http.StatusBadGateway, 4
}

// authorized checks a Proxy-Authorization header and returns the user.
func (p *Proxy) authorized(h string) (string, bool) {
	if p.cfg.User == "" {
		return "", true
	}
	enc, ok := strings.CutPrefix(h, "Basic ")
	if !ok {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return "", false
	}
	user, pw, _ := strings.Cut(string(b), ":")
	return user, user == p.cfg.User && pw == p.cfg.Password
}

// serveHTTP serves one client connection of the HTTP proxy: a CONNECT,
// or one forwarded request (the connection is closed after it). The
// request head is read by hand: net/http drops the Host header of a
// CONNECT, which the log keeps.
func (p *Proxy) serveHTTP(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(io.LimitReader(c, 1<<20))
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		return
	}
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	hdr, err := tp.ReadMIMEHeader()
	if err != nil || !ok1 || !ok2 || !strings.HasPrefix(proto, "HTTP/1.") {
		_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	entry := ProxyRequest{Proto: "http", Method: method, Target: target, Host: hdr.Get("Host")}
	user, ok := p.authorized(hdr.Get("Proxy-Authorization"))
	entry.User = user
	if !ok {
		entry.Status = http.StatusProxyAuthRequired
		p.record(entry)
		_, _ = io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"fetchtest\"\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		return
	}
	ctx, cancel := p.opContext(10 * time.Second)
	defer cancel()
	if method == http.MethodConnect {
		up, err := p.dial(ctx, target)
		if err != nil {
			entry.Status, _ = dialStatus(err)
			p.record(entry)
			fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", entry.Status, http.StatusText(entry.Status))
			return
		}
		entry.Status, entry.Upstream = http.StatusOK, up.LocalAddr().String()
		p.record(entry)
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			p.untrack(up)
			return
		}
		// The tunnel is not bounded by the head's 1 MiB: read the rest
		// from the connection itself, after what br holds.
		buffered, _ := br.Peek(br.Buffered())
		p.relay(c, bufio.NewReader(io.MultiReader(strings.NewReader(string(buffered)), c)), up)
		return
	}
	p.forward(c, br, method, hdr, entry)
}

// hopByHop are the headers a proxy does not pass on (RFC 9110 §7.6.1).
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward sends one request in absolute form to its server and the answer
// back.
func (p *Proxy) forward(c net.Conn, br *bufio.Reader, method string, hdr textproto.MIMEHeader, entry ProxyRequest) {
	fail := func(status int) {
		entry.Status = status
		p.record(entry)
		fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", status, http.StatusText(status))
	}
	u, err := url.Parse(entry.Target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		fail(http.StatusBadRequest) // origin form, or https without CONNECT
		return
	}
	if hdr.Get("Transfer-Encoding") != "" {
		fail(http.StatusLengthRequired)
		return
	}
	var n int64
	if cl := hdr.Get("Content-Length"); cl != "" {
		if n, err = strconv.ParseInt(cl, 10, 64); err != nil || n < 0 || n > 1<<20 {
			fail(http.StatusBadRequest)
			return
		}
	}
	h := http.Header(hdr).Clone()
	for _, k := range hopByHop {
		h.Del(k)
	}
	h.Del("Host")
	var upstream string
	ctx, cancel := p.opContext(time.Minute)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		upstream = i.Conn.LocalAddr().String()
	}})
	req := &http.Request{Method: method, URL: u, Host: u.Host, Header: h, ContentLength: n, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(io.LimitReader(br, n))}
	if n == 0 {
		req.Body = http.NoBody
	}
	resp, err := p.tr.RoundTrip(req.WithContext(ctx))
	if err != nil {
		status, _ := dialStatus(err)
		fail(status)
		return
	}
	defer resp.Body.Close()
	entry.Status, entry.Upstream = resp.StatusCode, upstream
	p.record(entry)
	for _, k := range hopByHop {
		if k != "Transfer-Encoding" {
			resp.Header.Del(k)
		}
	}
	resp.Close = true // one request per client connection
	_ = resp.Write(c)
}

// serveSOCKS serves one client connection of the SOCKS5 server (RFC 1928;
// RFC 1929 authentication when credentials are configured).
func (p *Proxy) serveSOCKS(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil || head[0] != 5 {
		return
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	want := byte(0) // no authentication
	if p.cfg.User != "" {
		want = 2 // user name and password
	}
	if !slices.Contains(methods, want) {
		_, _ = c.Write([]byte{5, 0xff})
		return
	}
	if _, err := c.Write([]byte{5, want}); err != nil {
		return
	}
	entry := ProxyRequest{Proto: "socks5", Method: "CONNECT"}
	if want == 2 {
		user, pw, err := readUserPass(br)
		if err != nil {
			return
		}
		entry.User = user
		if user != p.cfg.User || pw != p.cfg.Password {
			_, _ = c.Write([]byte{1, 1})
			entry.Status = 0xff // no reply code: the authentication failed
			p.record(entry)
			return
		}
		if _, err := c.Write([]byte{1, 0}); err != nil {
			return
		}
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[0] != 5 {
		return
	}
	var host string
	switch req[3] {
	case 1, 4:
		b := make([]byte, 4)
		if req[3] == 4 {
			b = make([]byte, 16)
		}
		if _, err := io.ReadFull(br, b); err != nil {
			return
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return
		}
		host = string(b)
	default:
		_, _ = c.Write([]byte{5, 8, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	var port [2]byte
	if _, err := io.ReadFull(br, port[:]); err != nil {
		return
	}
	entry.Target = net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:]))))
	reply := func(code byte, bound netip.AddrPort) error {
		b := []byte{5, code, 0}
		if a := bound.Addr().Unmap(); a.Is4() {
			b = append(append(b, 1), a.AsSlice()...)
		} else {
			b = append(b, 1, 0, 0, 0, 0)
		}
		b = binary.BigEndian.AppendUint16(b, bound.Port())
		_, err := c.Write(b)
		return err
	}
	if req[1] != 1 { // CONNECT only
		entry.Status = 7
		p.record(entry)
		_ = reply(7, netip.AddrPort{})
		return
	}
	ctx, cancel := p.opContext(10 * time.Second)
	defer cancel()
	up, err := p.dial(ctx, entry.Target)
	if err != nil {
		_, code := dialStatus(err)
		entry.Status = int(code)
		p.record(entry)
		_ = reply(code, netip.AddrPort{})
		return
	}
	entry.Upstream = up.LocalAddr().String()
	p.record(entry)
	bound, _ := netip.ParseAddrPort(entry.Upstream)
	if err := reply(0, bound); err != nil {
		p.untrack(up)
		return
	}
	_ = c.SetDeadline(time.Time{})
	p.relay(c, br, up)
}

// readUserPass reads an RFC 1929 user name and password request.
func readUserPass(br *bufio.Reader) (user, pw string, err error) {
	ver, err := br.ReadByte()
	if err != nil || ver != 1 {
		return "", "", errors.New("fetchtest: bad SOCKS5 authentication version")
	}
	field := func() (string, error) {
		n, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		b := make([]byte, n)
		_, err = io.ReadFull(br, b)
		return string(b), err
	}
	if user, err = field(); err != nil {
		return "", "", err
	}
	pw, err = field()
	return user, pw, err
}
