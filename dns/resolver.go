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
	// literal is returned as its address, an IPv4-mapped IPv6 one
	// unmapped.
	LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error)
}

// Prefetcher is implemented by resolvers that can resolve names ahead of
// need (IIR §20.2.2): a crawler hands it the hosts of the URLs it queues,
// so that their addresses are cached by the time their turn comes.
// Prefetch returns at once. Caching implements it.
type Prefetcher interface {
	Prefetch(hosts ...string)
}

// ResolverFunc adapts a function to the Resolver interface (e.g. a fixed
// answer in tests, or a wrapper that logs). It is as safe for concurrent
// use as the function is.
type ResolverFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// LookupNetIP calls f(ctx, host).
func (f ResolverFunc) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	return f(ctx, host)
}

// System is a Resolver over a *net.Resolver (nil means net.DefaultResolver):
// the fallback when no nameserver is configured, and the second
// implementation of Resolver. It adds no cache of its own; errors are
// converted to *Error (NotFound, Timeout, ServerFailure or Unknown) so that
// callers classify failures the same way for both implementations. Safe for
// concurrent use as far as the net.Resolver is (the default one is).
type System struct {
	// Resolver is the net.Resolver used; nil means net.DefaultResolver.
	Resolver *net.Resolver
}

var _ Resolver = System{}

// LookupNetIP implements Resolver. IPv4-mapped IPv6 addresses are unmapped.
func (s System) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	r := s.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fromNet(host, err)
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}
