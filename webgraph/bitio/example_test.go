package bitio_test

import (
	"fmt"

	"github.com/crawlkit/crawlkit/webgraph/bitio"
)

func Example() {
	w := bitio.NewWriter(nil)
	w.WriteGamma(4)   // 00101
	w.WriteZeta(1, 3) // 1010
	w.WriteUnary(2)   // 001
	w.WriteNibble(8)  // 0001 1000
	w.Close()
	fmt.Printf("%08b\n", w.Bytes())

	r := bitio.NewReader(w.Bytes())
	fmt.Println(r.ReadGamma(), r.ReadZeta(3), r.ReadUnary(), r.ReadNibble(), r.Err())
	// Output:
	// [00101101 00010001 10000000]
	// 4 1 2 8 <nil>
}

// A decoding loop that keeps the bit position in a local variable: one
// Peek per code word, and a Reader only for the rare words that do not fit
// in 64 bits.
func ExampleGammaWord() {
	w := bitio.NewWriter(nil)
	for _, v := range []uint64{0, 7, 62, 1000} {
		w.WriteGamma(v)
	}
	w.Close()
	words := bitio.PackWords(w.Bytes())
	var pos uint64
	for range 4 {
		v, n := bitio.GammaWord(bitio.Peek(words, pos))
		if n == 0 {
			r := bitio.NewWordReader(words, uint64(len(w.Bytes()))*8)
			r.SetPosition(pos)
			v = r.ReadGamma()
			n = uint(r.Position() - pos)
		}
		pos += uint64(n)
		fmt.Print(v, " ")
	}
	fmt.Println()
	// Output: 0 7 62 1000
}
