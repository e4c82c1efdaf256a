package render

import (
	"net/url"
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchertest"
)

// TestHostGateConformance runs the Gate suite on the default Gate of a
// Fetcher without one.
func TestHostGateConformance(t *testing.T) {
	must := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	fetchertest.RunGate(t, fetchertest.GateHarness{
		New:      func(*testing.T) fetch.Gate { return hostGate{} },
		Page:     must("http://a.test/page"),
		Admitted: []*url.URL{must("http://a.test/app.js"), must("http://A.test:8080/data.json")},
		Refused:  []*url.URL{must("http://cdn.test/lib.js")},
	})
}
