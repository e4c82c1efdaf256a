package wire_test

import (
	"encoding/binary"
	"fmt"

	"github.com/crawlkit/crawlkit/internal/wire"
)

// A record is read field by field and checked once, at the end.
func Example() {
	rec := binary.AppendUvarint(nil, 2)
	rec = binary.AppendUvarint(rec, 5)
	rec = append(rec, "hello"...)
	rec = binary.AppendUvarint(rec, 5)
	rec = append(rec, "world"...)

	d := wire.Decoder{B: rec}
	var words []string
	for range d.Count(1) {
		words = append(words, string(d.Bytes(64)))
	}
	fmt.Println(words, d.Done())

	d = wire.Decoder{B: rec[:8]} // torn
	words = words[:0]
	for range d.Count(1) {
		words = append(words, string(d.Bytes(64)))
	}
	fmt.Println(len(words), d.Done())
	// Output:
	// [hello world] true
	// 2 false
}
