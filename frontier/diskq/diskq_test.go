package diskq_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/diskq"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// small buffers make every path go through the disk; the suite runs with
// buffers still far smaller than its queues.
var (
	small = &diskq.Options{HeadItems: 3, TailItems: 4, BatchBytes: 4 << 10}
	suite = &diskq.Options{HeadItems: 16, TailItems: 16, BatchBytes: 64 << 10}
)

type harness struct {
	mu   sync.Mutex
	dirs map[frontier.Frontier]string
	fifo bool
}

func (h *harness) open(t *testing.T, dir string, o frontier.Options) frontier.Frontier {
	var f frontier.Frontier
	var err error
	if h.fifo {
		f, err = diskq.NewFIFO(dir, &o, suite)
	} else {
		f, err = diskq.NewMercator(dir, &o, suite)
	}
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.dirs[f] = dir
	h.mu.Unlock()
	return f
}

func (h *harness) suite() frontiertest.Harness {
	return frontiertest.Harness{
		New: func(t *testing.T, o frontier.Options) frontier.Frontier { return h.open(t, t.TempDir(), o) },
		Reopen: func(t *testing.T, f frontier.Frontier, o frontier.Options) frontier.Frontier {
			if err := f.(io.Closer).Close(); err != nil {
				t.Fatal(err)
			}
			h.mu.Lock()
			dir := h.dirs[f]
			h.mu.Unlock()
			return h.open(t, dir, o)
		},
		Prioritized: !h.fifo,
	}
}

func TestMercatorConformance(t *testing.T) {
	h := &harness{dirs: map[frontier.Frontier]string{}}
	frontiertest.Run(t, h.suite())
}

func TestFIFOConformance(t *testing.T) {
	h := &harness{dirs: map[frontier.Frontier]string{}, fifo: true}
	frontiertest.Run(t, h.suite())
}

// TestStoreFIFO checks the store alone against a slice model, through
// head and tail buffers, spills and reopen.
func TestStoreFIFO(t *testing.T) {
	dir := t.TempDir()
	s, err := diskq.Open(dir, small)
	if err != nil {
		t.Fatal(err)
	}
	model := map[int][]string{}
	seq := 0
	push := func(q, n int) {
		for range n {
			u := frontier.URL{URL: fmt.Sprintf("http://x.test/%d", seq)}
			seq++
			if err := s.Push(q, u); err != nil {
				t.Fatal(err)
			}
			model[q] = append(model[q], u.URL)
		}
	}
	pop := func(q, n int) {
		for range n {
			u, ok, err := s.Pop(q)
			if err != nil {
				t.Fatal(err)
			}
			if len(model[q]) == 0 {
				if ok {
					t.Fatalf("queue %d: popped %s from an empty queue", q, u.URL)
				}
				continue
			}
			if !ok || u.URL != model[q][0] {
				t.Fatalf("queue %d: popped %q (%v), want %q", q, u.URL, ok, model[q][0])
			}
			model[q] = model[q][1:]
		}
	}
	check := func() {
		for q, m := range model {
			if s.Len(q) != len(m) {
				t.Fatalf("Len(%d) = %d, want %d", q, s.Len(q), len(m))
			}
		}
	}
	steps := []struct{ q, push, pop int }{
		{0, 10, 3}, {1, 2, 1}, {0, 0, 5}, {0, 20, 0}, {2, 7, 7}, {0, 1, 23}, {1, 9, 4}, {3, 0, 2},
	}
	for i, st := range steps {
		push(st.q, st.push)
		pop(st.q, st.pop)
		check()
		if i%3 == 2 { // reopen now and then
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err = diskq.Open(dir, small); err != nil {
				t.Fatal(err)
			}
			check()
		}
	}
	for q := range model {
		pop(q, len(model[q])+1)
	}
	check()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestStoreDeferred(t *testing.T) {
	dir := t.TempDir()
	s, err := diskq.Open(dir, small)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Unix(1000, 0)
	for _, d := range []int{5, 1, 3, 2, 4, 3} {
		if err := s.Defer(frontier.URL{URL: fmt.Sprintf("http://d.test/%d", d), Due: base.Add(time.Duration(d) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if d, ok := s.NextDue(); !ok || !d.Equal(base.Add(time.Second)) {
		t.Fatalf("NextDue = %v %v", d, ok)
	}
	got, err := s.Due(base.Add(3*time.Second), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0].URL != "http://d.test/1" || got[3].URL != "http://d.test/3" {
		t.Fatalf("Due = %v", got)
	}
	// An entry due before the ones already taken is still found.
	if err := s.Defer(frontier.URL{URL: "http://d.test/early", Due: base}); err != nil {
		t.Fatal(err)
	}
	if d, ok := s.NextDue(); !ok || !d.Equal(base) {
		t.Fatalf("NextDue after an early Defer = %v %v", d, ok)
	}
	got, err = s.Due(base.Add(3*time.Second), 10, nil)
	if err != nil || len(got) != 1 || got[0].URL != "http://d.test/early" {
		t.Fatalf("Due = %v, %v; want the early entry", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = diskq.Open(dir, small); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Deferred() != 2 {
		t.Fatalf("Deferred after reopen = %d, want 2", s.Deferred())
	}
	got, _ = s.Due(base.Add(time.Hour), 1, nil)
	if len(got) != 1 || got[0].URL != "http://d.test/4" {
		t.Fatalf("Due after reopen = %v", got)
	}
}

// TestSyncRecoversLeases checks Sync: leased URLs recorded by Sync come
// back when the directory is opened again without Close (a crash is
// simulated by copying the synced directory).
func TestSyncRecoversLeases(t *testing.T) {
	dir := t.TempDir()
	m, err := diskq.NewMercator(dir, &frontier.Options{Clock: frontiertest.NewFakeClock(frontiertest.Epoch)}, small)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var us []frontier.URL
	for i := range 20 {
		us = append(us, frontier.URL{URL: fmt.Sprintf("http://h%d.test/", i)})
	}
	if err := m.Add(ctx, us...); err != nil {
		t.Fatal(err)
	}
	for range 5 { // leased, never reported Done
		if _, err := m.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	crash := t.TempDir()
	copyDir(t, dir, crash)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m2, err := diskq.NewMercator(crash, &frontier.Options{Clock: frontiertest.NewFakeClock(frontiertest.Epoch)}, small)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if st := m2.Stats(); st.Queued != 20 {
		t.Fatalf("after crash recovery: %d queued, want 20 (15 queued + 5 leased)", st.Queued)
	}
}

// TestNilOptions checks the options convention: nil frontier options mean
// every default, over the store in dir, for both frontiers.
func TestNilOptions(t *testing.T) {
	ctx := context.Background()
	for _, fifo := range []bool{false, true} {
		dir := t.TempDir()
		var f interface {
			frontier.Frontier
			frontier.Stater
			io.Closer
		}
		var err error
		if fifo {
			f, err = diskq.NewFIFO(dir, nil, nil)
		} else {
			f, err = diskq.NewMercator(dir, nil, nil)
		}
		if err != nil {
			t.Fatalf("fifo %v: %v", fifo, err)
		}
		if err := f.Add(ctx, frontier.URL{URL: "http://a.test/", Key: "a.test"}); err != nil {
			t.Fatal(err)
		}
		if got := f.Stats().Pending(); got != 1 {
			t.Fatalf("fifo %v: %d pending, want 1", fifo, got)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
