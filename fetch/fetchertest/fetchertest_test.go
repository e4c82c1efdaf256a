package fetchertest_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchertest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestHTTP runs the suite on the default fetcher over WebOptions: the
// helpers must connect it to the web.
func TestHTTP(t *testing.T) {
	fetchertest.Run(t, fetchertest.Harness{New: func(t *testing.T, w *fetchtest.Web) fetch.Fetcher {
		f := fetch.NewHTTP(fetchertest.WebOptions(w))
		t.Cleanup(func() { f.Close() })
		return f
	}})
}

func TestResolver(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Hosts: 1})
	defer w.Close()
	r := fetchertest.Resolver(w)
	ctx := context.Background()
	for _, host := range []string{"h000.sim.test", "H000.SIM.TEST.", "192.0.2.1"} {
		if a, err := r.LookupNetIP(ctx, host); err != nil || len(a) != 1 {
			t.Errorf("%s: %v, %v", host, a, err)
		}
	}
	if _, err := r.LookupNetIP(ctx, "example.com"); err == nil {
		t.Error("a name outside the web resolved")
	}
}

func TestRecord(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Hosts: 2})
	defer w.Close()
	urls := fetchertest.URLs(w)
	recs := fetchertest.Record(t, w, urls)
	if len(recs) != len(urls) {
		t.Fatalf("%d exchanges for %d URLs", len(recs), len(urls))
	}
	var gzipped, redirects int
	for i, e := range recs {
		if e.URL != urls[i] || !strings.HasPrefix(string(e.Response), "HTTP/1.1 ") {
			t.Fatalf("exchange %d: %s %.40q", i, e.URL, e.Response)
		}
		if strings.Contains(string(e.Response), "Content-Encoding: gzip") {
			gzipped++
		}
		if strings.Contains(string(e.Response), "Location: ") {
			redirects++
		}
	}
	if gzipped == 0 || redirects == 0 {
		t.Errorf("%d gzip answers and %d redirects recorded: want some of each as sent", gzipped, redirects)
	}
}

// brokenFetcher breaks one rule of the contract over a correct fetcher.
func brokenFetcher(how string, f fetch.Fetcher, w *fetchtest.Web) fetch.Fetcher {
	switch how {
	case "follows-redirects":
		c := &http.Client{Transport: &http.Transport{DialContext: w.DialContext}}
		return fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
			resp, err := f.Fetch(ctx, req)
			if err != nil || !resp.Redirect() {
				return resp, err
			}
			r, err := c.Get(req.URL.String())
			if err != nil {
				return nil, err
			}
			r.Body.Close()
			return f.Fetch(ctx, &fetch.Request{URL: r.Request.URL})
		})
	case "bare-errors":
		return fetch.FetcherFunc(func(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
			resp, err := f.Fetch(ctx, req)
			var fe *fetch.Error
			if errors.As(err, &fe) {
				return nil, fe.Err
			}
			return resp, err
		})
	}
	return f
}

// TestBrokenFetcherHelper is run by TestSuiteCatchesBrokenFetchers in a
// child process.
func TestBrokenFetcherHelper(t *testing.T) {
	how := os.Getenv("FETCHERTEST_BROKEN")
	if how == "" {
		t.Skip("run by TestSuiteCatchesBrokenFetchers")
	}
	fetchertest.Run(t, fetchertest.Harness{New: func(t *testing.T, w *fetchtest.Web) fetch.Fetcher {
		f := fetch.NewHTTP(fetchertest.WebOptions(w))
		t.Cleanup(func() { f.Close() })
		return brokenFetcher(how, f, w)
	}})
}

// TestSuiteCatchesBrokenFetchers checks the suite: a fetcher breaking one
// rule fails the check that covers it.
func TestSuiteCatchesBrokenFetchers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"follows-redirects": "Redirects",
		"bare-errors":       "NoRequest",
	} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenFetcherHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "FETCHERTEST_BROKEN="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a fetcher that %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenFetcherHelper/"+check) {
				t.Fatalf("the suite did not fail %s for %s:\n%s", check, how, out)
			}
		})
	}
}

// brokenGate admits everything, or refuses everything.
type brokenGate struct{ refuse bool }

func (g brokenGate) Admit(context.Context, *url.URL, *url.URL) (func(), error) {
	if g.refuse {
		return nil, errors.New("refused")
	}
	return func() {}, nil
}

// TestBrokenGateHelper is run by TestGateSuiteCatchesBrokenGates in a
// child process.
func TestBrokenGateHelper(t *testing.T) {
	how := os.Getenv("FETCHERTEST_BROKEN_GATE")
	if how == "" {
		t.Skip("run by TestGateSuiteCatchesBrokenGates")
	}
	page, _ := url.Parse("http://a.test/")
	own, _ := url.Parse("http://a.test/app.js")
	other, _ := url.Parse("http://b.test/lib.js")
	fetchertest.RunGate(t, fetchertest.GateHarness{
		New:  func(*testing.T) fetch.Gate { return brokenGate{refuse: how == "refuses-all"} },
		Page: page, Admitted: []*url.URL{own}, Refused: []*url.URL{other},
	})
}

// TestGateSuiteCatchesBrokenGates checks the Gate suite: a Gate that
// admits everything fails Refused, one that refuses everything Admitted.
func TestGateSuiteCatchesBrokenGates(t *testing.T) {
	for how, check := range map[string]string{"admits-all": "Refused", "refuses-all": "Admitted"} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenGateHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "FETCHERTEST_BROKEN_GATE="+how)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "--- FAIL: TestBrokenGateHelper/"+check) {
				t.Fatalf("the suite did not fail %s for a gate that %s (%v):\n%s", check, how, err, out)
			}
		})
	}
}
