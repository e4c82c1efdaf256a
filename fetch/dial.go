package fetch

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"sync"
	"time"
)

// connTrace collects what the dialer learns about the connection of one
// fetch. It travels in the request's context, which the transport passes to
// DialContext.
type connTrace struct {
	url     *url.URL // the request's, for Options.Proxy
	mu      sync.Mutex
	dns     time.Duration
	connect time.Duration
}

// connected records the time of the connection that succeeded; safe on
// a nil trace (no trace in the context).
func (t *connTrace) connected(d time.Duration) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.connect = d
	t.mu.Unlock()
}

type traceKey struct{}

// specialPrefixes are the special-use ranges the netip predicates do not
// cover, refused like private addresses.
var specialPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
}

// IsPrivate reports whether a is an address the fetcher refuses unless
// Options.AllowPrivate is set: loopback, private (RFC 1918, RFC 4193),
// link-local, multicast, unspecified, and the other special-use ranges that
// never host public web servers (carrier-grade NAT, documentation,
// benchmarking, reserved). IPv4-mapped IPv6 addresses, and NAT64 and 6to4
// addresses, are judged by the IPv4 address they carry. It is safe for
// concurrent use and does not allocate.
func IsPrivate(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() ||
		a.IsUnspecified() {
		return true
	}
	if a.Is6() && a.Zone() != "" {
		return true
	}
	for _, p := range specialPrefixes {
		if p.Contains(a.WithZone("")) {
			return true
		}
	}
	// An IPv6 address carrying an IPv4 one reaches it through a
	// translator (NAT64 on an IPv6-only network, a 6to4 relay): judge
	// that IPv4 address too, or 64:ff9b::a9fe:a9fe would reach the cloud
	// metadata service at 169.254.169.254.
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return IsPrivate(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return IsPrivate(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return false
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052, IPv4 in the last 32 bits
	sixToFour = netip.MustParsePrefix("2002::/16")    // RFC 3056, IPv4 in bits 16–47
)

// dial resolves the host of addr with the fetcher's resolver and connects to
// the first address that is allowed and answers, directly or through the
// proxy Options.Proxy chooses. Checking the addresses returned here, and
// dialing exactly them (or asking the proxy for exactly them), is what
// defeats DNS rebinding: a name cannot pass a check with one address and
// be dialed with another.
func (f *HTTP) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &Error{Op: "dial", Kind: KindBadURL, Err: err}
	}
	tr, _ := ctx.Value(traceKey{}).(*connTrace)
	var pu *url.URL
	if f.opts.Proxy != nil {
		target := &url.URL{Scheme: "http", Host: addr}
		if tr != nil && tr.url != nil {
			target = tr.url
		}
		if pu, err = f.opts.Proxy(target); err != nil {
			return nil, &Error{Op: "proxy", Kind: KindProxy, Err: err}
		}
	}
	start := time.Now()
	addrs, err := f.opts.Resolver.LookupNetIP(ctx, host)
	dnsTime := time.Since(start)
	if tr != nil {
		tr.mu.Lock()
		tr.dns = dnsTime
		tr.mu.Unlock()
	}
	if err != nil {
		return nil, classify("resolve", "", err, context.Cause(ctx)).withKind(KindDNS, ctx)
	}
	allowed := addrs[:0:0]
	for _, a := range addrs {
		if a = a.Unmap(); f.opts.AllowPrivate || !IsPrivate(a) {
			allowed = append(allowed, a)
		}
	}
	switch {
	case len(allowed) == 0 && len(addrs) > 0:
		return nil, &Error{Op: "dial", Kind: KindRefused, Err: ErrPrivateAddress}
	case len(allowed) == 0:
		return nil, &Error{Op: "resolve", Kind: KindDNS, Err: &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}}
	case pu != nil:
		return f.dialProxied(ctx, pu, allowed, host, port, tr)
	}
	var lastErr error
	for _, a := range allowed {
		cstart := time.Now()
		conn, err := f.tcp(ctx, network, netip.AddrPortFrom(a, parsePort(port)).String())
		if err == nil {
			tr.connected(time.Since(cstart))
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	e := classify("dial", "", lastErr, context.Cause(ctx))
	if ne, ok := lastErr.(net.Error); ok && ne.Timeout() && ctx.Err() == nil {
		e.Kind, e.Err = KindTimeout, ErrConnectTimeout
	}
	return nil, e
}

// withKind sets the kind unless the context's cause or cancellation decided
// it already.
func (e *Error) withKind(k Kind, ctx context.Context) *Error {
	if ctx.Err() == nil {
		e.Kind = k
	}
	return e
}

func parsePort(s string) uint16 {
	n := 0
	for i := 0; i < len(s) && n <= 65535; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0
		}
		n = n*10 + int(s[i]-'0')
	}
	if n > 65535 {
		return 0
	}
	return uint16(n)
}
