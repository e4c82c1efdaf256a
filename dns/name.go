package dns

import (
	"net/netip"
	"strings"
)

// hostKind is what canonicalHost found a host string to be.
type hostKind uint8

const (
	hostName      hostKind = iota // a DNS name to resolve
	hostLiteral                   // an IP literal (addr is set)
	hostLocalhost                 // "localhost" or a name under it (RFC 6761)
	hostInvalid                   // neither
)

// canonicalHost classifies host and returns it in the form used as cache
// key: lower case, without a trailing dot. It scans host once and does not
// allocate for names already in that form (the cache-hit path). A name
// whose last label is numeric is taken as an IPv4 literal or rejected
// (RFC 3696 §2: top-level domains are never all-numeric).
func canonicalHost(host string) (name string, kind hostKind, addr netip.Addr) {
	if n := len(host); n > 1 && host[n-1] == '.' {
		host = host[:n-1]
	}
	if len(host) == 0 || len(host) > 253 {
		return "", hostInvalid, addr
	}
	upper := false
	label := 0
	numeric := true // the current label has digits only
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case c == '.':
			if label == 0 {
				return "", hostInvalid, addr
			}
			label = 0
			numeric = true
			continue
		case 'a' <= c && c <= 'z', c == '-', c == '_':
			numeric = false
		case '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			upper = true
			numeric = false
		default:
			return literal(host)
		}
		label++
		if label > 63 {
			return "", hostInvalid, addr
		}
	}
	if label == 0 {
		return "", hostInvalid, addr
	}
	if numeric {
		return literal(host)
	}
	if upper {
		host = strings.ToLower(host)
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return host, hostLocalhost, addr
	}
	return host, hostName, addr
}

// literal parses an IP literal (IPv4, IPv6, IPv6 with zone).
func literal(host string) (string, hostKind, netip.Addr) {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return "", hostInvalid, a
	}
	return host, hostLiteral, a.Unmap()
}

// loopback returns the loopback addresses of network, for localhost.
func loopback(network string) []netip.Addr {
	switch network {
	case "ip4":
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}
	case "ip6":
		return []netip.Addr{netip.IPv6Loopback()}
	}
	return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
}
