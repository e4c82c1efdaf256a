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

// Character classes of host names, for canonicalHost's table-driven scan.
const (
	chInvalid = iota
	chLower   // a-z - _
	chDigit   // 0-9
	chUpper   // A-Z
	chDot     // .
)

var charClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = chLower
		t[c-'a'+'A'] = chUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = chDigit
	}
	t['-'], t['_'], t['.'] = chLower, chLower, chDot
	return t
}()

// canonicalHost classifies host and returns it in the form used as cache
// key: lower case, without a trailing dot, with hash, a seeded FNV-1a hash
// of that form (it picks the cache shard). It scans host once and does not
// allocate for names already in that form (the cache-hit path). A name
// whose last label is numeric is taken as an IPv4 literal or rejected
// (RFC 3696 §2: top-level domains are never all-numeric).
func canonicalHost(host string, seed uint32) (name string, kind hostKind, addr netip.Addr, hash uint32) {
	if n := len(host); n > 1 && host[n-1] == '.' {
		host = host[:n-1]
	}
	if len(host) == 0 || len(host) > 253 {
		return "", hostInvalid, addr, 0
	}
	const prime = 16777619
	h := 2166136261 ^ seed
	upper := false
	label := 0
	numeric := true // the current label has digits only
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch charClass[c] {
		case chLower:
			numeric = false
		case chDigit:
		case chUpper:
			c += 'a' - 'A'
			upper = true
			numeric = false
		case chDot:
			if label == 0 {
				return "", hostInvalid, addr, 0
			}
			h = (h ^ uint32(c)) * prime
			label = 0
			numeric = true
			continue
		default:
			name, kind, addr = literal(host)
			return name, kind, addr, 0
		}
		h = (h ^ uint32(c)) * prime
		label++
		if label > 63 {
			return "", hostInvalid, addr, 0
		}
	}
	if label == 0 {
		return "", hostInvalid, addr, 0
	}
	if numeric {
		name, kind, addr = literal(host)
		return name, kind, addr, 0
	}
	if upper {
		host = strings.ToLower(host)
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return host, hostLocalhost, addr, h
	}
	return host, hostName, addr, h
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
