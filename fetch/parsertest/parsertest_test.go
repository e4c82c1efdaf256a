package parsertest_test

import (
	"errors"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/parsertest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRegistry runs the suite on the package's most general parser: the
// suite itself must pass it.
func TestRegistry(t *testing.T) {
	parsertest.Run(t, parsertest.Harness{
		New:      func(*testing.T) fetch.Parser { return new(fetch.Registry) },
		Formats:  parsertest.HTML | parsertest.Sitemap | parsertest.Feed,
		Dispatch: true,
	})
}

// brokenParser breaks one rule of the contract over a correct parser.
func brokenParser(how string) fetch.Parser {
	var r fetch.Registry
	return fetch.ParserFunc(func(resp *fetch.Response) (*fetch.Document, error) {
		switch how {
		case "panics":
			if len(resp.Body) == 0 {
				panic("empty body")
			}
		case "bare-errors":
			d, err := r.Parse(resp)
			var fe *fetch.Error
			if errors.As(err, &fe) {
				return nil, fe.Err
			}
			return d, err
		case "relative-links":
			d, err := r.Parse(resp)
			if err == nil && len(d.Links) > 0 {
				d.Links[0].URL = &url.URL{Path: d.Links[0].URL.Path}
			}
			return d, err
		}
		return r.Parse(resp)
	})
}

// TestBrokenParserHelper is run by TestSuiteCatchesBrokenParsers in a
// child process.
func TestBrokenParserHelper(t *testing.T) {
	how := os.Getenv("PARSERTEST_BROKEN")
	if how == "" {
		t.Skip("run by TestSuiteCatchesBrokenParsers")
	}
	parsertest.Run(t, parsertest.Harness{
		New:      func(*testing.T) fetch.Parser { return brokenParser(how) },
		Formats:  parsertest.HTML | parsertest.Sitemap | parsertest.Feed,
		Dispatch: true,
	})
}

// TestSuiteCatchesBrokenParsers checks the suite: a parser breaking one
// rule fails the check that covers it.
func TestSuiteCatchesBrokenParsers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"panics":         "Garbage",
		"bare-errors":    "Unsupported",
		"relative-links": "Documents",
	} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenParserHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "PARSERTEST_BROKEN="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a parser that %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenParserHelper/"+check) {
				t.Fatalf("the suite did not fail %s for %s:\n%s", check, how, out)
			}
		})
	}
}
