package frontier

import (
	"strings"
	"time"
)

// ChangeFreq is how often a sitemap says a URL changes: the
// <changefreq> of the sitemaps.org protocol. It is a hint, not a
// command (the protocol says so), which a Prioritizer may read and the
// crawler's revisit schedule takes as an upper bound on the interval.
// The zero value, FreqUnknown, is a URL no sitemap described.
type ChangeFreq uint8

// The <changefreq> values of sitemaps.org, in order of decreasing change.
const (
	FreqUnknown ChangeFreq = iota // no <changefreq>, or one not in the protocol
	FreqAlways                    // changes on every access
	FreqHourly
	FreqDaily
	FreqWeekly
	FreqMonthly
	FreqYearly
	FreqNever // an archived URL
	numFreqs
)

var freqNames = [numFreqs]string{"", "always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}

// ParseChangeFreq returns the ChangeFreq a <changefreq> value names,
// ignoring case and surrounding space; FreqUnknown for anything else.
// It does not allocate.
func ParseChangeFreq(s string) ChangeFreq {
	s = strings.TrimSpace(s)
	for f := FreqAlways; f < numFreqs; f++ {
		if strings.EqualFold(s, freqNames[f]) {
			return f
		}
	}
	return FreqUnknown
}

// String returns the protocol's name of f ("daily"), "" for FreqUnknown.
func (f ChangeFreq) String() string {
	if f < numFreqs {
		return freqNames[f]
	}
	return ""
}

// Period returns the interval f names: 0 for FreqAlways, an hour for
// FreqHourly, and so on up to 365 days for FreqYearly (a month counts
// 30 days). ok is false for FreqUnknown and FreqNever, which name no
// interval.
func (f ChangeFreq) Period() (d time.Duration, ok bool) {
	const day = 24 * time.Hour
	switch f {
	case FreqAlways:
		return 0, true
	case FreqHourly:
		return time.Hour, true
	case FreqDaily:
		return day, true
	case FreqWeekly:
		return 7 * day, true
	case FreqMonthly:
		return 30 * day, true
	case FreqYearly:
		return 365 * day, true
	}
	return 0, false
}

// Valid reports whether f is FreqUnknown or one of the named
// frequencies: a decoder refuses any other value.
func (f ChangeFreq) Valid() bool { return f < numFreqs }
