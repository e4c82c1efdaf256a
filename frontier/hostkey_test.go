package frontier_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
)

func TestHostKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://a.test/x", "a.test"},
		{"http://a.test:8080/x?y#z", "a.test"},
		{"https://user:pw@A.Test/", "a.test"},
		{"http://[::1]:80/", "::1"},
		{"http://a.test", "a.test"},
		{"http://a.test?q", "a.test"},
		{"not a url", "not a url"},
	} {
		if got := frontier.HostKey(tc.in); got != tc.want {
			t.Errorf("HostKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { frontier.HostKey("http://a.test:1/x") }); n != 0 {
		t.Errorf("HostKey allocates %v times on a lower-case host", n)
	}
}
