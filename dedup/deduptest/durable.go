package deduptest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/dedup"
)

// DurableContent is a ContentSeen whose state is kept as a log
// (dedup.Durable): what TestDurable checks.
type DurableContent interface {
	dedup.ContentSeen
	dedup.Durable
}

// DurableHarness tells TestDurable how to make the implementation under
// test.
type DurableHarness struct {
	// New returns an empty implementation. The calls of one subtest
	// return implementations configured alike, so that a log one writes
	// replays into another. Cleanup belongs in t.Cleanup.
	New func(t *testing.T) DurableContent
	// Keeps, if set, reports whether the implementation keeps the
	// document of fingerprint fp itself, and so logs it: a partition of a
	// distributed set (cluster.Content) keeps and logs its own share only.
	// nil means every fingerprint. The suite uses documents it keeps.
	Keeps func(fp uint64) bool
	// Near is set if the implementation finds near-duplicates (see
	// ContentCaps): the suite then checks that a replayed log finds them
	// too.
	Near bool
}

// errWrite is the failure of the suite's failing log.
var errWrite = errors.New("deduptest: disk full")

// TestDurable is the conformance suite of dedup.Durable. It checks, as
// subtests:
//   - Records: LogTo makes each change one record, in one Write call,
//     framed as the dedup.Durable comment describes (length, CRC-32C,
//     '+' with the fingerprint, URL and MinHash values, or '-' with the
//     fingerprint), and nothing for a call that changes nothing (a
//     duplicate, an unknown fingerprint forgotten); LogTo(nil) stops;
//   - ConcurrentLog: concurrent changes write whole records, one each;
//   - Replay: a log replays to the state that wrote it (documents seen
//     at the URLs first recorded, forgotten ones new, near-duplicates if
//     Near) and Replay returns its length; an empty log is no error;
//   - ReplayFormat: records written by the suite from the documented
//     format (K = 0, as dedup.ExactContent writes) replay too;
//   - TornTail: a log cut anywhere replays without error to the length
//     of its complete records, and their state; a log truncated there
//     and appended to replays whole;
//   - Corrupt: a damaged record (a flipped byte of its CRC or payload, a
//     payload the format does not allow) is an *dedup.Error wrapping
//     dedup.ErrCorrupt, with a length no further than the records before
//     it;
//   - Rewrite: the rewritten log holds one '+' record per document
//     recorded and not forgotten, replays to the same state, and
//     receives the later changes while the old log receives none;
//   - RewriteConcurrent: changes made during rewrites all reach the last
//     log;
//   - WriteErrors: a failed write is returned (wrapping the writer's
//     error) by the call that made the change, and the change stands;
//     Rewrite to a failing writer returns the error.
func TestDurable(t *testing.T, h DurableHarness) {
	s := &durableSuite{h: h}
	tests := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"Records", s.testRecords},
		{"ConcurrentLog", s.testConcurrentLog},
		{"Replay", s.testReplay},
		{"ReplayFormat", s.testReplayFormat},
		{"TornTail", s.testTornTail},
		{"Corrupt", s.testCorrupt},
		{"Rewrite", s.testRewrite},
		{"RewriteConcurrent", s.testRewriteConcurrent},
		{"WriteErrors", s.testWriteErrors},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.fn)
	}
}

type durableSuite struct {
	h DurableHarness

	once  sync.Once
	texts []string // page texts whose fingerprints the implementation keeps
}

// text returns the i-th page text the implementation keeps.
func (s *durableSuite) text(i int) string {
	s.once.Do(func() {
		for seed := uint64(1000); len(s.texts) < 400; seed++ {
			text := Text(seed, 200)
			if s.h.Keeps == nil || s.h.Keeps(dedup.TextFingerprint([]byte(text))) {
				s.texts = append(s.texts, text)
			}
		}
	})
	return s.texts[i]
}

// nearCopy returns text(i) with one word in 200 changed.
func (s *durableSuite) nearCopy(i int) string {
	w := strings.Fields(s.text(i))
	w[100] = "changed"
	return strings.Join(w, " ")
}

func url(i int) string { return fmt.Sprintf("http://h%d.test/page", i) }

func seen(t *testing.T, c dedup.ContentSeen, url, text string) dedup.Match {
	t.Helper()
	m, err := c.Seen(context.Background(), dedup.Doc{URL: url, Text: []byte(text)})
	if err != nil {
		t.Fatalf("Seen(%s): %v", url, err)
	}
	return m
}

func forget(t *testing.T, c dedup.ContentSeen, fp uint64) {
	t.Helper()
	if err := c.Forget(context.Background(), fp); err != nil {
		t.Fatalf("Forget(%016x): %v", fp, err)
	}
}

// writes records each Write call separately.
type writes struct {
	mu    sync.Mutex
	calls [][]byte
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, bytes.Clone(p))
	return len(p), nil
}

func (w *writes) n() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.calls)
}

func (w *writes) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Join(w.calls, nil)
}

// record is a decoded log record.
type record struct {
	add bool
	fp  uint64
	url string
	k   int
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// parseRecord decodes one framed record from the front of b, as the
// dedup.Durable comment describes it, and returns its length.
func parseRecord(b []byte) (record, int, error) {
	var r record
	if len(b) < 8 {
		return r, 0, errors.New("shorter than a frame")
	}
	size := int(binary.LittleEndian.Uint32(b))
	if len(b) < 8+size {
		return r, 0, fmt.Errorf("frame of %d bytes in %d", size, len(b)-8)
	}
	p := b[8 : 8+size]
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return r, 0, errors.New("CRC-32C does not match")
	}
	if len(p) < 9 || p[0] != '+' && p[0] != '-' {
		return r, 0, fmt.Errorf("payload %.9q is neither '+' nor '-' and a fingerprint", p)
	}
	r.add, r.fp, p = p[0] == '+', binary.LittleEndian.Uint64(p[1:]), p[9:]
	if !r.add {
		if len(p) != 0 {
			return r, 0, fmt.Errorf("'-' record with %d bytes after the fingerprint", len(p))
		}
		return r, 8 + size, nil
	}
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return r, 0, errors.New("bad URL length")
	}
	r.url, p = string(p[k:k+int(n)]), p[k+int(n):]
	n, k = binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)) {
		return r, 0, errors.New("bad K")
	}
	r.k, p = int(n), p[k:]
	want := 8 * r.k
	if r.k > 0 {
		want += 8 // the simhash
	}
	if len(p) != want {
		return r, 0, fmt.Errorf("'+' record with K = %d has %d bytes of values, want %d", r.k, len(p), want)
	}
	return r, 8 + size, nil
}

// parseLog decodes every record of a log.
func parseLog(b []byte) ([]record, error) {
	var out []record
	for len(b) > 0 {
		r, n, err := parseRecord(b)
		if err != nil {
			return out, fmt.Errorf("record %d: %w", len(out), err)
		}
		out = append(out, r)
		b = b[n:]
	}
	return out, nil
}

// frame frames payload as a log record.
func frame(payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// addRecord is an exact-only '+' record (K = 0).
func addRecord(fp uint64, url string) []byte {
	p := binary.LittleEndian.AppendUint64([]byte{'+'}, fp)
	p = binary.AppendUvarint(p, uint64(len(url)))
	p = append(p, url...)
	return frame(binary.AppendUvarint(p, 0))
}

// forgetRecord is a '-' record.
func forgetRecord(fp uint64) []byte {
	return frame(binary.LittleEndian.AppendUint64([]byte{'-'}, fp))
}

func (s *durableSuite) testRecords(t *testing.T) {
	c := s.h.New(t)
	w := &writes{}
	c.LogTo(w)
	var fps []uint64
	for i := range 4 {
		before := w.n()
		m := seen(t, c, url(i), s.text(i))
		if m.Seen {
			t.Fatalf("document %d seen in an empty set: %+v", i, m)
		}
		fps = append(fps, m.Fingerprint)
		if w.n() != before+1 {
			t.Fatalf("recording document %d made %d Write calls, want 1", i, w.n()-before)
		}
		r, n, err := parseRecord(w.calls[before])
		if err != nil || n != len(w.calls[before]) {
			t.Fatalf("the record of document %d (%d bytes) is not one record of the format: %v", i, len(w.calls[before]), err)
		}
		if !r.add || r.fp != m.Fingerprint || r.url != url(i) {
			t.Errorf("the record of document %d is %+v, want '+' %016x at %s", i, r, m.Fingerprint, url(i))
		}
	}
	before := w.n()
	if m := seen(t, c, "http://copy.test/", strings.ToUpper(s.text(1))); !m.Seen {
		t.Fatalf("a copy of document 1 is new: %+v", m)
	}
	forget(t, c, 0x5eed) // unknown
	if w.n() != before {
		t.Errorf("a duplicate and forgetting an unknown fingerprint made %d Write calls, want none: they change nothing", w.n()-before)
	}
	forget(t, c, fps[2])
	if w.n() != before+1 {
		t.Fatalf("Forget made %d Write calls, want 1", w.n()-before)
	}
	r, n, err := parseRecord(w.calls[before])
	if err != nil || n != len(w.calls[before]) || r.add || r.fp != fps[2] {
		t.Errorf("the record of Forget is %+v (%v), want '-' %016x", r, err, fps[2])
	}
	forget(t, c, fps[2]) // forgotten already
	if w.n() != before+1 {
		t.Errorf("forgetting a forgotten fingerprint made a Write call")
	}
	c.LogTo(nil)
	seen(t, c, url(10), s.text(10))
	forget(t, c, fps[0])
	if w.n() != before+1 {
		t.Errorf("%d Write calls after LogTo(nil)", w.n()-before-1)
	}
}

func (s *durableSuite) testConcurrentLog(t *testing.T) {
	c := s.h.New(t)
	w := &writes{}
	c.LogTo(w)
	const workers, docs = 8, 10
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range docs {
				d := g*docs + i
				if _, err := c.Seen(context.Background(), dedup.Doc{URL: url(d), Text: []byte(s.text(d))}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if w.n() != workers*docs {
		t.Fatalf("%d Write calls for %d documents", w.n(), workers*docs)
	}
	urls := map[string]bool{}
	for i, call := range w.calls {
		r, n, err := parseRecord(call)
		if err != nil || n != len(call) || !r.add {
			t.Fatalf("Write call %d is not one '+' record: %v", i, err)
		}
		urls[r.url] = true
	}
	if len(urls) != workers*docs {
		t.Errorf("the records name %d URLs, want %d", len(urls), workers*docs)
	}
}

// history records documents 0..n-1 into c and forgets those for which
// gone is true; it returns the fingerprints.
func (s *durableSuite) history(t *testing.T, c dedup.ContentSeen, n int, gone func(i int) bool) []uint64 {
	t.Helper()
	var fps []uint64
	for i := range n {
		fps = append(fps, seen(t, c, url(i), s.text(i)).Fingerprint)
	}
	for i, fp := range fps {
		if gone(i) {
			forget(t, c, fp)
		}
	}
	return fps
}

// expect checks c's answers for documents 0..n-1: those for which gone
// is true are new (and recorded now), the others seen at url(i).
func (s *durableSuite) expect(t *testing.T, c dedup.ContentSeen, n int, gone func(i int) bool) {
	t.Helper()
	for i := range n {
		m := seen(t, c, "http://copy.test/", s.text(i))
		if gone(i) {
			if m.Seen {
				t.Errorf("document %d was forgotten, but is seen: %+v", i, m)
			}
			forget(t, c, m.Fingerprint)
		} else if !m.Seen || m.URL != url(i) {
			t.Errorf("document %d: %+v, want seen at %s", i, m, url(i))
		}
	}
}

func (s *durableSuite) testReplay(t *testing.T) {
	if n, err := s.h.New(t).Replay(bytes.NewReader(nil)); n != 0 || err != nil {
		t.Errorf("Replay of an empty log = %d, %v", n, err)
	}
	a := s.h.New(t)
	var log bytes.Buffer
	a.LogTo(&log)
	gone := func(i int) bool { return i%4 == 1 }
	s.history(t, a, 12, gone)
	a.LogTo(nil)
	b := s.h.New(t)
	n, err := b.Replay(bytes.NewReader(log.Bytes()))
	if err != nil || n != int64(log.Len()) {
		t.Fatalf("Replay = %d, %v; want the log's %d bytes", n, err, log.Len())
	}
	if s.h.Near {
		m := seen(t, b, "http://near.test/", s.nearCopy(4))
		if !m.Seen || !m.Near || m.URL != url(4) {
			t.Errorf("a near copy of document 4 after the replay: %+v", m)
		}
	}
	s.expect(t, b, 12, gone)
}

func (s *durableSuite) testReplayFormat(t *testing.T) {
	var log []byte
	for i := range 5 {
		log = append(log, addRecord(dedup.TextFingerprint([]byte(s.text(i))), url(i))...)
	}
	log = append(log, forgetRecord(dedup.TextFingerprint([]byte(s.text(3))))...)
	log = append(log, forgetRecord(0x5eed)...) // an unknown fingerprint
	c := s.h.New(t)
	n, err := c.Replay(bytes.NewReader(log))
	if err != nil || n != int64(len(log)) {
		t.Fatalf("Replay of records written from the format = %d, %v; want %d", n, err, len(log))
	}
	s.expect(t, c, 5, func(i int) bool { return i == 3 })
}

func (s *durableSuite) testTornTail(t *testing.T) {
	a := s.h.New(t)
	w := &writes{}
	a.LogTo(w)
	s.history(t, a, 4, func(i int) bool { return i == 1 })
	full := w.bytes()
	var ends []int // record boundaries
	for _, call := range w.calls {
		ends = append(ends, len(call))
		if k := len(ends); k > 1 {
			ends[k-1] += ends[k-2]
		}
	}
	complete := func(cut int) int {
		n := 0
		for _, e := range ends {
			if e <= cut {
				n = e
			}
		}
		return n
	}
	scratch := s.h.New(t)
	for cut := 0; cut <= len(full); cut++ {
		near := false
		for _, e := range ends {
			near = near || cut >= e-9 && cut <= e+9
		}
		if !near && cut%13 != 0 {
			continue
		}
		n, err := scratch.Replay(bytes.NewReader(full[:cut]))
		if err != nil || n != int64(complete(cut)) {
			t.Fatalf("Replay of the log cut at %d of %d bytes = %d, %v; want %d (its complete records) and no error", cut, len(full), n, err, complete(cut))
		}
	}
	// Cut in the middle of the third record: the first two stand (the
	// second was forgotten by the fourth, which is lost).
	cut := ends[1] + (ends[2]-ends[1])/2
	b := s.h.New(t)
	n, err := b.Replay(bytes.NewReader(full[:cut]))
	if err != nil || n != int64(ends[1]) {
		t.Fatalf("Replay = %d, %v; want %d", n, err, ends[1])
	}
	// Truncate there and append, as a restarted process does.
	log := bytes.NewBuffer(slices.Clone(full[:n]))
	b.LogTo(log)
	seen(t, b, url(9), s.text(9))
	b.LogTo(nil)
	c := s.h.New(t)
	if n, err := c.Replay(bytes.NewReader(log.Bytes())); err != nil || n != int64(log.Len()) {
		t.Fatalf("Replay of the truncated and appended log = %d, %v; want %d", n, err, log.Len())
	}
	s.expect(t, c, 2, func(int) bool { return false })
	if m := seen(t, c, "http://copy.test/", s.text(9)); !m.Seen || m.URL != url(9) {
		t.Errorf("the document appended after the truncation: %+v", m)
	}
	if m := seen(t, c, "http://copy.test/", s.text(2)); m.Seen {
		t.Errorf("the document of the torn record is seen: %+v", m)
	}
}

func (s *durableSuite) testCorrupt(t *testing.T) {
	a := s.h.New(t)
	w := &writes{}
	a.LogTo(w)
	s.history(t, a, 3, func(int) bool { return false })
	full := w.bytes()
	start := len(w.calls[0]) // the second record
	end := start + len(w.calls[1])
	good := addRecord(dedup.TextFingerprint([]byte(s.text(5))), url(5))
	cases := map[string][]byte{}
	for _, at := range []int{start + 4, start + 7, start + 8, start + 9, start + 16, start + 18, end - 1} {
		bad := bytes.Clone(full)
		bad[at] ^= 0x20
		cases[fmt.Sprintf("byte %d of the second record flipped", at-start)] = bad
	}
	withBad := func(payload []byte) []byte {
		return append(append(slices.Clone(full[:start]), frame(payload)...), good...)
	}
	fp := binary.LittleEndian.AppendUint64(nil, 0x5eed)
	cases["unknown record type"] = withBad(append([]byte{'x'}, fp...))
	cases["short payload"] = withBad([]byte{'+', 1, 2})
	cases["'-' with trailing bytes"] = withBad(append(append([]byte{'-'}, fp...), 0))
	cases["URL longer than the payload"] = withBad(append(append([]byte{'+'}, fp...), 50, 'h'))
	cases["missing K"] = withBad(append(append([]byte{'+'}, fp...), 1, 'h'))
	for name, log := range cases {
		n, err := s.h.New(t).Replay(bytes.NewReader(log))
		var e *dedup.Error
		if !errors.Is(err, dedup.ErrCorrupt) || !errors.As(err, &e) {
			t.Errorf("%s: Replay = %d, %v; want a *dedup.Error wrapping ErrCorrupt", name, n, err)
		} else if n > int64(start) {
			t.Errorf("%s: Replay = %d, beyond the %d bytes before the damaged record", name, n, start)
		}
	}
}

func (s *durableSuite) testRewrite(t *testing.T) {
	a := s.h.New(t)
	var old bytes.Buffer
	a.LogTo(&old)
	gone := func(i int) bool { return i < 20 }
	fps := s.history(t, a, 30, gone)
	var compact bytes.Buffer
	if err := a.Rewrite(&compact); err != nil {
		t.Fatal(err)
	}
	recs, err := parseLog(compact.Bytes())
	if err != nil {
		t.Fatalf("the rewritten log is not in the format: %v", err)
	}
	var got []uint64
	for _, r := range recs {
		if !r.add {
			t.Errorf("the rewritten log has a '-' record (%016x)", r.fp)
		}
		got = append(got, r.fp)
	}
	slices.Sort(got)
	live := slices.Sorted(slices.Values(fps[20:]))
	if !slices.Equal(got, live) {
		t.Errorf("the rewritten log has %d records for %d documents recorded and not forgotten", len(got), len(live))
	}
	if compact.Len() >= old.Len() {
		t.Errorf("the rewritten log (%d bytes) is not shorter than the history (%d)", compact.Len(), old.Len())
	}
	before := old.Len()
	seen(t, a, url(40), s.text(40))
	forget(t, a, fps[25])
	if old.Len() != before {
		t.Error("a change after Rewrite went to the old log")
	}
	b := s.h.New(t)
	if n, err := b.Replay(bytes.NewReader(compact.Bytes())); err != nil || n != int64(compact.Len()) {
		t.Fatalf("Replay of the rewritten log = %d, %v; want %d", n, err, compact.Len())
	}
	s.expect(t, b, 30, func(i int) bool { return gone(i) || i == 25 })
	if m := seen(t, b, "http://copy.test/", s.text(40)); !m.Seen || m.URL != url(40) {
		t.Errorf("the document recorded after Rewrite, replayed from the new log: %+v", m)
	}
	if s.h.Near {
		if m := seen(t, b, "http://near.test/", s.nearCopy(22)); !m.Seen || !m.Near || m.URL != url(22) {
			t.Errorf("a near copy of document 22 after the rewrite: %+v", m)
		}
	}
}

// lockedBuffer is a buffer written by the implementation and read by the
// suite.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (s *durableSuite) testRewriteConcurrent(t *testing.T) {
	a := s.h.New(t)
	cur := &lockedBuffer{}
	a.LogTo(cur)
	const docs = 100
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range docs {
			if _, err := a.Seen(context.Background(), dedup.Doc{URL: url(i), Text: []byte(s.text(i))}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 5 {
		next := &lockedBuffer{}
		if err := a.Rewrite(next); err != nil {
			t.Fatal(err)
		}
		cur = next
	}
	wg.Wait()
	cur.mu.Lock()
	log := bytes.Clone(cur.b.Bytes())
	cur.mu.Unlock()
	b := s.h.New(t)
	if n, err := b.Replay(bytes.NewReader(log)); err != nil || n != int64(len(log)) {
		t.Fatalf("Replay of the last log = %d, %v; want %d", n, err, len(log))
	}
	s.expect(t, b, docs, func(int) bool { return false })
}

// failing is a log whose writes fail.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errWrite }

func (s *durableSuite) testWriteErrors(t *testing.T) {
	c := s.h.New(t)
	c.LogTo(failing{})
	ctx := context.Background()
	m, err := c.Seen(ctx, dedup.Doc{URL: url(0), Text: []byte(s.text(0))})
	if !errors.Is(err, errWrite) {
		t.Errorf("Seen whose record could not be written: %v, want an error wrapping the writer's", err)
	}
	if m2 := seen(t, c, "http://copy.test/", s.text(0)); !m2.Seen || m2.URL != url(0) {
		t.Errorf("the document whose record failed is not recorded: %+v", m2)
	}
	fp := dedup.TextFingerprint([]byte(s.text(0)))
	if m.Fingerprint != 0 && m.Fingerprint != fp {
		t.Errorf("Seen with a failed write returned fingerprint %016x, want %016x", m.Fingerprint, fp)
	}
	if err := c.Forget(ctx, fp); !errors.Is(err, errWrite) {
		t.Errorf("Forget whose record could not be written: %v, want an error wrapping the writer's", err)
	}
	c.LogTo(nil)
	if m := seen(t, c, url(1), s.text(0)); m.Seen {
		t.Errorf("the document whose Forget failed to be logged is still seen: %+v", m)
	}
	if err := c.Rewrite(failing{}); !errors.Is(err, errWrite) {
		t.Errorf("Rewrite to a failing writer: %v, want an error wrapping the writer's", err)
	}
}
