package crawldb

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/internal/wire"
)

// txnVersion starts every encoded Txn. Version 1 had no Pages and
// Alike in its key deltas, version 2 no Rules, version 3 no Backoff;
// all are still read.
const (
	txnVersion   = 4
	txnVersionV3 = 3
	txnVersionV2 = 2
	txnVersionV1 = 1
)

// maxItem bounds one length-prefixed item of a record, so that a corrupt
// length cannot make a reader allocate without limit.
const maxItem = 1 << 24

// appendTxn appends the encoding of seq and t to b: the version, the
// sequence number, then each list as a count and its items.
func appendTxn(b []byte, seq uint64, t *crawlkit.Txn) ([]byte, error) {
	b = append(b, txnVersion)
	b = binary.AppendUvarint(b, seq)
	var err error
	for _, list := range [][]crawlkit.Pending{t.Add, t.Put} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for i := range list {
			if b, err = appendPendingItem(b, &list[i]); err != nil {
				return b, err
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(len(t.Done)))
	for _, u := range t.Done {
		b = appendString(b, u)
	}
	b = binary.AppendUvarint(b, uint64(len(t.Keys)))
	for _, d := range t.Keys {
		b = appendString(b, d.Key)
		b = binary.AppendVarint(b, d.Admitted)
		b = binary.AppendVarint(b, unixNano(d.Next))
		b = binary.AppendVarint(b, int64(d.Gap))
		b = binary.AppendVarint(b, d.Pages)
		b = binary.AppendVarint(b, d.Alike)
		if d.Backoff == nil {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			b = appendBackoff(b, *d.Backoff)
		}
	}
	for _, opt := range [][]byte{t.Progress, t.Rules} {
		if opt == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = appendString(b, string(opt))
	}
	return b, nil
}

// appendPendingItem appends a pending record, length-prefixed.
func appendPendingItem(b []byte, p *crawlkit.Pending) ([]byte, error) {
	v, err := appendPending(nil, p)
	if err != nil {
		return b, err
	}
	return appendString(b, string(v)), nil
}

// parkedFlag, added to the retries of a pending record, says that the
// URL it is parked on follows them. Records written before parking
// existed have retries below it, and read as before.
const parkedFlag = 1 << 40

// appendPending appends the value of a pending record: the retries (with
// parkedFlag and the Parked URL when there is one), then the frontier
// entry's binary encoding (without Anchor and Source).
func appendPending(b []byte, p *crawlkit.Pending) ([]byte, error) {
	u := p.URL
	u.Anchor, u.Source = "", ""
	r := uint64(min(max(p.Retries, 0), math.MaxInt32))
	if p.Parked == "" {
		b = binary.AppendUvarint(b, r)
	} else {
		b = binary.AppendUvarint(b, r+parkedFlag)
		b = appendString(b, p.Parked)
	}
	return u.AppendBinary(b)
}

// decodePending decodes what appendPending wrote.
func decodePending(v []byte) (crawlkit.Pending, error) {
	d := wire.Decoder{B: v}
	r := d.Uvarint()
	var parked string
	flagged := r >= parkedFlag
	if flagged {
		r -= parkedFlag
		parked = string(d.Bytes(maxItem))
	}
	var u frontier.URL
	if d.Bad || r > math.MaxInt32 || flagged && parked == "" || u.UnmarshalBinary(d.B) != nil {
		return crawlkit.Pending{}, fmt.Errorf("%w: pending record", ErrCorrupt)
	}
	return crawlkit.Pending{URL: u, Retries: int(r), Parked: parked}, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// decodeTxn decodes what appendTxn wrote. Malformed input is an error
// wrapping ErrCorrupt, never a panic.
func decodeTxn(b []byte) (uint64, *crawlkit.Txn, error) {
	d := wire.Decoder{B: b}
	version := d.Byte()
	if version < txnVersionV1 || version > txnVersion {
		return 0, nil, fmt.Errorf("%w: commit record version", ErrCorrupt)
	}
	seq := d.Uvarint()
	t := &crawlkit.Txn{}
	for _, list := range []*[]crawlkit.Pending{&t.Add, &t.Put} {
		n := d.Count(1)
		for range n {
			p, err := decodePending(d.Bytes(maxItem))
			if err != nil {
				return 0, nil, err
			}
			*list = append(*list, p)
		}
	}
	n := d.Count(1)
	for range n {
		t.Done = append(t.Done, string(d.Bytes(maxItem)))
	}
	n = d.Count(1)
	for range n {
		k := string(d.Bytes(maxItem))
		kd := crawlkit.KeyDelta{Key: k, Admitted: d.Varint(), Next: fromUnixNano(d.Varint()), Gap: time.Duration(d.Varint())}
		if version >= txnVersionV2 {
			kd.Pages, kd.Alike = d.Varint(), d.Varint()
		}
		if version >= txnVersion {
			switch d.Byte() {
			case 0:
			case 1:
				bo := decodeBackoff(&d)
				kd.Backoff = &bo
			default:
				d.Bad = true
			}
		}
		t.Keys = append(t.Keys, kd)
	}
	opts := []*[]byte{&t.Progress, &t.Rules}
	if version < txnVersionV3 {
		opts = opts[:1]
	}
	for _, opt := range opts {
		switch d.Byte() {
		case 0:
		case 1:
			*opt = append([]byte{}, d.Bytes(maxItem)...)
		default:
			d.Bad = true
		}
	}
	if !d.Done() {
		return 0, nil, fmt.Errorf("%w: commit record", ErrCorrupt)
	}
	return seq, t, nil
}

// appendKeyRecord appends the value of a key record: Admitted, Next in
// Unix nanoseconds (0 for unknown), Gap in nanoseconds, then Pages and
// Alike when they or the back-off state are not zero, then the back-off
// state when it is not zero (a record without them reads as zeros, as
// records written before they existed do).
func appendKeyRecord(b []byte, r crawlkit.KeyRecord) []byte {
	b = binary.AppendVarint(b, r.Admitted)
	b = binary.AppendVarint(b, unixNano(r.Next))
	b = binary.AppendVarint(b, int64(r.Gap))
	noBackoff := r.Backoff == crawlkit.Backoff{}
	if r.Pages == 0 && r.Alike == 0 && noBackoff {
		return b
	}
	b = binary.AppendVarint(b, r.Pages)
	b = binary.AppendVarint(b, r.Alike)
	if noBackoff {
		return b
	}
	return appendBackoff(b, r.Backoff)
}

// appendBackoff appends a back-off state: Level, Failures, Last.
func appendBackoff(b []byte, bo crawlkit.Backoff) []byte {
	b = binary.AppendVarint(b, int64(bo.Level))
	b = binary.AppendVarint(b, int64(bo.Failures))
	return binary.AppendVarint(b, unixNano(bo.Last))
}

func decodeBackoff(d *wire.Decoder) crawlkit.Backoff {
	level, failures := d.Varint(), d.Varint()
	bo := crawlkit.Backoff{Level: int32(level), Failures: int32(failures), Last: fromUnixNano(d.Varint())}
	if level < 0 || level > math.MaxInt32 || failures < 0 || failures > math.MaxInt32 {
		d.Bad = true
	}
	return bo
}

func decodeKeyRecord(v []byte) (crawlkit.KeyRecord, error) {
	d := wire.Decoder{B: v}
	r := crawlkit.KeyRecord{Admitted: d.Varint(), Next: fromUnixNano(d.Varint()), Gap: time.Duration(d.Varint())}
	if len(d.B) > 0 {
		r.Pages, r.Alike = d.Varint(), d.Varint()
	}
	if len(d.B) > 0 {
		r.Backoff = decodeBackoff(&d)
	}
	if !d.Done() {
		return crawlkit.KeyRecord{}, fmt.Errorf("%w: key record", ErrCorrupt)
	}
	return r, nil
}
