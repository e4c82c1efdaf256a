package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"slices"
)

// File format, version 1 (all integers little-endian or uvarint):
//
//	magic "CKIX" | version u16 | flags u16 (0) | body length u64
//	body: documents: count, then per document url, title, length, deleted (0/1)
//	      terms: count, then per term (ascending) the term and its posting list
//	      (count, first id, id gaps, frequencies)
//	CRC-32C (Castagnoli) of everything before it, u32
//
// Derived data (URL map, deletions bitmap, pruning bounds, statistics) is
// rebuilt on reading, and every document length is checked against the
// sum of its term frequencies.
const (
	fileMagic   = "CKIX"
	fileVersion = 1
	headerSize  = 16
	// maxBody bounds the announced body size (1 TiB) to reject absurd
	// headers early; the body is read incrementally, so a truncated file
	// never causes a large allocation.
	maxBody = 1 << 40
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes the shard in the versioned, checksummed file format. The
// shard is read-locked meanwhile and the encoding is built in memory first
// (about the size of the file). Terms are written in ascending order, so
// equal shards produce equal files.
func (s *Shard) WriteTo(w io.Writer) (int64, error) {
	s.rlockSealed()
	e := enc{b: make([]byte, headerSize, headerSize+64*len(s.docs))}
	e.uvarint(uint64(len(s.docs)))
	for id, d := range s.docs {
		e.str(d.url)
		e.str(d.title)
		e.uvarint(uint64(d.len))
		if s.deleted.Contains(uint32(id)) {
			e.byte1(1)
		} else {
			e.byte1(0)
		}
	}
	terms := slices.Sorted(maps.Keys(s.dict))
	e.uvarint(uint64(len(terms)))
	for _, t := range terms {
		e.str(t)
		pl := s.dict[t]
		e.postings(pl.docs, pl.count(), pl.freq)
	}
	s.mu.RUnlock()
	b := e.b
	copy(b, fileMagic)
	binary.LittleEndian.PutUint16(b[4:], fileVersion)
	binary.LittleEndian.PutUint16(b[6:], 0)
	binary.LittleEndian.PutUint64(b[8:], uint64(len(b)-headerSize))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	n, err := w.Write(b)
	if err != nil {
		return int64(n), &Error{Op: "write", Err: err}
	}
	return int64(n), nil
}

func corrupt(section string, err error) error {
	return &Error{Op: "read", Subject: section, Err: fmt.Errorf("%w: %v", ErrCorrupt, err)}
}

// ReadFrom replaces the shard's contents with an index read from r (written
// by WriteTo), keeping the shard's analyzer and BM25 parameters. Any damage —
// bad magic, unknown version, truncation, checksum mismatch, inconsistent
// contents — returns an error wrapping ErrCorrupt or ErrVersion and leaves
// the shard unchanged. It reads exactly one index from r.
func (s *Shard) ReadFrom(r io.Reader) (int64, error) {
	var hdr [headerSize]byte
	n, err := io.ReadFull(r, hdr[:])
	read := int64(n)
	if err != nil {
		return read, corrupt("header", err)
	}
	if string(hdr[:4]) != fileMagic {
		return read, corrupt("header", errors.New("bad magic"))
	}
	if v := binary.LittleEndian.Uint16(hdr[4:]); v != fileVersion {
		return read, &Error{Op: "read", Subject: "header", Err: fmt.Errorf("%w: %d", ErrVersion, v)}
	}
	if binary.LittleEndian.Uint16(hdr[6:]) != 0 {
		return read, corrupt("header", errors.New("unknown flags"))
	}
	bodyLen := binary.LittleEndian.Uint64(hdr[8:])
	if bodyLen > maxBody {
		return read, corrupt("header", errors.New("body too large"))
	}
	var buf bytes.Buffer
	buf.Write(hdr[:])
	m, err := io.CopyN(&buf, r, int64(bodyLen)+4)
	read += m
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return read, corrupt("body", err)
	}
	all := buf.Bytes()
	body, sum := all[:len(all)-4], binary.LittleEndian.Uint32(all[len(all)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return read, corrupt("checksum", errors.New("CRC-32C mismatch"))
	}
	st, err := decodeShard(body[headerSize:])
	if err != nil {
		return read, err
	}
	s.mu.Lock()
	s.dict, s.docTable = st.dict, st.docTable
	s.dirty = nil
	s.mu.Unlock()
	return read, nil
}

type shardData struct {
	dict map[string]*postingList
	docTable
}

func decodeShard(body []byte) (*shardData, error) {
	d := &dec{b: body}
	nd := d.count(4) // url length, title length, length, flag
	if d.err != nil {
		return nil, corrupt("documents", d.err)
	}
	if uint64(nd) >= uint64(^uint32(0)) {
		return nil, corrupt("documents", errors.New("too many documents"))
	}
	st := &shardData{dict: make(map[string]*postingList), docTable: newDocTable()}
	st.docs = make([]docEntry, nd)
	for id := range st.docs {
		de := docEntry{url: d.str(), title: d.str()}
		l := d.uvarint()
		del := d.byte1()
		if d.err != nil {
			return nil, corrupt("documents", d.err)
		}
		if l > uint64(^uint32(0)) || del > 1 || de.url == "" {
			return nil, corrupt("documents", fmt.Errorf("bad document %d", id))
		}
		de.len = uint32(l)
		if !st.load(id, de, del == 1) {
			return nil, corrupt("documents", fmt.Errorf("duplicate URL %q", de.url))
		}
	}
	nt := d.count(4) // term length, term byte, count, id
	if d.err != nil {
		return nil, corrupt("terms", d.err)
	}
	sums := make([]uint64, nd)
	lens := func(id uint32) uint32 { return st.docs[id].len }
	prev := ""
	for i := range nt {
		t := d.str()
		if d.err == nil && (t == "" || (i > 0 && t <= prev) || !validString(t)) {
			return nil, corrupt("terms", fmt.Errorf("bad or unordered term %q", t))
		}
		prev = t
		pl := d.postings(uint64(nd), lens)
		if d.err != nil {
			return nil, corrupt("terms", fmt.Errorf("term %q: %v", t, d.err))
		}
		it := pl.docs.Iterator()
		for j := 0; it.HasNext(); j++ {
			sums[it.Next()] += uint64(pl.freq(j))
		}
		st.dict[t] = pl
	}
	if len(d.b) != 0 {
		return nil, corrupt("terms", errors.New("trailing bytes"))
	}
	for id, sum := range sums {
		if sum != uint64(st.docs[id].len) {
			return nil, corrupt("documents", fmt.Errorf("document %d: length %d, postings say %d", id, st.docs[id].len, sum))
		}
	}
	return st, nil
}
