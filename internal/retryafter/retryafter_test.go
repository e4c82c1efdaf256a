package retryafter

import (
	"net/http"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"120", 2 * time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"0", 0, true}, // the server's word: at once, not a back-off
		{"86401", 24 * time.Hour, true},
		{"9999999999", 24 * time.Hour, true},
		{"99999999999999999999999", 24 * time.Hour, true}, // beyond 64 bits: still a delay
		{"-5", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(time.RFC1123), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(time.RFC1123), 0, true},
		{now.Add(72 * time.Hour).Format(time.RFC1123), 24 * time.Hour, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true}, // IMF-fixdate
		{now.Add(90 * time.Second).Format(time.RFC850), 90 * time.Second, true},     // obsolete RFC 850
		{now.Add(90 * time.Second).Format(time.ANSIC), 90 * time.Second, true},      // asctime
		{"Sun, 22 Nov 2026 12:01:30", 0, false},                                     // no zone
	} {
		if got, ok := Parse(tc.v, now); got != tc.want || ok != tc.ok {
			t.Errorf("Parse(%q) = %v, %v, want %v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}
