package frontier_test

import (
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
)

func FuzzHostKey(f *testing.F) {
	for _, s := range []string{"http://a.test/x", "https://u:p@A.TEST:8080/?q#f", "http://[::1]:80/", "x", "http://@:/", "http://[/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := frontier.HostKey(s)
		if !strings.Contains(s, "://") {
			if k != s {
				t.Fatalf("HostKey(%q) = %q, want the string itself", s, k)
			}
			return
		}
		if strings.ContainsAny(k, "/?#") {
			t.Fatalf("HostKey(%q) = %q contains a delimiter", s, k)
		}
		for i := 0; i < len(k); i++ {
			if 'A' <= k[i] && k[i] <= 'Z' {
				t.Fatalf("HostKey(%q) = %q not lower case", s, k)
			}
		}
	})
}
