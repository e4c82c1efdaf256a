package frontiertest

import (
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// clockUnit is the step of the clock suite: short, since a real clock
// sleeps through every step, and long enough that a timer of a few units
// is still pending right after it was made.
const clockUnit = 25 * time.Millisecond

// clockWait bounds the real time the suite waits for a timer due on clk's
// time to deliver.
const clockWait = 2 * time.Second

// RunClock runs the conformance suite of frontier.Clock as subtests of t,
// on clk, whose time advance moves forward by d (time.Sleep for a real
// clock, FakeClock.Advance for a fake one): Now never goes back, alone or
// read from many goroutines, and moves by at least what advance was told;
// NewTimer(d) delivers once, no earlier than d after it was made (its
// value, and Now when it arrives, say so), and at once for d ≤ 0; Stop
// before the timer fires returns true and it never fires, Stop after it
// fired, or a second time, returns false; and timers made and stopped
// from many goroutines while the clock moves behave the same. The suite
// takes a few hundred milliseconds of advance.
func RunClock(t *testing.T, clk frontier.Clock, advance func(time.Duration)) {
	t.Run("NowMonotone", func(t *testing.T) { testNowMonotone(t, clk, advance) })
	t.Run("TimerFiresOnce", func(t *testing.T) { testTimerFires(t, clk, advance) })
	t.Run("TimerAtOnce", func(t *testing.T) { testTimerAtOnce(t, clk) })
	t.Run("Stop", func(t *testing.T) { testTimerStop(t, clk, advance) })
	t.Run("Concurrent", func(t *testing.T) { testClockConcurrent(t, clk, advance) })
}

func testNowMonotone(t *testing.T, clk frontier.Clock, advance func(time.Duration)) {
	prev := clk.Now()
	for i := range 1000 {
		now := clk.Now()
		if now.Before(prev) {
			t.Fatalf("read %d: Now went back from %v to %v", i, prev, now)
		}
		prev = now
	}
	advance(clockUnit)
	if now := clk.Now(); now.Sub(prev) < clockUnit {
		t.Errorf("Now moved by %v over advance(%v)", now.Sub(prev), clockUnit)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			prev := clk.Now()
			for {
				select {
				case <-stop:
					return
				default:
				}
				now := clk.Now()
				if now.Before(prev) {
					t.Errorf("concurrent read: Now went back from %v to %v", prev, now)
					return
				}
				prev = now
			}
		})
	}
	for range 4 {
		advance(clockUnit / 4)
	}
	close(stop)
	wg.Wait()
}

// early reports a value tm delivered before start + d: a timer made
// after start must not fire before d has passed on clk.
func early(t *testing.T, clk frontier.Clock, v, start time.Time, d time.Duration) {
	t.Helper()
	if now := clk.Now(); now.Sub(start) < d || v.Before(start.Add(d)) {
		t.Errorf("timer of %v fired early: its value is %v after it was made, the clock %v after", d, v.Sub(start), now.Sub(start))
	}
}

// waitFire waits for tm to deliver, in real time at most clockWait.
func waitFire(t *testing.T, tm frontier.Timer, what string) (time.Time, bool) {
	t.Helper()
	select {
	case v := <-tm.C():
		return v, true
	case <-time.After(clockWait):
		t.Errorf("%s did not fire", what)
		return time.Time{}, false
	}
}

// noFire checks that tm delivers nothing within a short real wait.
func noFire(t *testing.T, tm frontier.Timer, what string) {
	t.Helper()
	select {
	case v := <-tm.C():
		t.Errorf("%s fired (%v)", what, v)
	case <-time.After(clockUnit):
	}
}

func testTimerFires(t *testing.T, clk frontier.Clock, advance func(time.Duration)) {
	const d = 4 * clockUnit
	start := clk.Now()
	tm := clk.NewTimer(d)
	fired := false
	check := func() {
		select {
		case v := <-tm.C():
			early(t, clk, v, start, d)
			fired = true
		default:
		}
	}
	check()
	// Step by step, so that a timer firing before its time is caught
	// while the clock still reads less than d since it was made.
	for range d / clockUnit {
		advance(clockUnit)
		check()
	}
	if !fired {
		v, ok := waitFire(t, tm, "timer, once its time had passed,")
		if ok {
			early(t, clk, v, start, d)
		}
	}
	advance(d)
	noFire(t, tm, "timer, a second time,")
	if tm.Stop() {
		t.Error("Stop of a timer that fired returned true")
	}
}

func testTimerAtOnce(t *testing.T, clk frontier.Clock) {
	for _, d := range []time.Duration{0, -time.Second, -1} {
		start := clk.Now()
		tm := clk.NewTimer(d)
		if v, ok := waitFire(t, tm, "timer of "+d.String()+", without the clock moving,"); ok && v.Before(start) {
			t.Errorf("timer of %v delivered %v, before it was made (%v)", d, v, start)
		}
		if tm.Stop() {
			t.Errorf("Stop of a timer of %v that fired returned true", d)
		}
	}
}

func testTimerStop(t *testing.T, clk frontier.Clock, advance func(time.Duration)) {
	tm := clk.NewTimer(3 * clockUnit)
	if !tm.Stop() {
		t.Fatal("Stop of a pending timer returned false")
	}
	if tm.Stop() {
		t.Error("second Stop returned true")
	}
	other := clk.NewTimer(3 * clockUnit) // a timer left running
	advance(4 * clockUnit)
	noFire(t, tm, "stopped timer")
	waitFire(t, other, "timer next to a stopped one")
}

func testClockConcurrent(t *testing.T, clk frontier.Clock, advance func(time.Duration)) {
	type made struct {
		tm      frontier.Timer
		stopped bool
	}
	var mu sync.Mutex
	var all []made
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 20 {
				tm := clk.NewTimer(time.Duration(1+(i+w)%3) * clockUnit)
				m := made{tm: tm}
				if i%2 == 0 {
					m.stopped = tm.Stop()
				}
				mu.Lock()
				all = append(all, m)
				mu.Unlock()
			}
		})
	}
	for range 4 {
		advance(clockUnit / 4)
	}
	wg.Wait()
	advance(4 * clockUnit)
	time.Sleep(clockUnit)
	for i, m := range all {
		if m.stopped {
			select {
			case v := <-m.tm.C():
				t.Errorf("timer %d fired (%v) after Stop returned true", i, v)
			default:
			}
			continue
		}
		if _, ok := waitFire(t, m.tm, "timer made concurrently"); !ok {
			return
		}
	}
}
