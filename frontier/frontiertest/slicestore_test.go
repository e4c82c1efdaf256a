package frontiertest_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// sliceStore is a plain frontier.Store over slices, the reference the
// suites' self-tests break on purpose: broken names the rule it breaks
// ("" for none). With a disk it is durable (see durableStore).
type sliceStore struct {
	queues   [][]frontier.URL
	deferred []frontier.URL // by Due, in Defer order among equals
	disk     *disk
	broken   string
}

// disk is what a durable sliceStore keeps across a crash: its content at
// the last Sync or Close, and the leases of that Sync.
type disk struct {
	mu       sync.Mutex
	queues   [][]frontier.URL
	deferred []frontier.URL
	leased   []frontier.URL
}

func (s *sliceStore) Push(q int, us ...frontier.URL) error {
	for q >= len(s.queues) {
		s.queues = append(s.queues, nil)
	}
	s.queues[q] = append(s.queues[q], us...)
	return nil
}

func (s *sliceStore) Pop(q int) (frontier.URL, bool, error) {
	if q >= len(s.queues) || len(s.queues[q]) == 0 {
		return frontier.URL{}, false, nil
	}
	qu := s.queues[q]
	if s.broken == "lifo" {
		u := qu[len(qu)-1]
		s.queues[q] = qu[:len(qu)-1]
		return u, true, nil
	}
	u := qu[0]
	s.queues[q] = qu[1:]
	return u, true, nil
}

func (s *sliceStore) Len(q int) int {
	if q >= len(s.queues) {
		return 0
	}
	return len(s.queues[q])
}

func (s *sliceStore) Queues() int { return len(s.queues) }

func (s *sliceStore) Defer(us ...frontier.URL) error {
	for _, u := range us {
		i, _ := slices.BinarySearchFunc(s.deferred, u, func(a, b frontier.URL) int {
			if a.Due.After(b.Due) {
				return 1
			}
			return -1 // u goes after its equals: Defer order among ties
		})
		s.deferred = slices.Insert(s.deferred, i, u)
	}
	return nil
}

func (s *sliceStore) Due(now time.Time, max int, dst []frontier.URL) ([]frontier.URL, error) {
	n := 0
	for n < len(s.deferred) && !s.deferred[n].Due.After(now) && (n < max || s.broken == "due-ignores-max") {
		n++
	}
	dst = append(dst, s.deferred[:n]...)
	s.deferred = slices.Clone(s.deferred[n:])
	return dst, nil
}

func (s *sliceStore) NextDue() (time.Time, bool) {
	if len(s.deferred) == 0 {
		return time.Time{}, false
	}
	return s.deferred[0].Due, true
}

func (s *sliceStore) Deferred() int { return len(s.deferred) }

func (s *sliceStore) Scan(yield func(frontier.URL) bool) error {
	for _, q := range s.queues {
		for _, u := range q {
			if !yield(u) {
				return nil
			}
		}
	}
	if s.broken == "scan-skips-deferred" {
		return nil
	}
	for _, u := range s.deferred {
		if !yield(u) {
			return nil
		}
	}
	return nil
}

func (s *sliceStore) Close() error {
	if s.disk != nil {
		s.save(nil)
	}
	return nil
}

func (s *sliceStore) save(leased []frontier.URL) {
	d := s.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	d.queues = make([][]frontier.URL, len(s.queues))
	for q := range s.queues {
		d.queues[q] = slices.Clone(s.queues[q])
	}
	d.deferred = slices.Clone(s.deferred)
	d.leased = slices.Clone(leased)
}

// durableStore is a sliceStore that is a frontier.DurableStore.
type durableStore struct{ *sliceStore }

func (s durableStore) Sync(leased []frontier.URL) error {
	if s.broken == "sync-forgets-leases" {
		leased = nil
	}
	s.save(leased)
	return nil
}

// reopen returns the store a process finds on d after a crash or Close.
func reopen(d *disk, broken string) durableStore {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &sliceStore{disk: d, broken: broken, deferred: slices.Clone(d.deferred)}
	for q := range d.queues {
		s.Push(q, d.queues[q]...)
	}
	for _, u := range d.leased {
		s.Push(u.Priority, u)
	}
	return durableStore{s}
}

// sliceHarness makes sliceStores, durable ones when durable is set.
func sliceHarness(durable bool, broken string) frontiertest.StoreHarness {
	var mu sync.Mutex
	disks := map[frontier.Store]*disk{}
	h := frontiertest.StoreHarness{New: func(*testing.T) frontier.Store {
		if !durable {
			return &sliceStore{broken: broken}
		}
		d := &disk{}
		s := durableStore{&sliceStore{disk: d, broken: broken}}
		mu.Lock()
		disks[s] = d
		mu.Unlock()
		return s
	}}
	if durable {
		h.Reopen = func(_ *testing.T, s frontier.Store) frontier.Store {
			mu.Lock()
			d := disks[s]
			mu.Unlock()
			r := reopen(d, broken)
			mu.Lock()
			disks[r] = d
			mu.Unlock()
			return r
		}
	}
	return h
}

// mercatorOver is a Frontier suite harness of Mercator over durable
// sliceStores: Crash and Reopen open a new Mercator on the store's disk.
func mercatorOver(broken string, wrap func(*frontier.Mercator) frontier.Frontier) frontiertest.Harness {
	var mu sync.Mutex
	disks := map[frontier.Frontier]*disk{}
	open := func(t *testing.T, o frontier.Options, d *disk) frontier.Frontier {
		o.Store = reopen(d, broken)
		m, err := frontier.NewMercator(&o)
		if err != nil {
			t.Fatal(err)
		}
		f := wrap(m)
		mu.Lock()
		disks[f] = d
		mu.Unlock()
		return f
	}
	diskOf := func(f frontier.Frontier) *disk {
		mu.Lock()
		defer mu.Unlock()
		return disks[f]
	}
	return frontiertest.Harness{
		New: func(t *testing.T, o frontier.Options) frontier.Frontier { return open(t, o, &disk{}) },
		Reopen: func(t *testing.T, f frontier.Frontier, o frontier.Options) frontier.Frontier {
			if err := f.(interface{ Close() error }).Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, o, diskOf(f))
		},
		Crash: func(t *testing.T, f frontier.Frontier, o frontier.Options) frontier.Frontier {
			return open(t, o, diskOf(f))
		},
		Prioritized: true,
		Skip:        map[string]string{"HoldWhileLeased": "Mercator's known deviation, see package frontier"},
	}
}

// TestSliceStoreConformance runs the suites on the reference: the Store
// suite on sliceStore, plain and durable, and the Frontier suite on
// Mercator over the durable one, crashes included. It shows that the
// self-tests' broken stores fail for what they break, not for the rest.
func TestSliceStoreConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) { frontiertest.RunStore(t, sliceHarness(false, "")) })
	t.Run("durable", func(t *testing.T) { frontiertest.RunStore(t, sliceHarness(true, "")) })
	t.Run("Mercator", func(t *testing.T) {
		frontiertest.Run(t, mercatorOver("", func(m *frontier.Mercator) frontier.Frontier { return m }))
	})
}
