package frontier

import (
	"math/rand/v2"
	"testing"
)

func TestKeySet(t *testing.T) {
	var s keySet
	for _, c := range []struct {
		add, ask uint64
		want     bool
	}{
		{0, 0, false}, // nothing added yet: 0 is only asked
		{1 << 63, 1 << 63, true},
		{2 << 60, 2<<60 | 1, true}, // the low bits do not choose the bit: a collision
		{3 << 60, 5 << 60, false},
	} {
		if c.add != 0 {
			s.add(c.add)
		}
		if got := s.has(c.ask); got != c.want {
			t.Errorf("after add(%#x): has(%#x) = %v, want %v", c.add, c.ask, got, c.want)
		}
	}
}

// TestKeySetForgets adds four generations' worth of keys: the latest
// generation's are all remembered, and a key never added is taken for
// one that was about 12% of the time (a set that never forgot would be
// at 22% by then, and climbing).
func TestKeySetForgets(t *testing.T) {
	var s keySet
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]uint64, 4*keySetGen)
	for i := range keys {
		keys[i] = r.Uint64()
		s.add(keys[i])
	}
	for _, k := range keys[len(keys)-keySetGen:] {
		if !s.has(k) {
			t.Fatalf("a key of the latest generation is forgotten")
		}
	}
	const asked = 100_000
	fp, early := 0, 0
	for range asked {
		if s.has(r.Uint64()) {
			fp++
		}
	}
	for _, k := range keys[:asked] {
		if s.has(k) {
			early++
		}
	}
	// Both generations hold 1/16 of their bits: 1 − (15/16)² = 11.7%.
	if rate := float64(fp) / asked; rate > 0.125 {
		t.Errorf("%.1f%% of keys never added are taken for known ones, want ≤ 12.5%%", 100*rate)
	}
	if rate := float64(early) / asked; rate > 0.125 {
		t.Errorf("%.1f%% of the first generation's keys are still known, want ≤ 12.5%% (collisions only)", 100*rate)
	}
	t.Logf("false positives %.1f%%, first keys still known %.1f%%", 100*float64(fp)/asked, 100*float64(early)/asked)
}
