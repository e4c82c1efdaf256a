// Package retryafter reads the Retry-After header of RFC 9110 §10.2.3,
// for the crawler's pages and the robots package's robots.txt alike.
package retryafter

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Max caps a delay: a server asking for more than a day is asked again
// after one.
const Max = 24 * time.Hour

// Parse reads a Retry-After value, delay-seconds or an HTTP date, at
// most Max. ok is false when it is absent or malformed; "0", or a date
// passed, is the server's word too: retry at once.
func Parse(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	// delay-seconds of any size is a delay: ParseUint saturates a number
	// too large for 64 bits (ErrRange) rather than failing it, whatever
	// the size of int.
	if n, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return time.Duration(min(n, uint64(Max/time.Second))) * time.Second, true
	}
	// An HTTP-date in any of the three forms RFC 9110 §5.6.7 asks a
	// recipient to read; "UTC" for "GMT" is a common slip, read too.
	t, err := http.ParseTime(v)
	if err != nil {
		t, err = time.Parse(time.RFC1123, v)
	}
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), Max), true
}
