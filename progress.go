package crawlkit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/crawlkit/crawlkit/internal/wire"
)

// progress is what the crawler saves with every Txn beside the State's own
// records: the counters of the committed pages, the crawl time of every
// run so far, and the positions of the durable sinks after the last
// committed page.
type progress struct {
	stats     Stats
	positions [][]byte
}

// progressVersion starts every encoded progress; decoding refuses others.
// Version 2 added Backoffs; version 1 records are still read.
const (
	progressVersion   = 2
	progressVersionV1 = 1
)

// ErrCorruptProgress is wrapped by the error Run returns when a State
// holds a progress record it cannot decode.
var ErrCorruptProgress = errors.New("crawlkit: saved progress is corrupt or of another version")

// appendProgress appends the encoding of p to b: a version byte, then
// uvarints and length-prefixed strings. Maps are written in key order, so
// equal progress encodes equally.
func appendProgress(b []byte, p *progress) []byte {
	s := &p.stats
	b = append(b, progressVersion)
	b = binary.AppendUvarint(b, uint64(len(s.Outcomes)))
	for _, n := range s.Outcomes {
		b = binary.AppendUvarint(b, n)
	}
	for _, n := range []uint64{s.Seeds, s.Links, s.Received, uint64(max(s.Bytes, 0)), uint64(max(s.Hosts, 0)), uint64(max(s.Elapsed, 0)),
		s.LinksDropped, s.PagesLinkCapped} {
		b = binary.AppendUvarint(b, n)
	}
	b = appendCounts(b, s.FilteredBy)
	b = appendCounts(b, s.Errors)
	codes := make([]int, 0, len(s.Status))
	for c := range s.Status {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	b = binary.AppendUvarint(b, uint64(len(codes)))
	for _, c := range codes {
		b = binary.AppendVarint(b, int64(c))
		b = binary.AppendUvarint(b, s.Status[c])
	}
	b = binary.AppendUvarint(b, uint64(len(p.positions)))
	for _, pos := range p.positions {
		b = binary.AppendUvarint(b, uint64(len(pos)))
		b = append(b, pos...)
	}
	return binary.AppendUvarint(b, s.Backoffs)
}

func appendCounts(b []byte, m map[string]uint64) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, m[k])
	}
	return b
}

// decodeProgress decodes what appendProgress wrote. Malformed input is an
// error wrapping ErrCorruptProgress, never a panic or an allocation beyond
// the input's size.
func decodeProgress(b []byte) (*progress, error) {
	d := pdec{wire.Decoder{B: b}}
	version := d.Byte()
	if version != progressVersion && version != progressVersionV1 {
		return nil, fmt.Errorf("%w (version)", ErrCorruptProgress)
	}
	p := &progress{}
	s := &p.stats
	n := d.Count(1)
	for i := range n {
		v := d.Uvarint()
		if i < len(s.Outcomes) {
			s.Outcomes[i] = v
		}
	}
	s.Seeds, s.Links, s.Received = d.Uvarint(), d.Uvarint(), d.Uvarint()
	bytes, hosts, elapsed := d.Uvarint(), d.Uvarint(), d.Uvarint()
	if bytes > math.MaxInt64 || hosts > math.MaxInt32 || elapsed > math.MaxInt64 {
		d.Bad = true
	}
	s.Bytes, s.Hosts, s.Elapsed = int64(bytes), int(hosts), time.Duration(elapsed)
	s.LinksDropped, s.PagesLinkCapped = d.Uvarint(), d.Uvarint()
	s.FilteredBy = d.counts()
	s.Errors = d.counts()
	n = d.Count(2)
	s.Status = make(map[int]uint64, n)
	for range n {
		c := d.Varint()
		if c < 0 || c > 999 {
			d.Bad = true
		}
		s.Status[int(c)] = d.Uvarint()
	}
	n = d.Count(1)
	for range n {
		p.positions = append(p.positions, d.bytes())
	}
	if version >= 2 {
		s.Backoffs = d.Uvarint()
	}
	if !d.Done() {
		return nil, ErrCorruptProgress
	}
	return p, nil
}

// pdec reads a progress record: a wire.Decoder with its maps.
type pdec struct{ wire.Decoder }

// bytes reads a byte string, copied out of the record.
func (d *pdec) bytes() []byte { return append([]byte(nil), d.Bytes(math.MaxInt)...) }

func (d *pdec) counts() map[string]uint64 {
	n := d.Count(2)
	m := make(map[string]uint64, n)
	for range n {
		k := d.bytes()
		m[string(k)] = d.Uvarint()
	}
	return m
}
