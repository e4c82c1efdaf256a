package shingle

import (
	"encoding/binary"
	"math/bits"
)

// This file holds one-shot, seeded XXH64 (the algorithm of
// github.com/cespare/xxhash/v2, which the tests use as the reference) in the
// two shapes the sketches need without allocating: over bytes (tokens) and
// over a sequence of 64-bit words taken as their little-endian encoding
// (shingles). cespare/xxhash only offers a seeded streaming Digest, whose
// per-call overhead would dominate hashing 4-word shingles.

const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

func round(acc, input uint64) uint64 {
	acc += input * prime2
	acc = bits.RotateLeft64(acc, 31)
	acc *= prime1
	return acc
}

func mergeRound(acc, val uint64) uint64 {
	val = round(0, val)
	acc ^= val
	acc = acc*prime1 + prime4
	return acc
}

func avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// xxh64 returns XXH64(seed, b).
func xxh64(b []byte, seed uint64) uint64 {
	n := len(b)
	var h uint64
	if n >= 32 {
		v1 := seed + prime1 + prime2
		v2 := seed + prime2
		v3 := seed
		v4 := seed - prime1
		for len(b) >= 32 {
			v1 = round(v1, binary.LittleEndian.Uint64(b[0:8]))
			v2 = round(v2, binary.LittleEndian.Uint64(b[8:16]))
			v3 = round(v3, binary.LittleEndian.Uint64(b[16:24]))
			v4 = round(v4, binary.LittleEndian.Uint64(b[24:32]))
			b = b[32:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = mergeRound(h, v1)
		h = mergeRound(h, v2)
		h = mergeRound(h, v3)
		h = mergeRound(h, v4)
	} else {
		h = seed + prime5
	}
	h += uint64(n)
	for ; len(b) >= 8; b = b[8:] {
		k1 := round(0, binary.LittleEndian.Uint64(b[:8]))
		h ^= k1
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b[:4])) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * prime5
		h = bits.RotateLeft64(h, 11) * prime1
	}
	return avalanche(h)
}

// xxh64Words returns XXH64(seed, LE64(w[0]) || LE64(w[1]) || ...), the hash
// of the words' little-endian byte encoding, without serialising them.
func xxh64Words(w []uint64, seed uint64) uint64 {
	n := len(w) * 8
	var h uint64
	if len(w) >= 4 {
		v1 := seed + prime1 + prime2
		v2 := seed + prime2
		v3 := seed
		v4 := seed - prime1
		for len(w) >= 4 {
			v1 = round(v1, w[0])
			v2 = round(v2, w[1])
			v3 = round(v3, w[2])
			v4 = round(v4, w[3])
			w = w[4:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = mergeRound(h, v1)
		h = mergeRound(h, v2)
		h = mergeRound(h, v3)
		h = mergeRound(h, v4)
	} else {
		h = seed + prime5
	}
	h += uint64(n)
	for _, x := range w {
		h ^= round(0, x)
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
	}
	return avalanche(h)
}

// xxh64Words4 returns XXH64(seed, LE64(a) || LE64(b) || LE64(c) ||
// LE64(d)): xxh64Words for exactly four words, straight-line code for
// the hash of a 4-shingle.
func xxh64Words4(a, b, c, d, seed uint64) uint64 {
	return xxh64Words4Premul(a*prime2, b*prime2, c*prime2, d*prime2, seed)
}

// xxh64Words4Premul is xxh64Words4 given a·prime2, b·prime2, c·prime2 and
// d·prime2 (mod 2^64): a word's product, the first step of round, is
// shared by the w shingles that hold the word.
func xxh64Words4Premul(a, b, c, d, seed uint64) uint64 {
	v1 := bits.RotateLeft64(seed+prime1+prime2+a, 31) * prime1
	v2 := bits.RotateLeft64(seed+prime2+b, 31) * prime1
	v3 := bits.RotateLeft64(seed+c, 31) * prime1
	v4 := bits.RotateLeft64(seed-prime1+d, 31) * prime1
	h := bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
	h = mergeRound(h, v1)
	h = mergeRound(h, v2)
	h = mergeRound(h, v3)
	h = mergeRound(h, v4)
	return avalanche(h + 32)
}

// xxh64Upto16 returns XXH64(seed, b) for 8 ≤ len(b) = n < 16, the bytes
// given as two little-endian words: b[:8] in x0 and b[8:] in the low
// bytes of x1 (its other bytes zero).
func xxh64Upto16(x0, x1 uint64, n int, seed uint64) uint64 {
	h := seed + prime5 + uint64(n)
	h ^= round(0, x0)
	h = bits.RotateLeft64(h, 27)*prime1 + prime4
	n -= 8
	if n >= 4 {
		h ^= (x1 & 0xffffffff) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
		x1 >>= 32
		n -= 4
	}
	for ; n > 0; n-- {
		h ^= (x1 & 0xff) * prime5
		h = bits.RotateLeft64(h, 11) * prime1
		x1 >>= 8
	}
	return avalanche(h)
}

// xxh64Word returns XXH64(seed, LE64(x)).
func xxh64Word(x, seed uint64) uint64 {
	h := seed + prime5 + 8
	h ^= round(0, x)
	h = bits.RotateLeft64(h, 27)*prime1 + prime4
	return avalanche(h)
}
