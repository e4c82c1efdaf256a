package dns_test

import (
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/resolvertest"
)

// TestPrefetcherConformance runs the Prefetcher suite on Caching, the
// package's only dns.Prefetcher.
func TestPrefetcherConformance(t *testing.T) {
	resolvertest.RunPrefetcher(t, resolvertest.Harness{New: func(t *testing.T, addr string) dns.Resolver {
		r, err := dns.New(&dns.Options{Nameservers: []string{addr}, Attempts: 2, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}})
}
