package frontier

// hostTable is Mercator's table T (IIR Figure 20.4), from a key's hash to
// its back queue. It never holds more than B keys, one per back queue, so
// it is an open-addressing table of fixed size, at most half full, with
// linear probing and backward-shift deletion: a lookup is a few probes of
// one slice, without the hashing and the groups of a Go map, and nothing
// is allocated after NewMercator. keyHash values are xxhash sums, so their
// low bits index the slots directly.
type hostTable struct {
	keys []uint64
	vals []int32 // back queue + 1; 0 marks an empty slot
	mask uint64
	n    int
}

// newHostTable returns a table for up to b keys.
func newHostTable(b int) hostTable {
	size := 8
	for size < 2*b {
		size *= 2
	}
	return hostTable{keys: make([]uint64, size), vals: make([]int32, size), mask: uint64(size - 1)}
}

// get returns the back queue of kh. O(1) expected.
func (t *hostTable) get(kh uint64) (int32, bool) {
	for i := kh & t.mask; t.vals[i] != 0; i = (i + 1) & t.mask {
		if t.keys[i] == kh {
			return t.vals[i] - 1, true
		}
	}
	return 0, false
}

// put maps kh, which must not be in the table, to back queue j. The table
// must hold fewer keys than it was made for.
func (t *hostTable) put(kh uint64, j int32) {
	i := kh & t.mask
	for t.vals[i] != 0 {
		i = (i + 1) & t.mask
	}
	t.keys[i], t.vals[i] = kh, j+1
	t.n++
}

// del removes kh if present, moving back the entries that probed past it
// so that no lookup stops early at the hole.
func (t *hostTable) del(kh uint64) {
	i := kh & t.mask
	for {
		if t.vals[i] == 0 {
			return
		}
		if t.keys[i] == kh {
			break
		}
		i = (i + 1) & t.mask
	}
	t.n--
	for {
		t.vals[i] = 0
		j := i
		for {
			j = (j + 1) & t.mask
			if t.vals[j] == 0 {
				return
			}
			// The entry at j may fill the hole at i unless its home slot
			// lies cyclically in (i, j].
			h := t.keys[j] & t.mask
			if (i < j && (h <= i || h > j)) || (i > j && h <= i && h > j) {
				break
			}
		}
		t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
		i = j
	}
}

// len returns the number of keys.
func (t *hostTable) len() int { return t.n }
