// Package bitio reads and writes MSB-first bit streams and the instantaneous
// codes of the Boldi–Vigna web graph format: unary, Elias γ and δ, ζ_k,
// variable-length nibble and Golomb codes, with the exact code words of
// dsiutils' InputBitStream/OutputBitStream (Java WebGraph), so streams move
// between this package, Java WebGraph and webgraph-rs.
//
// # Reading
//
// A Reader decodes from a stream held in memory as big-endian 64-bit words
// (PackWords; NewReader packs a byte slice), so any 64-bit window costs two
// loads. Short code words (up to 12 bits: γ values up to 62, the common small
// gaps of ζ_3) are decoded with one table lookup on that window; longer ones
// with a leading-zero count. Errors are sticky and checked per batch: a code
// word whose value does not fit in 64 bits, or reading past the end, makes Err
// return an *Error (unwrapping to ErrOverflow or ErrOverrun); values read past
// the end are meaningless, so decoders validate what they read and check Err
// once per record instead of once per code. No read does more work than the
// stream is long.
//
// # Word-level decoding
//
// Hot loops can skip the Reader: Peek returns the next 64 bits of a packed
// stream, and GammaWord, ZetaWord, Zeta3Short, Zeta3Fast and UnaryWord
// decode one code word from them, returning its value and length (0 when
// the word does not fit in the 64 bits, or for the table-only decoders, in
// what the table covers). The caller keeps the position, and the 64-bit
// window if it likes, in local variables — registers, not memory — and
// falls back to a Reader for the rare long word; GammaWord, Zeta3Short,
// Zeta3Fast, UnaryWord and Peek are small enough to be inlined. The
// webgraph decoder works this way.
//
// Zeta3Fast is the one to use for ζ_3 in a loop: its 12-bit table gives the
// length of every word whose first 12 bits determine it (up to 40 bits),
// and the value follows by a shift and an addition, so it misses only on
// values above 2^30. A table of whole words (Zeta3Short) misses on every
// word above 12 bits, a fifth of a web graph's residual gaps, and each
// miss is a mispredicted branch.
//
// # Writing
//
// A Writer accumulates bits in a 64-bit register and emits bytes to an
// io.Writer or to memory; Close pads the last byte with zeros as Java does.
// Every Write method returns the number of bits written; the *Len functions
// give the same figure without writing, which is what a compressor uses to
// compare candidate encodings.
//
//	w := bitio.NewWriter(nil)
//	w.WriteGamma(5)
//	w.WriteZeta(1000, 3)
//	w.Close()
//	r := bitio.NewReader(w.Bytes())
//	a, b := r.ReadGamma(), r.ReadZeta(3) // 5, 1000
//	if err := r.Err(); err != nil { ... }
package bitio
