package frontiertest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

func TestFakeClock(t *testing.T) {
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	t1 := clk.NewTimer(2 * time.Second)
	t2 := clk.NewTimer(time.Second)
	t3 := clk.NewTimer(3 * time.Second)
	now := clk.NewTimer(0)
	select {
	case <-now.C():
	default:
		t.Fatal("timer of 0 did not fire at once")
	}
	if d, ok := clk.NextDeadline(); !ok || !d.Equal(frontiertest.Epoch.Add(time.Second)) {
		t.Fatalf("NextDeadline = %v %v", d, ok)
	}
	if !t3.Stop() || t3.Stop() {
		t.Fatal("Stop should succeed once")
	}
	clk.Advance(1500 * time.Millisecond)
	for name, tm := range map[string]interface{ C() <-chan time.Time }{"1s": t2} {
		select {
		case <-tm.C():
		default:
			t.Fatalf("%s timer did not fire", name)
		}
	}
	select {
	case <-t1.C():
		t.Fatal("2s timer fired at 1.5s")
	default:
	}
	clk.Set(frontiertest.Epoch) // never backwards
	if got := clk.Now().Sub(frontiertest.Epoch); got != 1500*time.Millisecond {
		t.Fatalf("clock went back to %v", got)
	}
	if clk.Timers() != 1 {
		t.Fatalf("%d pending timers, want 1", clk.Timers())
	}
	clk.Advance(time.Second)
	<-t1.C()
	if _, ok := clk.NextDeadline(); ok {
		t.Fatal("timers left")
	}
}

func ExampleFakeClock() {
	clk := frontiertest.NewFakeClock(frontiertest.Epoch)
	timer := clk.NewTimer(time.Second)
	clk.Advance(500 * time.Millisecond)
	select {
	case <-timer.C():
		fmt.Println("fired early")
	default:
		fmt.Println("still waiting at", clk.Now().Sub(frontiertest.Epoch))
	}
	clk.Advance(500 * time.Millisecond)
	<-timer.C()
	fmt.Println("fired at", clk.Now().Sub(frontiertest.Epoch))
	// Output:
	// still waiting at 500ms
	// fired at 1s
}
