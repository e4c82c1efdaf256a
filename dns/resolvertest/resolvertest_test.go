package resolvertest_test

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/dns/resolvertest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSystemAt runs the suite on the system resolver pointed at the
// suite's server: the helper must make dns.System conform.
func TestSystemAt(t *testing.T) {
	resolvertest.Run(t, resolvertest.Harness{
		New: func(_ *testing.T, addr string) dns.Resolver { return resolvertest.SystemAt(addr) },
	})
}

// bareErrors answers like the resolver it wraps, but with the errors of
// net, not *dns.Error.
type bareErrors struct{ dns.Resolver }

func (b bareErrors) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := b.Resolver.LookupNetIP(ctx, host)
	var de *dns.Error
	if errors.As(err, &de) {
		return nil, de.Err
	}
	return addrs, err
}

// ipv4Only drops IPv6 addresses.
type ipv4Only struct{ dns.Resolver }

func (r ipv4Only) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := r.Resolver.LookupNetIP(ctx, host)
	var out []netip.Addr
	for _, a := range addrs {
		if a.Is4() {
			out = append(out, a)
		}
	}
	return out, err
}

// TestBrokenResolverHelper is run by TestSuiteCatchesBrokenResolvers in a
// child process.
func TestBrokenResolverHelper(t *testing.T) {
	how := os.Getenv("RESOLVERTEST_BROKEN")
	if how == "" {
		t.Skip("run by TestSuiteCatchesBrokenResolvers")
	}
	resolvertest.Run(t, resolvertest.Harness{
		New: func(_ *testing.T, addr string) dns.Resolver {
			if how == "bare-errors" {
				return bareErrors{resolvertest.SystemAt(addr)}
			}
			return ipv4Only{resolvertest.SystemAt(addr)}
		},
	})
}

// TestSuiteCatchesBrokenResolvers checks the suite: a resolver breaking
// one rule fails the check that covers it.
func TestSuiteCatchesBrokenResolvers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"bare-errors": "NotFound",
		"ipv4-only":   "Addresses",
	} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenResolverHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "RESOLVERTEST_BROKEN="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a resolver with %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenResolverHelper/"+check) {
				t.Fatalf("the suite did not fail %s for %s:\n%s", check, how, out)
			}
		})
	}
}
