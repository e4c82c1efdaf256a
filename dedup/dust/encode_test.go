package dust_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/dedup/dust"
)

func TestEncoding(t *testing.T) {
	c := trained(t)
	b, err := c.l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	l2, _ := dust.New(&dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1})
	if err := l2.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	b2, _ := l2.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Errorf("encoding not stable:\n%q\n%q", b, b2)
	}
	got, want := rules(l2), rules(c.l)
	if !slices.Equal(got, want) {
		t.Errorf("rules after decoding %q, want %q", got, want)
	}
	st, st2 := c.l.Stats(), l2.Stats()
	if st2.Parked != st.Parked || st2.Active != st.Active || st2.Activated != st.Activated || st2.Withdrawn != st.Withdrawn || st2.Rewritten != st.Rewritten {
		t.Errorf("stats after decoding %+v, want %+v", st2, st)
	}
	for _, k := range kinds {
		r1, _ := c.l.Rewrite(k.unseen[0])
		r2, _ := l2.Rewrite(k.unseen[0])
		if r1.URL != r2.URL || r2.URL != k.unseen[1] {
			t.Errorf("Rewrite(%q) after decoding = %q, want %q", k.unseen[0], r2.URL, r1.URL)
		}
	}
	// The decoded parked URLs are released as the originals would be
	// (the sample is not kept: the canonical page is fetched again).
	c.l = l2
	c.fetch("http://alias.sim.test/p7")
	a := "http://www.alias.sim.test/p7"
	c.web[a] = fpOf("changed")
	before := st2.Parked
	c.seen[a] = true
	c.fetch(a)
	if len(c.released) == 0 || l2.Stats().Parked >= before {
		t.Errorf("nothing released after decoding: %q", c.released)
	}
}

func TestDecodeCorrupt(t *testing.T) {
	b, _ := trained(t).l.MarshalBinary()
	l, _ := dust.New(nil)
	check := func(name string, data []byte) {
		t.Helper()
		err := l.UnmarshalBinary(data)
		var de *dust.Error
		if err == nil || !errors.Is(err, dust.ErrCorrupt) || !errors.As(err, &de) {
			t.Errorf("%s: UnmarshalBinary = %v, want a *dust.Error wrapping ErrCorrupt", name, err)
		}
	}
	for n := range len(b) {
		check("truncated", b[:n])
	}
	check("trailing byte", append(slices.Clone(b), 0))
	for i := range b {
		// Flipped bytes must decode or fail, never panic.
		d := slices.Clone(b)
		d[i] ^= 0xff
		_ = l.UnmarshalBinary(d)
	}
	if l.Stats().Rules != 0 && len(l.Rules()) == 0 {
		t.Error("a failed decode changed the learner")
	}
}

// TestDecodeHostile: counts and lengths far beyond the input are refused
// before anything is allocated for them.
func TestDecodeHostile(t *testing.T) {
	head := append([]byte("dust\x02"), 5, 1, 0, 0, 0, 0, 0, 0, 0)
	huge := binary.AppendUvarint(nil, 1<<62)
	inputs := [][]byte{
		append(slices.Clone(head), huge...),                          // rules
		append(append(slices.Clone(head), 0), huge...),               // parked URLs
		append(append(slices.Clone(head), 1, 1, 1, 2, 0), huge...),   // a host's length
		append(append(slices.Clone(head), 0, 1), append(huge, 0)...), // a URL's length
	}
	l, _ := dust.New(nil)
	for i, in := range inputs {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		err := l.UnmarshalBinary(in)
		runtime.ReadMemStats(&m1)
		if !errors.Is(err, dust.ErrCorrupt) {
			t.Errorf("input %d: %v", i, err)
		}
		if a := m1.TotalAlloc - m0.TotalAlloc; a > 64<<10 {
			t.Errorf("input %d of %d bytes allocated %d bytes", i, len(in), a)
		}
	}
}

// FuzzUnmarshalBinary: any input decodes or fails with ErrCorrupt,
// never panics; what decodes encodes to a state that decodes to itself.
func FuzzUnmarshalBinary(f *testing.F) {
	l, _ := dust.New(nil)
	b, _ := l.MarshalBinary()
	f.Add(b)
	f.Add([]byte("dust\x01"))
	f.Add([]byte("dust\x02"))
	f.Add([]byte("dust\x03"))
	f.Add([]byte{})
	// A trained state with parked URLs and failed canonical forms.
	c := trained(f)
	for _, r := range c.l.Rules() {
		c.l.Failed("http://" + r.Host + "/gone")
	}
	if c.l.Stats().Failed == 0 || c.l.Stats().Parked == 0 {
		f.Fatalf("the trained seed lacks failed forms or parked URLs: %+v", c.l.Stats())
	}
	b, _ = c.l.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		l, _ := dust.New(nil)
		if err := l.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, dust.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		b1, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		l2, _ := dust.New(nil)
		if err := l2.UnmarshalBinary(b1); err != nil {
			t.Fatalf("re-encoded state does not decode: %v", err)
		}
		b2, _ := l2.MarshalBinary()
		if string(b1) != string(b2) {
			t.Fatalf("encoding not stable:\n%q\n%q", b1, b2)
		}
		for _, r := range l.Rules() {
			_ = r.String()
		}
	})
}

// TestAppendRules checks the encoding without the parked URLs: the rules
// are the same, nothing is parked, and the URLs parked before park again.
func TestAppendRules(t *testing.T) {
	c := trained(t)
	if c.l.Stats().Parked == 0 {
		t.Fatal("the trained learner parked nothing")
	}
	b, err := c.l.AppendRules(nil)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := c.l.MarshalBinary()
	if len(b) >= len(full) {
		t.Errorf("rules alone take %d bytes, with the parked URLs %d", len(b), len(full))
	}
	l2, _ := dust.New(&dust.Options{Probation: -1, MinSupport: minSupport, ValidateEvery: -1})
	if err := l2.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if got, want := rules(l2), rules(c.l); !slices.Equal(got, want) {
		t.Errorf("rules after decoding %q, want %q", got, want)
	}
	if n := l2.Stats().Parked; n != 0 {
		t.Errorf("%d URLs parked after decoding the rules alone", n)
	}
	for _, k := range kinds {
		r, ok := l2.Rewrite(k.unseen[0])
		if !ok || !l2.Park(k.unseen[0], r.URL) {
			t.Errorf("%s does not park again after decoding the rules", k.unseen[0])
		}
	}
}

// TestDecodeVersion1: the state of version 1 is still read; its
// parameter rules were learned from pairs with the URL without the
// parameter, so they park at once. It had no parameter sets.
func TestDecodeVersion1(t *testing.T) {
	v1 := func(param string) []byte {
		b := append([]byte("dust\x01"), 2, 1, 0, 0, 0, 0, 0, 0, 0) // next ID and seq, counters
		b = append(b, 1, 1, byte(dust.DropParam), byte(dust.Active), 0)
		for _, s := range []string{"s.sim.test", param, ""} {
			b = append(binary.AppendUvarint(b, uint64(len(s))), s...)
		}
		return append(b, 4, 0, 0, 0, 0, 0) // evidence, no parked URL
	}
	l, _ := dust.New(&dust.Options{ValidateEvery: -1})
	if err := l.UnmarshalBinary(v1("ref")); err != nil {
		t.Fatal(err)
	}
	if r, ok := l.Rewrite("http://s.sim.test/x?ref=1&a=2"); !ok || r.URL != "http://s.sim.test/x?a=2" || r.Validate {
		t.Errorf("Rewrite after decoding version 1: %+v, %v", r, ok)
	}
	b, _ := l.MarshalBinary()
	if !strings.HasPrefix(string(b), "dust\x03") {
		t.Errorf("encoded as %q", b[:5])
	}
	if err := l.UnmarshalBinary(v1("a&b")); !errors.Is(err, dust.ErrCorrupt) {
		t.Errorf("a parameter set in version 1: %v", err)
	}
	// Version 2: parameter sets and the bare flag, no failed canonical
	// forms.
	v2 := v1("a&b")
	v2[4] = 2
	v2[len("dust\x02")+9+4] = 2 // flags: bare
	if err := l.UnmarshalBinary(v2); err != nil {
		t.Fatalf("version 2: %v", err)
	}
	if r, ok := l.Rewrite("http://s.sim.test/x?a=1&b=2&c=3"); !ok || r.URL != "http://s.sim.test/x?c=3" {
		t.Errorf("Rewrite after decoding version 2: %+v, %v", r, ok)
	}
}

// TestFailedCanonical: a canonical form that gives no page releases the
// URLs parked on it, and no URL is parked on it again, across an
// encoding too; a URL of a host no rule rewrites to is not recorded.
func TestFailedCanonical(t *testing.T) {
	state := append([]byte("dust\x01"), 2, 1, 0, 0, 0, 0, 0, 0, 0)
	state = append(state, 1, 1, byte(dust.DropParam), byte(dust.Active), 0)
	for _, s := range []string{"s.sim.test", "ref", ""} {
		state = append(binary.AppendUvarint(state, uint64(len(s))), s...)
	}
	state = append(state, 4, 0, 0, 0, 0, 0)
	l, _ := dust.New(&dust.Options{ValidateEvery: -1})
	if err := l.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	park := func(l *dust.Learner, u string) bool {
		t.Helper()
		r, ok := l.Rewrite(u)
		if !ok {
			t.Fatalf("%s not rewritten", u)
		}
		return l.Park(u, r.URL)
	}
	for _, u := range []string{"http://s.sim.test/a?ref=1", "http://s.sim.test/a?ref=2", "http://s.sim.test/b?ref=1"} {
		if !park(l, u) {
			t.Fatalf("%s not parked", u)
		}
	}
	if got := l.Failed("http://other.sim.test/a"); got != nil || l.Stats().Failed != 0 {
		t.Errorf("a host no rule names: released %q, %d recorded", got, l.Stats().Failed)
	}
	v := l.Version()
	got := l.Failed("http://s.sim.test/a")
	slices.Sort(got)
	if want := []string{"http://s.sim.test/a?ref=1", "http://s.sim.test/a?ref=2"}; !slices.Equal(got, want) {
		t.Errorf("released %q, want %q", got, want)
	}
	if st := l.Stats(); st.Failed != 1 || st.Parked != 1 || st.Released != 2 || l.Version() == v {
		t.Errorf("after Failed: %+v, version %d (was %d)", st, l.Version(), v)
	}
	if park(l, "http://s.sim.test/a?ref=3") {
		t.Error("a URL was parked on a canonical form that gave no page")
	}
	if got := l.Failed("http://s.sim.test/a"); len(got) != 0 || l.Stats().Failed != 1 {
		t.Errorf("failed again: released %q, %d recorded", got, l.Stats().Failed)
	}
	// Across an encoding: still refused, and the URL still parked is
	// found by its canonical form.
	b, err := l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	l2, _ := dust.New(&dust.Options{ValidateEvery: -1})
	if err := l2.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if park(l2, "http://s.sim.test/a?ref=4") {
		t.Error("after decoding: a URL was parked on a canonical form that gave no page")
	}
	if got := l2.Failed("http://s.sim.test/b"); !slices.Equal(got, []string{"http://s.sim.test/b?ref=1"}) {
		t.Errorf("after decoding: released %q", got)
	}
	if st := l2.Stats(); st.Failed != 2 || st.Parked != 0 {
		t.Errorf("after decoding: %+v", st)
	}
}

// TestEncodeParamSet: a parameter set and a rule still on probation for
// want of the URL without its parameters survive the encoding.
func TestEncodeParamSet(t *testing.T) {
	l, _ := dust.New(&dust.Options{MinSupport: 2, ValidateEvery: -1})
	for i := range 3 {
		u := fmt.Sprintf("http://s.sim.test/a%d", i)
		l.Observe(u, uint64(i), "")
		l.Observe(fmt.Sprintf("%s?utm_source=s&utm_medium=m%d", u, i), uint64(i), u)
		l.Observe(fmt.Sprintf("%s?utm_source=t&utm_medium=n%d", u, i), uint64(i), u)
		l.Observe(fmt.Sprintf("http://s.sim.test/c?sid=%d", 2*i), 99, "http://s.sim.test/c?sid=0")
	}
	want := rules(l)
	b, _ := l.MarshalBinary()
	l2, _ := dust.New(&dust.Options{MinSupport: 2, ValidateEvery: -1})
	if err := l2.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	got := rules(l2)
	for _, r := range want {
		if strings.Contains(r, "[proposed]") {
			continue
		}
		if !slices.Contains(got, r) {
			t.Errorf("after decoding: rules %q, want %q", got, want)
		}
	}
	for u, validate := range map[string]bool{"http://s.sim.test/x?utm_medium=q&utm_source=r": false, "http://s.sim.test/c?sid=9": true} {
		if r, ok := l2.Rewrite(u); !ok || r.Validate != validate {
			t.Errorf("Rewrite(%q) after decoding = %+v, %v; want validate %v (rules %q)", u, r, ok, validate, got)
		}
	}
}
