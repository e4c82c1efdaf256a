// Package shingle finds near-duplicate texts: word shingles, MinHash
// sketches, locality-sensitive hashing and simhash (IIR §19.6, used by the
// "content seen?" test of §20.2.1).
//
// # Shingles
//
// A text is cut into lowercase words by a Tokenizer (Unicode letters,
// numbers and marks; punctuation dropped) and every run of W consecutive
// words (a w-shingle; "a rose is a rose" has the 4-shingles "a rose is a"
// and "rose is a rose") is hashed to 64 bits with seeded XXH64: each
// word is coded once as a 64-bit value and a shingle's hash is XXH64 of
// its words' codes, an encoding fixed in Shingles' documentation, so
// hashes are the same on every machine and in every release.
//
// # MinHash
//
// Two texts' resemblance is the Jaccard similarity |A∩B|/|A∪B| of their
// shingle sets. A Sketcher summarises a set into a Signature of K values
// (default 128) whose agreement rate estimates it (Jaccard). The default
// Method, one-permutation hashing with optimal densification, hashes
// each shingle once; the Classic method applies K hash functions and
// serves as the reference. Signature.Pack keeps b bits per value (b-bit
// MinHash) for compact storage.
//
// # Finding candidates
//
// LSH bands signatures so that pairs above a threshold collide in some
// band with high probability; OptimalBanding picks the bands and rows.
// SimhashIndex finds 64-bit simhashes within a Hamming distance with
// Manku et al.'s permuted tables. NearIndex combines them: LSH
// candidates confirmed by estimated Jaccard and, optionally, simhash
// distance (Henzinger 2006).
//
// # Example
//
//	sk, _ := shingle.NewSketcher(nil) // K=128, W=4
//	idx, _ := shingle.NewNearIndex(nil) // threshold 0.8
//	sig, sh := sk.AppendSketchSimhash(nil, page1)
//	idx.Insert(1, sig, sh)
//	sig, sh = sk.AppendSketchSimhash(nil, page2)
//	near, _ := idx.Query(sig, sh) // [{ID: 1, Jaccard: 0.9...}] if page2 ≈ page1
//
// # Concurrency
//
// Tokenizer, Shingles and Sketcher hold scratch buffers and serve one
// goroutine each; LSH, SimhashIndex and NearIndex are safe for concurrent
// use; Signature and Packed are plain values.
package shingle
