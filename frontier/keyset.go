package frontier

// keySet remembers the key hashes that have had a back queue (MostWork):
// a key is added when it gets a queue and again when it gives it up. It
// holds two generations of 2^23 bits (1 MiB each, allocated with the
// first key). Keys go into the newer one; when that holds keySetGen keys
// the older one is dropped and an empty one begins. So the latest
// keySetGen to 2 × keySetGen keys are remembered, and a key never added
// is taken for one that was (it shares a bit with one) at a rate of at
// most 1 − (1 − 1/16)² = 11.7%, however many hosts the crawl meets; one
// bit set that never forgot would take 70% of new hosts for known ones
// after ten million. A key taken for a known one waits in the front
// queue, as every URL does in the book's Mercator; a key forgotten is
// served as a new one once more.
type keySet struct {
	gen [2][]uint64 // gen[0] the newer
	n   int         // bits set in gen[0]: the keys added to it, less collisions
}

const (
	keySetLog = 23
	keySetGen = 1 << keySetLog / 16 // keys a generation holds: about 6% of its bits set
)

// keySetBit returns the word and the bit of kh in a generation.
func keySetBit(kh uint64) (int, uint64) {
	i := kh >> (64 - keySetLog)
	return int(i / 64), uint64(1) << (i % 64)
}

// has reports whether kh was added (or shares its bit with a key that
// was) in either generation.
func (s *keySet) has(kh uint64) bool {
	w, bit := keySetBit(kh)
	for _, g := range s.gen {
		if g != nil && g[w]&bit != 0 {
			return true
		}
	}
	return false
}

// add records kh, opening a new generation when the newer one is full.
func (s *keySet) add(kh uint64) {
	if s.gen[0] == nil {
		s.gen[0] = make([]uint64, 1<<keySetLog/64)
	}
	w, bit := keySetBit(kh)
	if s.gen[0][w]&bit != 0 {
		return
	}
	if s.n == keySetGen {
		old := s.gen[1]
		if old == nil {
			old = make([]uint64, 1<<keySetLog/64)
		} else {
			clear(old)
		}
		s.gen[0], s.gen[1], s.n = old, s.gen[0], 0
	}
	s.gen[0][w] |= bit
	s.n++
}
