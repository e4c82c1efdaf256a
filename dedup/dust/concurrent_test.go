package dust_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/dedup/dust"
)

// TestConcurrent runs workers that observe, rewrite and park against one
// Learner while another reads its rules, counters and encoding (run it
// with -race).
func TestConcurrent(t *testing.T) {
	l, _ := dust.New(&dust.Options{Probation: -1, MinSupport: 2, ValidateEvery: 8, MaxParked: 50})
	const workers, pages = 4, 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	parked := map[string]bool{}
	for w := range workers {
		wg.Go(func() {
			host := fmt.Sprintf("w%d.sim.test", w%2) // two workers per host
			for i := range pages {
				canon := fmt.Sprintf("http://%s/d%d/", host, i)
				l.Observe(canon, uint64(i), "")
				for _, a := range []string{canon + "index.html", fmt.Sprintf("http://www.%s/d%d/", host, i), canon + "?ref=x"} {
					res, ok := l.Rewrite(a)
					// Park and record under mu: a release by another
					// worker between the two would be deleted from the
					// map before it was added.
					mu.Lock()
					if ok && !res.Validate && l.Park(a, res.URL) {
						parked[a] = true
						mu.Unlock()
						continue
					}
					mu.Unlock()
					fp := uint64(i)
					if i%97 == 96 && w == 0 {
						fp = 1 << 40 // a counterexample now and then
					}
					for _, r := range l.Observe(a, fp, canon) {
						mu.Lock()
						delete(parked, r)
						mu.Unlock()
					}
				}
			}
		})
	}
	done := make(chan bool)
	go func() {
		defer close(done)
		for range 50 {
			_ = l.Rules()
			_ = l.Stats()
			if _, err := l.MarshalBinary(); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	<-done
	st := l.Stats()
	if st.Parked != len(parked) {
		t.Errorf("Stats.Parked %d, the workers hold %d", st.Parked, len(parked))
	}
	t.Logf("%+v", st)
	for _, r := range l.Rules() {
		t.Log(r)
	}
}
