package fetch

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/proxy"
)

// ErrPrivateProxy: the proxy's every address is one IsPrivate refuses and
// neither AllowPrivateProxy nor AllowPrivate is set (KindProxy).
var ErrPrivateProxy = errors.New("fetch: proxy address is private, loopback, link-local, multicast or unspecified")

// ProxyError is a proxy's refusal or failure to open a tunnel to a
// target: its HTTP answer to CONNECT, or its SOCKS5 reply. The *Error
// wrapping it is of KindConnect when the proxy reports that the target
// refused or could not be reached (HTTP 502, SOCKS5 replies 3 to 5),
// KindTimeout when it timed out (HTTP 504, SOCKS5 reply 6), KindProxy
// otherwise (authentication required or failed, target not allowed, a
// proxy that does not speak the protocol).
type ProxyError struct {
	Proxy  string // the proxy's address, host:port
	Target string // the address it was asked to reach, IP:port
	Status int    // the HTTP status of the answer to CONNECT; 0 for SOCKS5
	Msg    string // the status text, the SOCKS5 reply, or what was wrong
}

// Error implements error.
func (e *ProxyError) Error() string {
	s := "proxy " + e.Proxy + " to " + e.Target + ": "
	if e.Status != 0 {
		s += strconv.Itoa(e.Status) + " "
	}
	return s + e.Msg
}

// ParseProxy parses and checks a proxy URL for Options.Proxy:
// http://[user:password@]host[:port] (HTTP CONNECT; port 80 by default)
// or socks5://[user:password@]host[:port] (port 1080 by default). The
// scheme is case-insensitive; nothing may follow the host but "/". The
// URL returned has its scheme in lower case and its port. socks5h, which
// asks the proxy to resolve names, is refused: the fetcher resolves and
// judges every name itself. So is https (TLS to the proxy), which the
// fetcher does not speak. The errors wrap ErrOption.
func ParseProxy(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: proxy %q: %v", ErrOption, raw, err)
	}
	if err := checkProxy(u); err != nil {
		return nil, fmt.Errorf("%w: proxy %q: %v", ErrOption, redact(u), err)
	}
	v := *u
	v.Scheme = strings.ToLower(u.Scheme)
	if u.Port() == "" {
		v.Host = net.JoinHostPort(u.Hostname(), defaultProxyPort(v.Scheme))
	}
	v.Path = ""
	return &v, nil
}

func defaultProxyPort(scheme string) string {
	if scheme == "socks5" {
		return "1080"
	}
	return "80"
}

// checkProxy says what is wrong with a proxy URL, or nil.
func checkProxy(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "socks5":
	case "socks5h":
		return errors.New("socks5h lets the proxy resolve names, and the fetcher resolves and judges each name itself: use socks5://")
	case "https":
		return errors.New("TLS to the proxy (https://) is not supported: use http:// or socks5://")
	case "":
		return errors.New("no scheme: want http://host:port or socks5://host:port")
	default:
		return fmt.Errorf("scheme %q is not a proxy protocol the fetcher speaks (http, socks5)", u.Scheme)
	}
	switch {
	case u.Opaque != "" || u.Hostname() == "":
		return errors.New("no host")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return errors.New("a proxy URL has a host and port only")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q out of range", p)
		}
	}
	return nil
}

// redact returns u as a string without its password.
func redact(u *url.URL) string {
	if _, ok := u.User.Password(); ok {
		v := *u
		v.User = url.UserPassword(u.User.Username(), "xxxxx")
		return v.String()
	}
	return u.String()
}

// ProxyURL returns an Options.Proxy that sends every connection through
// the proxy u (see ParseProxy for the URLs accepted; a bad one fails
// every fetch with KindProxy). nil means direct connections.
func ProxyURL(u *url.URL) func(*url.URL) (*url.URL, error) {
	return func(*url.URL) (*url.URL, error) { return u, nil }
}

// dialProxied opens a tunnel through the proxy pu to one of targets (the
// addresses of host the guard allowed, in order) and returns it as a
// connection whose RemoteAddr is the target's. It tries the next target
// when the proxy reports the last one unreachable, and stops at any other
// failure: the proxy is the same for all of them.
func (f *HTTP) dialProxied(ctx context.Context, pu *url.URL, targets []netip.Addr, host, port string, tr *connTrace) (net.Conn, error) {
	if err := checkProxy(pu); err != nil {
		return nil, &Error{Op: "proxy", Kind: KindProxy, Err: fmt.Errorf("%w: proxy %q: %v", ErrOption, redact(pu), err)}
	}
	scheme := strings.ToLower(pu.Scheme)
	pport := pu.Port()
	if pport == "" {
		pport = defaultProxyPort(scheme)
	}
	start := time.Now()
	paddrs, err := f.opts.Resolver.LookupNetIP(ctx, pu.Hostname())
	if tr != nil {
		tr.mu.Lock()
		tr.dns += time.Since(start)
		tr.mu.Unlock()
	}
	if err != nil {
		e := classify("proxy", "", err, context.Cause(ctx))
		if ctx.Err() == nil {
			e.Kind = KindProxy
		}
		return nil, e
	}
	var lastErr error
	for _, t := range targets {
		target := netip.AddrPortFrom(t, parsePort(port))
		cstart := time.Now()
		conn, err := f.tunnel(ctx, scheme, pu, paddrs, pport, target, net.JoinHostPort(host, port))
		if err == nil {
			tr.connected(time.Since(cstart))
			return conn, nil
		}
		lastErr = err
		var fe *Error
		if ctx.Err() != nil || !errors.As(err, &fe) || (fe.Kind != KindConnect && fe.Kind != KindTimeout) {
			break
		}
	}
	return nil, lastErr
}

// tunnel connects to the proxy (the first of its addresses that the
// guard allows and that answers) and asks it for a tunnel to target.
func (f *HTTP) tunnel(ctx context.Context, scheme string, pu *url.URL, paddrs []netip.Addr, pport string, target netip.AddrPort, hostport string) (net.Conn, error) {
	allow := f.opts.AllowPrivate || f.opts.AllowPrivateProxy
	var (
		conn    net.Conn
		lastErr error
		refused int
	)
	for _, a := range paddrs {
		a = a.Unmap()
		if !allow && IsPrivate(a) {
			refused++
			continue
		}
		c, err := f.tcp(ctx, "tcp", netip.AddrPortFrom(a, parsePort(pport)).String())
		if err == nil {
			conn = c
			break
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case conn != nil:
	case lastErr != nil:
		e := classify("proxy", "", lastErr, context.Cause(ctx))
		if ne, ok := lastErr.(net.Error); ok && ne.Timeout() && ctx.Err() == nil {
			e.Err = errors.Join(ErrConnectTimeout, lastErr)
		}
		if ctx.Err() == nil {
			e.Kind = KindProxy // the proxy is down, not the site
		}
		return nil, e
	case refused > 0:
		return nil, &Error{Op: "proxy", Kind: KindProxy, Err: ErrPrivateProxy}
	default:
		return nil, &Error{Op: "proxy", Kind: KindProxy, Err: &net.DNSError{Err: "no addresses", Name: pu.Hostname(), IsNotFound: true}}
	}

	// The handshake has ConnectTimeout of its own, and ends at once when
	// the fetch is canceled.
	hctx, cancel := context.WithTimeoutCause(ctx, f.opts.ConnectTimeout, ErrConnectTimeout)
	defer cancel()
	stop := context.AfterFunc(hctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	var (
		tc  net.Conn
		err error
	)
	if scheme == "socks5" {
		tc, err = f.socks5(hctx, conn, pu, target)
	} else {
		tc, err = f.connect(conn, pu, target, hostport)
	}
	if !stop() || err != nil {
		conn.Close()
		var ne net.Error
		switch {
		case ctx.Err() != nil: // the fetch's context cut it
			if err == nil {
				err = context.Cause(ctx)
			}
			return nil, classify("proxy", "", err, context.Cause(ctx))
		case hctx.Err() != nil, errors.As(err, &ne) && ne.Timeout():
			// The handshake's own timeout (the SOCKS5 client sets the
			// connection's deadline from hctx, so it may see it first).
			return nil, &Error{Op: "proxy", Kind: KindTimeout, Err: ErrConnectTimeout}
		}
		return nil, err
	}
	return &proxiedConn{Conn: tc, remote: net.TCPAddrFromAddrPort(target)}, nil
}

// connect asks an HTTP proxy, over conn, for a tunnel to target, naming
// the host in the Host header (RFC 9110 §9.3.6: the request target is the
// address to connect to).
func (f *HTTP) connect(conn net.Conn, pu *url.URL, target netip.AddrPort, hostport string) (net.Conn, error) {
	var b strings.Builder
	b.WriteString("CONNECT " + target.String() + " HTTP/1.1\r\nHost: " + hostport + "\r\n")
	if httpguts.ValidHeaderFieldValue(f.opts.UserAgent) { // it is written raw here, not by net/http
		b.WriteString("User-Agent: " + f.opts.UserAgent + "\r\n")
	}
	if pu.User != nil {
		pw, _ := pu.User.Password()
		b.WriteString("Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(pu.User.Username()+":"+pw)) + "\r\n")
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return nil, proxyErr(err, pu, target)
	}
	lr := &io.LimitedReader{R: conn, N: f.opts.MaxHeaderSize}
	br := bufio.NewReaderSize(lr, 4096)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		if lr.N == 0 {
			return nil, &Error{Op: "proxy", Kind: KindTooLarge, Err: ErrHeaderTooLarge}
		}
		return nil, proxyErr(err, pu, target)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		pe := &ProxyError{Proxy: pu.Host, Target: target.String(), Status: resp.StatusCode, Msg: http.StatusText(resp.StatusCode)}
		kind := KindProxy
		switch resp.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable:
			kind = KindConnect
		case http.StatusGatewayTimeout:
			kind = KindTimeout
		}
		return nil, &Error{Op: "proxy", Kind: kind, Err: pe}
	}
	c := &proxiedConn{Conn: conn}
	if n := br.Buffered(); n > 0 {
		// The proxy sent tunnel bytes right behind its answer: they are
		// the start of the target's.
		c.pending, _ = br.Peek(n)
	}
	return c, nil
}

// socks5 asks a SOCKS5 proxy, over conn, for a tunnel to target, named by
// its IP address (golang.org/x/net/proxy speaks the protocol).
func (f *HTTP) socks5(ctx context.Context, conn net.Conn, pu *url.URL, target netip.AddrPort) (net.Conn, error) {
	var auth *proxy.Auth
	if pu.User != nil {
		pw, _ := pu.User.Password()
		auth = &proxy.Auth{User: pu.User.Username(), Password: pw}
	}
	d, err := proxy.SOCKS5("tcp", conn.RemoteAddr().String(), auth, nil)
	if err != nil {
		return nil, proxyErr(err, pu, target)
	}
	wc, ok := d.(interface {
		DialWithConn(ctx context.Context, c net.Conn, network, address string) (net.Addr, error)
	})
	if !ok {
		return nil, &Error{Op: "proxy", Kind: KindOther, Err: errors.New("fetch: golang.org/x/net/proxy's SOCKS5 dialer cannot use a connection of the fetcher's")}
	}
	if _, err := wc.DialWithConn(ctx, conn, "tcp", target.String()); err != nil {
		return nil, socksErr(err, pu, target)
	}
	return conn, nil
}

// socksReplies maps the SOCKS5 reply texts of golang.org/x/net/proxy
// (RFC 1928 §6) to the kind of failure they are.
var socksReplies = []struct {
	text string
	kind Kind
}{
	{"network unreachable", KindConnect},
	{"host unreachable", KindConnect},
	{"connection refused", KindConnect},
	{"TTL expired", KindTimeout},
	{"connection not allowed by ruleset", KindProxy},
	{"general SOCKS server failure", KindProxy},
	{"command not supported", KindProxy},
	{"address type not supported", KindProxy},
}

func socksErr(err error, pu *url.URL, target netip.AddrPort) error {
	msg := err.Error()
	for _, r := range socksReplies {
		if strings.Contains(msg, r.text) {
			return &Error{Op: "proxy", Kind: r.kind, Err: &ProxyError{Proxy: pu.Host, Target: target.String(), Msg: r.text}}
		}
	}
	return proxyErr(err, pu, target)
}

// proxyErr is a failure to speak with the proxy: KindProxy, unless the
// connection was cut by a timeout or the fetch's context (the caller
// sorts those out).
func proxyErr(err error, pu *url.URL, target netip.AddrPort) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return err
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "socks ") {
		msg = msg[i+2:] // the reason, without x/net's "socks connect tcp a->b: " prefix
	}
	return &Error{Op: "proxy", Kind: KindProxy, Err: &ProxyError{Proxy: pu.Host, Target: target.String(), Msg: msg}}
}

// proxiedConn is a tunnel through a proxy: it reports the target as its
// remote address (Response.Addr is the server's, not the proxy's) and
// first returns the bytes the proxy sent behind its answer.
type proxiedConn struct {
	net.Conn
	remote  net.Addr
	pending []byte
}

func (c *proxiedConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

func (c *proxiedConn) RemoteAddr() net.Addr {
	if c.remote != nil {
		return c.remote
	}
	return c.Conn.RemoteAddr()
}
