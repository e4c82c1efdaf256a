package diskq_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/diskq"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// TestMostWorkOnDisk: the default host order works the same over the
// Pebble store, whose queues move URLs through Pop and Push (small
// buffers: through the disk). With four back queues and a one-second
// gap, big.test (200 URLs, all found on its own pages) keeps its queue
// and is served at every gap, the small hosts give their queues up while
// they wait, and the crawl ends one gap after big.test's last page.
func TestMostWorkOnDisk(t *testing.T) {
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	m, err := diskq.NewMercator(t.TempDir(), &frontier.Options{BackQueues: 4, FrontQueues: 2, Clock: clk,
		Politeness: frontier.Politeness{K: -1, MinDelay: time.Second}}, small)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	add := func(us ...string) {
		t.Helper()
		for _, u := range us {
			if err := m.Add(ctx, frontier.URL{URL: u}); err != nil {
				t.Fatal(err)
			}
		}
	}
	const bigPages, small = 200, 40
	add("http://big.test/0")
	for i := range small {
		add(fmt.Sprintf("http://s%d.test/0", i), fmt.Sprintf("http://s%d.test/1", i))
	}
	next := 1 // big.test's next page to discover: two per page fetched
	fetched := 0
	for fetched < bigPages+2*small {
		for {
			l, _, err := m.Poll()
			if err != nil {
				t.Fatal(err)
			}
			if l == nil {
				break
			}
			if l.URL.Key == "big.test" {
				for range 2 {
					if next < bigPages {
						add(fmt.Sprintf("http://big.test/%d", next))
						next++
					}
				}
			}
			if err := m.Done(l, frontier.Result{}); err != nil {
				t.Fatal(err)
			}
			fetched++
		}
		clk.Advance(time.Second)
	}
	// big.test's 200 pages one second apart take 199 s; the 80 small
	// pages fit in its gaps on the other three queues.
	if el := clk.Now().Sub(frontiertest.Epoch); el > 201*time.Second {
		t.Errorf("crawl took %v, want about 200s (big.test's pages × gap)", el)
	}
	if st := m.Stats(); st.Pending() != 0 {
		t.Errorf("Stats = %+v, want nothing pending", st)
	}
}

// TestLanesReopen: the first URLs of new hosts wait in lanes, store
// queues after the back queues; a store closed with URLs in them reopens
// under another number of back queues (more workers) with every URL
// queued once, and the crawl leases each once.
func TestLanesReopen(t *testing.T) {
	dir := t.TempDir()
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	open := func(b int) *frontier.Mercator {
		t.Helper()
		m, err := diskq.NewMercator(dir, &frontier.Options{BackQueues: b, FrontQueues: 2, Clock: clk,
			Politeness: frontier.Politeness{K: -1, MinDelay: time.Second}}, small)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := open(2)
	want := map[string]bool{}
	for h := range 20 {
		for p := range 3 {
			u := fmt.Sprintf("http://h%d.test/%d", h, p)
			// Depth 0 and 1: both priorities have a lane.
			if err := m.Add(context.Background(), frontier.URL{URL: u, Depth: h % 2}); err != nil {
				t.Fatal(err)
			}
			want[u] = true
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = open(5)
	defer m.Close()
	if st := m.Stats(); st.Queued != len(want) {
		t.Fatalf("reopened with %d URLs queued, want %d", st.Queued, len(want))
	}
	for len(want) > 0 {
		l, _, err := m.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			if clk.Now().Sub(frontiertest.Epoch) > time.Hour {
				t.Fatalf("%d URLs never leased", len(want))
			}
			clk.Advance(time.Second)
			continue
		}
		if !want[l.URL.URL] {
			t.Fatalf("leased %s twice or never added", l.URL.URL)
		}
		delete(want, l.URL.URL)
		if err := m.Done(l, frontier.Result{}); err != nil {
			t.Fatal(err)
		}
	}
	if st := m.Stats(); st.Pending() != 0 {
		t.Errorf("Stats = %+v, want nothing pending", st)
	}
}
