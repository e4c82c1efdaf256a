package frontiertest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// levelCounts are the numbers of levels the prioritizer suite asks for:
// one level (every URL gets 0) up to far more than a frontier uses.
var levelCounts = []int{1, 2, 3, 8, 16, 100, 1 << 20}

// RunPrioritizer runs the conformance suite of frontier.Prioritizer as
// subtests of t, on prioritizers made by newP (one or two per subtest):
// for any URL (zero fields, negative or huge depths, odd histories, odd
// strings) and any number of levels from 1 up, Priority is in
// [0, levels) and does not panic; it answers the same for the same input,
// on one prioritizer and on two made alike; and one prioritizer answers
// the same from many goroutines at once. When the prioritizer is a
// frontier.FetchObserver, the range rule holds after Fetched (many
// links, none, duplicates, the page itself), two prioritizers fed the
// same fetches agree, and Fetched and Priority are safe to call
// concurrently.
func RunPrioritizer(t *testing.T, newP func() frontier.Prioritizer) {
	t.Run("Range", func(t *testing.T) {
		p := newP()
		for _, u := range priorityURLs() {
			checkRange(t, p, u)
		}
	})
	t.Run("Deterministic", func(t *testing.T) {
		a, b := newP(), newP()
		first := priorities(t, a)
		if again := priorities(t, a); !slices.Equal(again, first) {
			t.Errorf("a second pass over the same URLs changed %s", diffPriorities(first, again))
		}
		if other := priorities(t, b); !slices.Equal(other, first) {
			t.Errorf("two prioritizers made alike disagree: %s", diffPriorities(first, other))
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		want := priorities(t, newP())
		p := newP()
		us := priorityURLs()
		var wg sync.WaitGroup
		var mu sync.Mutex
		bad := 0
		for w := range 16 {
			wg.Go(func() {
				for r := range 3 {
					for k := range us {
						i := (k + w + r) % len(us)
						for j, levels := range levelCounts {
							got, perr := priority(p, &us[i], levels)
							if perr != nil || got != want[i*len(levelCounts)+j] {
								mu.Lock()
								if bad++; bad <= 5 {
									t.Errorf("concurrent: Priority(%s, %d) = %d (panic %v), alone %d",
										describe(us[i]), levels, got, perr, want[i*len(levelCounts)+j])
								}
								mu.Unlock()
							}
						}
					}
				}
			})
		}
		wg.Wait()
	})
	t.Run("FetchObserver", func(t *testing.T) {
		if _, ok := newP().(frontier.FetchObserver); !ok {
			t.Skip("not a frontier.FetchObserver")
		}
		testFetchObserver(t, newP)
	})
}

// priority calls p.Priority on a copy of *u, recovering a panic.
func priority(p frontier.Prioritizer, u *frontier.URL, levels int) (n int, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			n, panicked = -1, r
		}
	}()
	c := *u
	return p.Priority(&c, levels), nil
}

// checkRange checks Priority(u, levels) for every level count.
func checkRange(t *testing.T, p frontier.Prioritizer, u frontier.URL) {
	t.Helper()
	for _, levels := range levelCounts {
		got, perr := priority(p, &u, levels)
		if perr != nil {
			t.Errorf("Priority(%s, %d) panicked: %v", describe(u), levels, perr)
		} else if got < 0 || got >= levels {
			t.Errorf("Priority(%s, %d) = %d, want in [0, %d)", describe(u), levels, got, levels)
		}
	}
}

// priorities returns Priority of every sample URL at every level count,
// in order.
func priorities(t *testing.T, p frontier.Prioritizer) []int {
	t.Helper()
	var out []int
	for _, u := range priorityURLs() {
		for _, levels := range levelCounts {
			n, _ := priority(p, &u, levels)
			out = append(out, n)
		}
	}
	return out
}

func diffPriorities(a, b []int) string {
	us := priorityURLs()
	for i := range a {
		if a[i] != b[i] {
			return fmt.Sprintf("Priority(%s, %d) = %d, then %d", describe(us[i/len(levelCounts)]),
				levelCounts[i%len(levelCounts)], a[i], b[i])
		}
	}
	return "nothing"
}

// describe names a sample URL in a message: its string, cut short.
func describe(u frontier.URL) string {
	s := u.URL
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return fmt.Sprintf("{URL %q Depth %d Priority %d Fetches %d Anchor %.20q}", s, u.Depth, u.Priority, u.History.Fetches, u.Anchor)
}

// priorityURLs returns the URLs the prioritizer suite asks about.
func priorityURLs() []frontier.URL {
	hist := func(fetches, changes uint32, first, last time.Time) frontier.History {
		return frontier.History{Fetches: fetches, Changes: changes, First: first, Last: last}
	}
	us := []frontier.URL{
		{},
		{URL: "http://a.test/"},
		{URL: "http://a.test/1", Depth: 1, Anchor: "river boat", Source: "http://a.test/"},
		{URL: "http://a.test/7", Depth: 7},
		{URL: "http://a.test/deep", Depth: 1 << 30},
		{URL: "http://a.test/max", Depth: math.MaxInt},
		{URL: "http://a.test/neg", Depth: -1},
		{URL: "http://a.test/minint", Depth: math.MinInt},
		{URL: "http://a.test/hint-low", Priority: -5},
		{URL: "http://a.test/hint-high", Priority: 1 << 30},
		{URL: "http://news.test/today", Key: "news.test"},
		{URL: "http://www.news.test/archive/2020", Depth: 3},
		{URL: "http://other.test/x", Key: "news.test"},
		{URL: "HTTP://NEWS.TEST/Upper"},
		{URL: "http://[::1]:8080/v6"},
		{URL: "not a url at all"},
		{URL: "http://a.test/" + strings.Repeat("long/", 20000), Depth: 2},
		{URL: "http://a.test/anchor", Depth: 2, Anchor: strings.Repeat("flood river ", 500), Source: "http://a.test/water"},
		{URL: "http://a.test/unicode", Depth: 1, Anchor: "Fluß über \xff\xfe", Source: "\x00"},
		{URL: "http://a.test/due", Due: Epoch.Add(time.Hour)},
		{URL: "http://c.test/changes", History: hist(2, 1, Epoch, Epoch.Add(time.Hour))},
		{URL: "http://c.test/always", History: hist(10, 10, Epoch, Epoch.Add(10*time.Minute))},
		{URL: "http://c.test/never", History: hist(50, 0, Epoch, Epoch.Add(50*24*time.Hour))},
		{URL: "http://c.test/nanosecond", History: hist(2, 2, Epoch, Epoch.Add(1))},
		{URL: "http://c.test/more-changes", History: hist(3, 1<<32-1, Epoch, Epoch.Add(time.Hour))},
		{URL: "http://c.test/huge", History: hist(1<<32-1, 1<<31, Epoch, Epoch.Add(time.Hour))},
		{URL: "http://c.test/backwards", History: hist(5, 2, Epoch.Add(time.Hour), Epoch)},
		{URL: "http://c.test/no-first", History: hist(5, 2, time.Time{}, Epoch)},
		{URL: "http://c.test/no-fetch", History: hist(0, 3, Epoch, Epoch.Add(time.Hour))},
		{URL: "http://c.test/centuries", History: hist(2, 1, time.Unix(0, 0), time.Date(2260, 1, 1, 0, 0, 0, 0, time.UTC))},
	}
	return us
}

// testFetchObserver feeds fetches to a FetchObserver and checks the range
// rule after them, that two observers fed alike agree, and concurrency.
func testFetchObserver(t *testing.T, newP func() frontier.Prioritizer) {
	type fetch struct {
		page  string
		links []string
	}
	us := priorityURLs()
	var fetches []fetch
	var all []string
	for _, u := range us {
		all = append(all, u.URL)
	}
	fetches = append(fetches,
		fetch{"http://a.test/", all},
		fetch{"http://a.test/1", nil},
		fetch{"http://a.test/7", []string{"http://a.test/7", "http://a.test/7", ""}},
		fetch{"", []string{"http://a.test/"}},
		fetch{"http://never-seen.test/", []string{"http://a.test/1"}},
	)
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("http://many.test/%d", i)
	}
	fetches = append(fetches, fetch{"http://a.test/1", many})
	for i := range 50 { // a ring: cash goes round and round
		fetches = append(fetches, fetch{fmt.Sprintf("http://ring.test/%d", i), []string{fmt.Sprintf("http://ring.test/%d", (i+1)%50)}})
	}
	feed := func(p frontier.Prioritizer) {
		o := p.(frontier.FetchObserver)
		for r := range 3 {
			for _, f := range fetches {
				if r == 0 || f.page != "http://a.test/1" {
					o.Fetched(f.page, f.links)
				}
			}
		}
	}
	// The URLs asked about: the samples, the links, at depth 0 and not.
	ask := slices.Clone(us)
	for _, l := range append(all, many[:50]...) {
		ask = append(ask, frontier.URL{URL: l}, frontier.URL{URL: l, Depth: 3})
	}
	for i := range 50 {
		ask = append(ask, frontier.URL{URL: fmt.Sprintf("http://ring.test/%d", i), Depth: 1})
	}
	answers := func(p frontier.Prioritizer) []int {
		var out []int
		for _, u := range ask {
			for _, levels := range levelCounts {
				n, _ := priority(p, &u, levels)
				out = append(out, n)
			}
		}
		return out
	}

	t.Run("Range", func(t *testing.T) {
		p := newP()
		feed(p)
		for _, u := range ask {
			checkRange(t, p, u)
		}
	})
	t.Run("Deterministic", func(t *testing.T) {
		a, b := newP(), newP()
		feed(a)
		feed(b)
		if x, y := answers(a), answers(b); !slices.Equal(x, y) {
			for i := range x {
				if x[i] != y[i] {
					t.Errorf("fed the same fetches, two prioritizers disagree: Priority(%s, %d) = %d and %d",
						describe(ask[i/len(levelCounts)]), levelCounts[i%len(levelCounts)], x[i], y[i])
					break
				}
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		p := newP()
		o := p.(frontier.FetchObserver)
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for k, f := range fetches {
					if (k+w)%2 == 0 {
						o.Fetched(f.page, f.links)
					}
				}
			})
			wg.Go(func() {
				for k := range ask {
					u := ask[(k+w)%len(ask)]
					for _, levels := range levelCounts {
						if n, perr := priority(p, &u, levels); perr != nil || n < 0 || n >= levels {
							t.Errorf("Priority(%s, %d) = %d (panic %v) during Fetched, want in [0, %d)", describe(u), levels, n, perr, levels)
							return
						}
					}
				}
			})
		}
		wg.Wait()
	})
}
