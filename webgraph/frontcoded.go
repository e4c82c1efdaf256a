package webgraph

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// FrontCodedList is an immutable list of strings stored with front coding:
// strings are grouped in buckets of BucketSize; the first string of a
// bucket is stored whole, each other one as the length of the prefix it
// shares with its predecessor plus the rest. Sorted lists of URLs shrink to
// a fraction of their size, and Get costs decoding at most one bucket.
//
// A FrontCodedList is safe for concurrent use.
type FrontCodedList struct {
	data   []byte
	bucket []uint64 // byte offset of each bucket in data
	n      int
	k      int
}

// DefaultBucketSize is the bucket size used by FrontCodedWriter by default.
const DefaultBucketSize = 16

const fcMagic = "CKFC1\n"

// FrontCodedWriter streams strings into the on-disk front-coded format:
// magic, then the coded strings, then the bucket index and a trailer. Only
// the bucket index (8 bytes per bucket) is held in memory.
type FrontCodedWriter struct {
	w      *bufio.Writer
	k      int
	n      int
	prev   []byte
	off    uint64
	bucket []uint64
	err    error
}

// NewFrontCodedWriter returns a writer with buckets of k strings (0 means
// DefaultBucketSize).
func NewFrontCodedWriter(w io.Writer, k int) *FrontCodedWriter {
	if k <= 0 {
		k = DefaultBucketSize
	}
	fw := &FrontCodedWriter{w: bufio.NewWriter(w), k: k}
	fw.write([]byte(fcMagic))
	return fw
}

func (fw *FrontCodedWriter) write(p []byte) {
	if fw.err != nil {
		return
	}
	_, fw.err = fw.w.Write(p)
	fw.off += uint64(len(p))
}

func (fw *FrontCodedWriter) uvarint(v uint64) {
	var tmp [binary.MaxVarintLen64]byte
	fw.write(tmp[:binary.PutUvarint(tmp[:], v)])
}

// Add appends s.
func (fw *FrontCodedWriter) Add(s string) error {
	if fw.n%fw.k == 0 {
		fw.bucket = append(fw.bucket, fw.off)
		fw.uvarint(uint64(len(s)))
		fw.write([]byte(s))
	} else {
		c := 0
		for c < len(s) && c < len(fw.prev) && s[c] == fw.prev[c] {
			c++
		}
		fw.uvarint(uint64(c))
		fw.uvarint(uint64(len(s) - c))
		fw.write([]byte(s[c:]))
	}
	fw.prev = append(fw.prev[:0], s...)
	fw.n++
	return fw.err
}

// Close writes the index and trailer and flushes; it does not close the
// underlying writer.
func (fw *FrontCodedWriter) Close() error {
	idx := fw.off
	var tmp [8]byte
	for _, b := range fw.bucket {
		binary.BigEndian.PutUint64(tmp[:], b)
		fw.write(tmp[:])
	}
	for _, v := range []uint64{idx, uint64(fw.n), uint64(fw.k)} {
		binary.BigEndian.PutUint64(tmp[:], v)
		fw.write(tmp[:])
	}
	if fw.err != nil {
		return fw.err
	}
	return fw.w.Flush()
}

// NewFrontCodedList parses the format written by FrontCodedWriter. The
// slice is retained. The index is validated; string data is validated
// lazily by Get, which reports ErrFormat on corruption.
func NewFrontCodedList(p []byte) (*FrontCodedList, error) {
	if len(p) < len(fcMagic)+24 || string(p[:len(fcMagic)]) != fcMagic {
		return nil, formatErr("not a front-coded list")
	}
	t := p[len(p)-24:]
	idx := binary.BigEndian.Uint64(t)
	n := binary.BigEndian.Uint64(t[8:])
	k := binary.BigEndian.Uint64(t[16:])
	if k == 0 || k > 1<<20 || n > uint64(len(p)) || idx < uint64(len(fcMagic)) || idx > uint64(len(p)-24) {
		return nil, formatErr("front-coded list trailer")
	}
	nb := (n + k - 1) / k
	if (uint64(len(p))-24-idx)/8 != nb || (uint64(len(p))-24-idx)%8 != 0 {
		return nil, formatErr("front-coded list index size")
	}
	l := &FrontCodedList{data: p[:idx], n: int(n), k: int(k), bucket: make([]uint64, nb)}
	prev := uint64(len(fcMagic))
	for i := range l.bucket {
		b := binary.BigEndian.Uint64(p[idx+uint64(i)*8:])
		if b < prev || b >= idx {
			return nil, formatErr("front-coded list index")
		}
		l.bucket[i], prev = b, b
	}
	return l, nil
}

// Len returns the number of strings.
func (l *FrontCodedList) Len() int { return l.n }

// SizeBytes returns the memory held, in bytes.
func (l *FrontCodedList) SizeBytes() int { return len(l.data) + 8*len(l.bucket) }

// head decodes the first string of bucket b into buf.
func (l *FrontCodedList) head(b int, buf []byte) ([]byte, int, error) {
	pos := l.bucket[b]
	ln, m := binary.Uvarint(l.data[pos:])
	if m <= 0 || ln > uint64(len(l.data))-pos-uint64(m) {
		return buf, 0, formatErr("front-coded string")
	}
	start := pos + uint64(m)
	return append(buf[:0], l.data[start:start+ln]...), int(start + ln), nil
}

// next decodes the string at pos following prev (held in buf).
func (l *FrontCodedList) next(pos int, buf []byte) ([]byte, int, error) {
	c, m := binary.Uvarint(l.data[pos:])
	if m <= 0 || c > uint64(len(buf)) {
		return buf, 0, formatErr("front-coded prefix")
	}
	pos += m
	s, m2 := binary.Uvarint(l.data[pos:])
	if m2 <= 0 || s > uint64(len(l.data)-pos-m2) {
		return buf, 0, formatErr("front-coded suffix")
	}
	pos += m2
	buf = append(buf[:c], l.data[pos:pos+int(s)]...)
	return buf, pos + int(s), nil
}

// AppendString appends string i to buf. Cost: decoding up to BucketSize
// strings.
func (l *FrontCodedList) AppendString(buf []byte, i int) ([]byte, error) {
	if i < 0 || i >= l.n {
		return buf, fmt.Errorf("%w: string %d of %d", ErrNodeRange, i, l.n)
	}
	b := i / l.k
	s, pos, err := l.head(b, nil)
	if err != nil {
		return buf, err
	}
	for j := b * l.k; j < i; j++ {
		if s, pos, err = l.next(pos, s); err != nil {
			return buf, err
		}
	}
	return append(buf, s...), nil
}

// Get returns string i.
func (l *FrontCodedList) Get(i int) (string, error) {
	b, err := l.AppendString(nil, i)
	return string(b), err
}

// search returns the index of s, or -1. cmpHead(b, head) compares the head
// string of bucket b with s in the list's order.
func (l *FrontCodedList) search(s string, cmpHead func(b int, head []byte) int) (int, error) {
	// Last bucket whose head is ≤ s.
	lo, hi := 0, len(l.bucket)
	var buf []byte
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		h, _, err := l.head(mid, buf[:0])
		if err != nil {
			return -1, err
		}
		buf = h
		if cmpHead(mid, h) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	b := lo - 1
	if b < 0 {
		return -1, nil
	}
	h, pos, err := l.head(b, buf[:0])
	if err != nil {
		return -1, err
	}
	if string(h) == s {
		return b * l.k, nil
	}
	end := min(l.n, (b+1)*l.k)
	for j := b*l.k + 1; j < end; j++ {
		if h, pos, err = l.next(pos, h); err != nil {
			return -1, err
		}
		if string(h) == s {
			return j, nil
		}
	}
	return -1, nil
}
