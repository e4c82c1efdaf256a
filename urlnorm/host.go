package urlnorm

import (
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Host returns the host of u as politeness and DNS see it: lowercase,
// without port, brackets or trailing dots. It is safe for concurrent use and
// allocates only when the host has uppercase letters.
func Host(u *url.URL) string {
	return strings.ToLower(strings.TrimRight(u.Hostname(), "."))
}

// Domain returns the registrable domain of host (the public suffix plus one
// label, "eTLD+1", from the public suffix list compiled into
// golang.org/x/net/publicsuffix): "www.cs.stanford.edu" → "stanford.edu",
// "a.b.example.co.uk" → "example.co.uk". An IP address, a public suffix
// itself and a name under no known suffix (other than a single label) are
// returned as they are, so Domain never returns "". host should be
// lowercase, as Host returns it. Domain is safe for concurrent use; it costs
// a lookup in the compiled list (about half a microsecond, one small
// allocation inside publicsuffix).
func Domain(host string) string {
	host = strings.TrimRight(host, ".")
	if isIP(host) {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// isIP reports whether host is an IP address, without the allocation of a
// failed netip.ParseAddr for the common case, a name.
func isIP(host string) bool {
	if strings.IndexByte(host, ':') >= 0 {
		return true // IPv6; a name has no colon
	}
	if host == "" || host[len(host)-1] < '0' || host[len(host)-1] > '9' {
		return false // top-level domains are not numeric
	}
	_, err := netip.ParseAddr(host)
	return err == nil
}

// ReverseHost returns the labels of host in reverse order joined by dots,
// "www.stanford.edu" → "edu.stanford.www", so that sorting groups a domain's
// hosts together. IP addresses are returned as they are.
func ReverseHost(host string) string {
	if isIP(host) {
		return host
	}
	var b strings.Builder
	b.Grow(len(host))
	appendReversed(&b, host)
	return b.String()
}

func appendReversed(b *strings.Builder, host string) {
	for end := len(host); end > 0; {
		i := strings.LastIndexByte(host[:end], '.')
		if end < len(host) {
			b.WriteByte('.')
		}
		b.WriteString(host[i+1 : end])
		end = i
	}
}

// SortKey returns the host-reversed key that orders URLs for the web graph
// (book §20.4): "http://www.stanford.edu/alchemy" → "edu.stanford.www/alchemy".
// Sorting by SortKey puts the pages of a host together and hosts of a domain
// next to each other, which makes link lists compress well. The key is the
// reversed Host, a non-default port as ":port", then the escaped path and
// query; scheme, userinfo and fragment are not part of it, so
// http and https versions of a page share a key. Pass canonical URLs to get
// canonical keys. SortKey is safe for concurrent use; it allocates the
// result.
func SortKey(u *url.URL) string {
	host := Host(u)
	var b strings.Builder
	b.Grow(len(u.Host) + len(u.Path) + len(u.RawQuery) + 2)
	if strings.IndexByte(host, ':') >= 0 {
		b.WriteString("[" + host + "]")
	} else if isIP(host) {
		b.WriteString(host)
	} else {
		appendReversed(&b, host)
	}
	if p := u.Port(); p != "" && p != defaultPort(strings.ToLower(u.Scheme)) {
		b.WriteByte(':')
		b.WriteString(p)
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		b.WriteString(u.RawQuery)
	}
	return b.String()
}
