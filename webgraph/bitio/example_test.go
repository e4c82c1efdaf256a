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
