package fetch

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// mapResolver answers from a map (exact name, or "*.suffix" for every name
// under suffix) and counts lookups. seq, if set, gives per-name answers by
// lookup number, for rebinding tests.
type mapResolver struct {
	mu    sync.Mutex
	addrs map[string][]netip.Addr
	seq   map[string][][]netip.Addr
	n     map[string]int
}

func newMapResolver(pairs ...string) *mapResolver {
	r := &mapResolver{addrs: map[string][]netip.Addr{}, seq: map[string][][]netip.Addr{}, n: map[string]int{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		for _, a := range strings.Split(pairs[i+1], ",") {
			r.addrs[pairs[i]] = append(r.addrs[pairs[i]], netip.MustParseAddr(a))
		}
	}
	return r
}

func (r *mapResolver) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.n[host]
	r.n[host]++
	if s, ok := r.seq[host]; ok && len(s) > 0 {
		return s[min(i, len(s)-1)], nil
	}
	if a, ok := r.addrs[host]; ok {
		return a, nil
	}
	for k, a := range r.addrs {
		if suf, ok := strings.CutPrefix(k, "*"); ok && strings.HasSuffix(host, suf) {
			return a, nil
		}
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (r *mapResolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[host]
}
