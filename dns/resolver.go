package dns

import (
	"context"
	"net"
	"net/netip"
)

// Resolver maps a host name to its IP addresses. Implementations must be safe
// for concurrent use; a blocked lookup of one name must not delay lookups of
// others.
type Resolver interface {
	// LookupNetIP returns the addresses of host (IPv4 and IPv6). An IP
	// literal is returned as it is.
	LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error)
}

// System is a Resolver over a *net.Resolver (nil means net.DefaultResolver):
// the fallback when no nameserver is configured, and the second
// implementation of Resolver. It adds no cache of its own.
type System struct {
	// Resolver is the net.Resolver used; nil means net.DefaultResolver.
	Resolver *net.Resolver
}

var _ Resolver = System{}

// LookupNetIP implements Resolver.
func (s System) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	r := s.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}
