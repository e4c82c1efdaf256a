package pebblecontent

import (
	"encoding/binary"
	"fmt"

	"github.com/crawlkit/crawlkit/shingle"
)

// Key layout, every key after the store's prefix P:
//
//	P 'm'                                  → meta: the options the store was created with
//	P 'd' fp(8)                            → doc: version, uvarint URL length, URL, packed signature
//	P 'b' band(2) hash(8) slot(4)          → fp(8): one member of an LSH bucket
//
// Integers are big-endian in keys (so a bucket's slots sort together) and
// values. A bucket (one band's hash) holds its members in slots 0..n-1,
// kept dense by Forget (the last member moves into the freed slot), so
// that the question "is the bucket empty?" is a point lookup of slot 0,
// answered by the bloom filters like the exact-fingerprint lookup, with
// any key comparer; only a bucket found non-empty is scanned.
const (
	tagMeta   = 'm'
	tagDoc    = 'd'
	tagBucket = 'b'

	docVersion  = 1
	metaVersion = 1

	bucketKeyLen = 1 + 2 + 8 + 4 // after the prefix
)

func docKey(dst []byte, prefix string, fp uint64) []byte {
	dst = append(append(dst[:0], prefix...), tagDoc)
	return binary.BigEndian.AppendUint64(dst, fp)
}

// bucketKey returns the key of a bucket's slot.
func bucketKey(dst []byte, prefix string, band int, hash uint64, slot uint32) []byte {
	dst = append(append(dst[:0], prefix...), tagBucket)
	dst = binary.BigEndian.AppendUint16(dst, uint16(band))
	dst = binary.BigEndian.AppendUint64(dst, hash)
	return binary.BigEndian.AppendUint32(dst, slot)
}

// bucketUpper returns a bound above every slot key of the bucket of the
// slot key lower.
func bucketUpper(dst, lower []byte) []byte {
	dst = append(dst[:0], lower[:len(lower)-4]...)
	return append(dst, 0xff, 0xff, 0xff, 0xff, 0xff)
}

// getSlot returns the slot of a bucket key.
func getSlot(key []byte) uint32 { return binary.BigEndian.Uint32(key[len(key)-4:]) }

// putFP stores a bucket member's fingerprint in b[:8].
func putFP(b []byte, fp uint64) { binary.BigEndian.PutUint64(b, fp) }

func metaKey(prefix string) []byte { return append([]byte(prefix), tagMeta) }

// appendDoc appends the value of a document record: the version, the URL
// (uvarint length, bytes) and the packed signature (empty for an
// exact-only record).
func appendDoc(dst []byte, url string, packed []byte) []byte {
	dst = append(dst, docVersion)
	dst = binary.AppendUvarint(dst, uint64(len(url)))
	dst = append(dst, url...)
	return append(dst, packed...)
}

// decodeDoc splits a document record into its URL and packed signature,
// which alias v. A signature must be sigLen bytes long, or absent (a
// record of Record, or of an exact-only store, whose sigLen is 0).
func decodeDoc(v []byte, sigLen int) (url, packed []byte, err error) {
	if len(v) < 2 || v[0] != docVersion {
		return nil, nil, fmt.Errorf("%w: document header", ErrCorrupt)
	}
	n, k := binary.Uvarint(v[1:])
	if k <= 0 || k != uvarintLen(n) || n > uint64(len(v)-1-k) {
		return nil, nil, fmt.Errorf("%w: document URL length", ErrCorrupt)
	}
	url, packed = v[1+k:1+k+int(n)], v[1+k+int(n):]
	if len(packed) != 0 && len(packed) != sigLen {
		return nil, nil, fmt.Errorf("%w: signature of %d bytes, want %d", ErrCorrupt, len(packed), sigLen)
	}
	return url, packed, nil
}

// decodeSlot decodes a bucket member.
func decodeSlot(v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: bucket member of %d bytes", ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// meta is what a store must be reopened with: signatures and band keys
// made with other values would not compare.
type meta struct {
	exactOnly   bool
	k, w        int
	seed        uint64
	method      shingle.Method
	bands, rows int
	bits        int
}

// appendMeta encodes m: the version, a mode byte ('x' exact only, 'n'
// near-duplicates) and, for 'n', K, W, the seed, the method, the bands,
// the rows and the bits (uvarints, the seed 8 bytes).
func appendMeta(dst []byte, m meta) []byte {
	if m.exactOnly {
		return append(dst, metaVersion, 'x')
	}
	dst = append(dst, metaVersion, 'n')
	dst = binary.AppendUvarint(dst, uint64(m.k))
	dst = binary.AppendUvarint(dst, uint64(m.w))
	dst = binary.BigEndian.AppendUint64(dst, m.seed)
	dst = binary.AppendUvarint(dst, uint64(m.method))
	dst = binary.AppendUvarint(dst, uint64(m.bands))
	dst = binary.AppendUvarint(dst, uint64(m.rows))
	return binary.AppendUvarint(dst, uint64(m.bits))
}

// decodeMeta decodes a value written by appendMeta.
func decodeMeta(v []byte) (meta, error) {
	var m meta
	if len(v) < 2 || v[0] != metaVersion {
		return m, fmt.Errorf("%w: meta header", ErrCorrupt)
	}
	switch v[1] {
	case 'x':
		if len(v) != 2 {
			return m, fmt.Errorf("%w: meta length", ErrCorrupt)
		}
		m.exactOnly = true
		return m, nil
	case 'n':
	default:
		return m, fmt.Errorf("%w: meta mode %q", ErrCorrupt, v[1])
	}
	p := v[2:]
	next := func(limit uint64) int {
		x, k := binary.Uvarint(p)
		if k <= 0 || k != uvarintLen(x) || x > limit {
			p = nil
			return -1
		}
		p = p[k:]
		return int(x)
	}
	if m.k, m.w = next(shingle.MaxK), next(shingle.MaxW); m.k < 0 || m.w < 0 || len(p) < 8 {
		return m, fmt.Errorf("%w: meta", ErrCorrupt)
	}
	m.seed, p = binary.BigEndian.Uint64(p), p[8:]
	method := next(1)
	m.bands, m.rows, m.bits = next(shingle.MaxK), next(shingle.MaxK), next(64)
	if method < 0 || m.bands < 0 || m.rows < 0 || m.bits < 0 || len(p) != 0 {
		return m, fmt.Errorf("%w: meta", ErrCorrupt)
	}
	m.method = shingle.Method(method)
	return m, nil
}

// uvarintLen is the length of x's shortest uvarint encoding; longer ones
// are rejected so that every value has one encoding.
func uvarintLen(x uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], x)
}

func (m meta) String() string {
	if m.exactOnly {
		return "exact only"
	}
	return fmt.Sprintf("K=%d W=%d seed=%d method=%v bands=%d rows=%d bits=%d", m.k, m.w, m.seed, m.method, m.bands, m.rows, m.bits)
}
