package frontier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// TestFailingStore: store errors reach the caller of Add, Next, Done and
// Checkpoint wrapped in *frontier.Error, nothing panics, and the frontier
// works again once the store heals.
func TestFailingStore(t *testing.T) {
	boom := errors.New("disk on fire")
	for _, impl := range []string{"mercator", "fifo"} {
		t.Run(impl, func(t *testing.T) {
			fs := frontiertest.NewFaultyStore(frontier.NewMemStore())
			o := frontier.Options{Store: fs, Clock: frontiertest.NewFakeClock(frontiertest.Epoch), Politeness: frontier.Politeness{K: -1}, BackQueues: 4}
			var f interface {
				frontier.Frontier
				frontier.Checkpointer
				Close() error
			}
			var err error
			if impl == "fifo" {
				f, err = frontier.NewFIFO(&o)
			} else {
				f, err = frontier.NewMercator(&o)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ctx := context.Background()
			var us []frontier.URL
			for i := range 40 {
				us = append(us, frontier.URL{URL: fmt.Sprintf("http://h%d.test/%d", i%8, i)})
			}
			if err := f.Add(ctx, us[:20]...); err != nil {
				t.Fatal(err)
			}
			fs.FailAfter(0, boom)
			var fe *frontier.Error
			if err := f.Add(ctx, us[20:]...); !errors.Is(err, boom) || !errors.As(err, &fe) {
				t.Errorf("Add on a failing store = %v", err)
			}
			if err := f.Checkpoint(&bytes.Buffer{}); !errors.Is(err, boom) {
				t.Errorf("Checkpoint on a failing store = %v", err)
			}
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			for range 5 {
				l, err := f.Next(short)
				if err != nil {
					if !errors.Is(err, boom) && !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Next on a failing store = %v", err)
					}
					continue
				}
				if err := f.Done(l, frontier.Result{Revisit: frontiertest.Epoch.Add(time.Hour)}); err != nil && !errors.Is(err, boom) {
					t.Errorf("Done on a failing store = %v", err)
				}
			}
			if fs.Failures() == 0 {
				t.Fatal("the store never failed")
			}
			fs.FailAfter(-1, nil)
			if err := f.Add(ctx, frontier.URL{URL: "http://healed.test/"}); err != nil {
				t.Fatalf("Add after healing: %v", err)
			}
			got := 0
			drain, cancel2 := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel2()
			for {
				l, err := f.Next(drain)
				if err != nil {
					break
				}
				got++
				f.Done(l, frontier.Result{})
			}
			if got == 0 {
				t.Error("nothing leased after the store healed")
			}
		})
	}
}
