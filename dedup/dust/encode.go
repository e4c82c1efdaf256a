package dust

import (
	"cmp"
	"encoding/binary"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/crawlkit/crawlkit/internal/wire"
)

// The encoded state: the magic and version, then uvarints and
// length-prefixed strings.
//
//	"dust" 0x03
//	nextID nextSeq
//	Observed Proposed Activated Withdrawn Refuted Dropped Released Failed
//	count, then per rule (active and withdrawn, by ID):
//	  id kind(byte) state(byte) flags(byte) host from to
//	  support counterexamples seq rewritten released
//	count, then per parked URL (by URL):
//	  url count ids
//	count, then the failed canonical forms' FNV-1a hashes, oldest first,
//	  8 bytes each, little-endian
//
// The flags are 1, refuted (withdrawn before it was active), and 2, bare
// (a DropParam with a pair of a URL without its parameters). Versions 1
// and 2 are still read. Version 2 had no Failed counter and no failed
// canonical forms. Version 1, whose flags byte was the refuted one alone,
// had no parameter sets either, and its parameter rules were all learned
// from pairs with the URL without the parameter, so they are bare.
const (
	magic   = "dust\x03"
	magicV2 = "dust\x02"
	magicV1 = "dust\x01"
)

const (
	flagRefuted = 1 << iota
	flagBare
)

const (
	maxString  = 1 << 16 // longest host, name, prefix or URL decoded
	maxCounter = 1<<31 - 1
)

// MarshalBinary encodes the state that matters across a resume of the
// crawl: the active rules and their evidence, the withdrawn rules (so
// that they stay withdrawn), the parked URLs and the counters. Proposed
// rules and the recent sample are not kept: they are relearned. The
// encoding of a state is always the same bytes. Cost: O(rules + parked
// URLs) under the mutex.
func (l *Learner) MarshalBinary() ([]byte, error) { return l.AppendBinary(nil) }

// AppendBinary appends the encoding of MarshalBinary to b.
func (l *Learner) AppendBinary(b []byte) ([]byte, error) { return l.appendState(b, true) }

// AppendRules appends the encoding of MarshalBinary without the parked
// URLs, for a crawler that keeps those itself (with its pending URLs)
// and parks them again after UnmarshalBinary: the rules change seldom,
// the parked URLs with every page.
func (l *Learner) AppendRules(b []byte) ([]byte, error) { return l.appendState(b, false) }

// appendState appends the encoded state, the parked URLs if parked.
func (l *Learner) appendState(b []byte, parked bool) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	b = append(b, magic...)
	b = binary.AppendUvarint(b, uint64(l.nextID))
	b = binary.AppendUvarint(b, l.nextSeq)
	for _, v := range l.st.counters() {
		b = binary.AppendUvarint(b, *v)
	}
	b = binary.AppendUvarint(b, l.st.Failed)
	var rs []*cand
	for _, c := range l.rules {
		if c.state != Proposed {
			rs = append(rs, c)
		}
	}
	slices.SortFunc(rs, func(a, b *cand) int { return cmp.Compare(a.id, b.id) })
	b = binary.AppendUvarint(b, uint64(len(rs)))
	for _, c := range rs {
		b = binary.AppendUvarint(b, uint64(c.id))
		flags := boolByte(c.refuted) | boolByte(c.bare)<<1
		b = append(b, byte(c.kind), byte(c.state), flags)
		for _, s := range [3]string{c.host, c.from, c.to} {
			b = appendString(b, s)
		}
		var rewritten uint64
		if c.act != nil {
			rewritten = c.act.rewritten.Load()
		}
		for _, v := range [5]uint64{uint64(c.support), uint64(c.counter), c.seq, rewritten, c.released} {
			b = binary.AppendUvarint(b, v)
		}
	}
	var urls []string
	if parked {
		urls = slices.Sorted(maps.Keys(l.parkedBy))
	}
	b = binary.AppendUvarint(b, uint64(len(urls)))
	for _, u := range urls {
		chain := l.parkedBy[u]
		b = appendString(b, u)
		b = binary.AppendUvarint(b, uint64(len(chain)))
		for _, c := range chain {
			b = binary.AppendUvarint(b, uint64(c.id))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(l.failedOrder)))
	for _, h := range l.failedOrder {
		b = binary.LittleEndian.AppendUint64(b, h)
	}
	return b, nil
}

func (st *Stats) counters() [7]*uint64 {
	return [7]*uint64{&st.Observed, &st.Proposed, &st.Activated, &st.Withdrawn, &st.Refuted, &st.Dropped, &st.Released}
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// UnmarshalBinary replaces the Learner's rules, parked URLs and counters
// with the state encoded in data by MarshalBinary, and empties its
// recent sample; the options stay. Data that MarshalBinary did not
// write is reported as an *Error wrapping ErrCorrupt, and the Learner is
// left as it was. Decoding never allocates more than a small multiple
// of len(data).
func (l *Learner) UnmarshalBinary(data []byte) error {
	d, err := decode(data)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	l.rules = make(map[key]*cand, len(d.rules))
	l.byHost = make(map[string][]*cand)
	clear(l.activeParam)
	clear(l.refutedParam)
	for _, c := range d.rules {
		l.rules[c.key()] = c
		l.index(c)
		if c.state == Active {
			l.generalize(c, 1, false)
		} else {
			l.generalize(c, 0, true)
		}
	}
	for _, c := range d.rules {
		l.probe(c) // once the known parameters are counted
	}
	l.parkedBy = d.parked
	for _, u := range d.order {
		for _, c := range d.parked[u] {
			c.parked = append(c.parked, u)
			c.nParked++
			if c.nParked >= l.opts.MaxParked {
				c.act.full.Store(true)
			}
		}
	}
	l.nextID, l.nextSeq, l.st = d.nextID, d.nextSeq, d.st
	l.hosts = make(map[string]*hostSample)
	l.lru.Init()
	l.sampled = 0
	l.failed = make(map[uint64]struct{}, len(d.failed))
	l.failedOrder = d.failed
	for _, h := range d.failed {
		l.failed[h] = struct{}{}
	}
	s := l.build()
	l.snap.Store(s)
	// The canonical forms the parked URLs are parked on, for Failed.
	l.parkedOn = make(map[uint64][]string)
	for _, u := range d.order {
		if out, _, ok := s.rewrite(u, func(*active, bool) {}); ok {
			l.parkedOn[fnv(out)] = append(l.parkedOn[fnv(out)], u)
		}
	}
	return nil
}

type decoded struct {
	nextID  RuleID
	nextSeq uint64
	st      Stats
	rules   []*cand
	parked  map[string][]*cand
	order   []string // the parked URLs, in order
	failed  []uint64 // the failed canonical forms, oldest first
}

func corrupt(what string) error {
	return &Error{Op: "UnmarshalBinary", Subject: what, Err: ErrCorrupt}
}

func decode(data []byte) (*decoded, error) {
	if len(data) < len(magic) {
		return nil, corrupt("header")
	}
	v1 := string(data[:len(magicV1)]) == magicV1
	v2 := string(data[:len(magicV2)]) == magicV2
	if !v1 && !v2 && string(data[:len(magic)]) != magic {
		return nil, corrupt("header")
	}
	r := wire.Decoder{B: data[len(magic):]}
	d := &decoded{}
	id := r.Uvarint()
	d.nextSeq = r.Uvarint()
	if id == 0 || id > uint64(^RuleID(0)) {
		return nil, corrupt("next rule ID")
	}
	d.nextID = RuleID(id)
	for _, v := range d.st.counters() {
		*v = r.Uvarint()
	}
	if !v1 && !v2 {
		d.st.Failed = r.Uvarint()
	}
	if r.Bad {
		return nil, corrupt("header")
	}
	n := r.Count(12)
	d.rules = make([]*cand, 0, n)
	byID := make(map[RuleID]*cand, n)
	keys := make(map[key]bool, n)
	for i := range n {
		what := "rule " + strconv.Itoa(i)
		id := r.Uvarint()
		c := &cand{id: RuleID(id)}
		c.kind, c.state = Kind(r.Byte()), State(r.Byte())
		flags := r.Byte()
		if v1 && c.kind == DropParam && flags&^flagRefuted == 0 {
			flags |= flagBare // see magic
		}
		c.refuted, c.bare = flags&flagRefuted != 0, flags&flagBare != 0
		c.host, c.from, c.to = string(r.Bytes(maxString)), string(r.Bytes(maxString)), string(r.Bytes(maxString))
		var v [5]uint64
		for j := range v {
			v[j] = r.Uvarint()
		}
		if r.Bad {
			return nil, corrupt(what)
		}
		switch {
		case id == 0 || id >= uint64(d.nextID) || byID[c.id] != nil:
			return nil, corrupt(what + ": ID")
		case c.state != Active && c.state != Withdrawn || c.refuted && c.state != Withdrawn:
			return nil, corrupt(what + ": state")
		case flags&^(flagRefuted|flagBare) != 0 || c.bare && c.kind != DropParam || v1 && flags&^flagRefuted != 0 && c.kind != DropParam:
			return nil, corrupt(what + ": flags")
		case !c.valid() || keys[c.key()] || v1 && c.kind == DropParam && strings.Contains(c.from, "&"):
			return nil, corrupt(what + ": " + c.kind.String())
		case v[0] > maxCounter || v[1] > maxCounter || c.state == Active && (v[1] != 0 || v[2] >= d.nextSeq):
			return nil, corrupt(what + ": evidence")
		}
		c.support, c.counter, c.seq, c.released = int(v[0]), int(v[1]), v[2], v[4]
		c.act = &active{id: c.id, c: c}
		c.act.rewritten.Store(v[3])
		byID[c.id] = c
		keys[c.key()] = true
		d.rules = append(d.rules, c)
	}
	n = r.Count(3)
	d.parked = make(map[string][]*cand, n)
	d.order = make([]string, 0, n)
	for i := range n {
		what := "parked URL " + strconv.Itoa(i)
		u := string(r.Bytes(maxString))
		k := r.Count(1)
		chain := make([]*cand, 0, k)
		for range k {
			id := r.Uvarint()
			c := byID[RuleID(id)]
			if id > uint64(^RuleID(0)) || c == nil || c.state != Active || slices.Contains(chain, c) {
				return nil, corrupt(what + ": rule")
			}
			chain = append(chain, c)
		}
		if _, ok := split(u); r.Bad || !ok || k == 0 || i > 0 && u <= d.order[i-1] {
			return nil, corrupt(what)
		}
		d.parked[u] = chain
		d.order = append(d.order, u)
	}
	if !v1 && !v2 {
		n = r.Count(8)
		if n > maxFailed {
			return nil, corrupt("failed canonical forms")
		}
		seen := make(map[uint64]bool, n)
		for range n {
			h := r.Uint64()
			if r.Bad || seen[h] {
				return nil, corrupt("failed canonical forms")
			}
			seen[h] = true
			d.failed = append(d.failed, h)
		}
	}
	if !r.Done() {
		return nil, corrupt("trailer")
	}
	return d, nil
}
