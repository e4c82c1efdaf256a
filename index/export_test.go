package index

import (
	"encoding/binary"
	"hash/crc32"
)

// FixChecksum rewrites the body length and CRC of a would-be index file so
// that fuzzing reaches the decoder behind the checksum.
func FixChecksum(data []byte) []byte {
	if len(data) < headerSize+4 {
		return data
	}
	b := append([]byte(nil), data...)
	binary.LittleEndian.PutUint64(b[8:], uint64(len(b)-headerSize-4))
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}
