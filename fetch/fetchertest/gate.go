package fetchertest

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
)

// GateHarness tells RunGate how to make the fetch.Gate under test and
// which requests it admits.
type GateHarness struct {
	// New returns the Gate under test; cleanup belongs in t.Cleanup.
	New func(t *testing.T) fetch.Gate
	// Page is the page whose subrequests are asked for.
	Page *url.URL
	// Admitted are subrequests the Gate admits (the page's own host,
	// a URL robots.txt allows).
	Admitted []*url.URL
	// Refused are subrequests the Gate refuses (robots.txt, another host).
	Refused []*url.URL
}

// RunGate runs the conformance suite of a fetch.Gate:
//   - an admitted request gets a release and no error, and each release
//     is called once;
//   - a refused request gets an error and no release, and refusing does
//     not wait for anything;
//   - a context already ended is never admitted late: Admit returns
//     promptly, with its error or a release that is then called;
//   - many goroutines may Admit and release at once (run with -race).
func RunGate(t *testing.T, h GateHarness) {
	t.Helper()
	if len(h.Admitted) == 0 || len(h.Refused) == 0 {
		t.Fatal("GateHarness needs admitted and refused URLs: the suite checks nothing otherwise")
	}
	t.Run("Admitted", func(t *testing.T) {
		g := h.New(t)
		for _, u := range h.Admitted {
			release, err := g.Admit(context.Background(), h.Page, u)
			if err != nil || release == nil {
				t.Fatalf("Admit(%s): release %v, err %v; want a release", u, release != nil, err)
			}
			release()
		}
	})
	t.Run("Refused", func(t *testing.T) {
		g := h.New(t)
		for _, u := range h.Refused {
			start := time.Now()
			release, err := g.Admit(context.Background(), h.Page, u)
			if err == nil || release != nil {
				if release != nil {
					release()
				}
				t.Fatalf("Admit(%s): err %v, release %v; want a refusal", u, err, release != nil)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Admit(%s) took %v to refuse", u, d)
			}
		}
	})
	t.Run("EndedContext", func(t *testing.T) {
		g := h.New(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, u := range append(append([]*url.URL{}, h.Admitted...), h.Refused...) {
			start := time.Now()
			release, err := g.Admit(ctx, h.Page, u)
			if err == nil {
				if release == nil {
					t.Fatalf("Admit(%s) with an ended context: no error and no release", u)
				}
				release()
			} else if release != nil {
				t.Fatalf("Admit(%s): both an error (%v) and a release", u, err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Admit(%s) with an ended context took %v", u, d)
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		g := h.New(t)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 5 {
					for _, u := range h.Admitted {
						if release, err := g.Admit(context.Background(), h.Page, u); err == nil {
							release()
						} else {
							t.Errorf("Admit(%s) concurrently: %v", u, err)
						}
					}
				}
			})
		}
		wg.Wait()
	})
}
