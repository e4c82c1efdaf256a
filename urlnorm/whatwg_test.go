package urlnorm

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// whatwgCase is one case of testdata/urltestdata-special.json: a case of
// web-platform-tests' url/resources/urltestdata.json whose result has a
// special scheme, and, where crawlkit deliberately differs, what it gives
// instead and why (testdata/README.md explains each reason).
type whatwgCase struct {
	Input    string  `json:"input"`
	Base     *string `json:"base"`
	Href     string  `json:"href"`
	Failure  bool    `json:"failure"`
	Crawlkit string  `json:"crawlkit"`
	Why      string  `json:"why"`
}

// deviations are the reasons a case may give for not being followed.
var deviations = map[string]bool{
	"empty-fragment": true, "fragment-chars": true, "stray-percent": true,
	"path-chars": true, "userinfo": true, "host-chars": true,
}

// TestResolveWHATWG runs the WHATWG URL Standard's tests of http(s), ws(s)
// and ftp URLs: Resolve must give the browser's href (or fail where a
// browser fails), but for the cases marked with a reason, where it must
// give exactly what the case says it gives.
func TestResolveWHATWG(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "urltestdata-special.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []whatwgCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	followed := 0
	for _, c := range cases {
		var base *url.URL
		if c.Base != nil {
			if base, err = url.Parse(*c.Base); err != nil {
				t.Errorf("base %q: %v", *c.Base, err)
				continue
			}
		}
		want := c.Href
		if c.Failure {
			want = "failure"
		}
		if c.Why != "" {
			if !deviations[c.Why] || c.Crawlkit == "" {
				t.Errorf("%q: unknown reason %q or no crawlkit result", c.Input, c.Why)
			}
			want = c.Crawlkit
		} else {
			followed++
		}
		got := "failure"
		u, err := Resolve(base, c.Input)
		if err == nil {
			got = u.String()
			if _, err := url.Parse(got); err != nil {
				t.Errorf("Resolve(%v, %q) = %q, which does not parse: %v", c.Base, c.Input, got, err)
			}
		}
		if got != want {
			t.Errorf("Resolve(%v, %q) = %q (%v), want %q", deref(c.Base), c.Input, got, err, want)
		}
	}
	t.Logf("%d cases, %d followed exactly", len(cases), followed)
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
