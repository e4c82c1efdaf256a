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

// Crash abandons d as a killed process would: its goroutine stops and its
// files are closed without syncing or writing anything, which releases
// the directory lock.
func (d *Dir) Crash() {
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	d.finished = true
	d.quiesce.Add(1)
	close(d.done)
	d.wg.Wait()
	d.mergeMu.Lock()
	defer d.mergeMu.Unlock()
	d.wmu.Lock()
	defer d.wmu.Unlock()
	d.closed.Store(true)
	if d.log != nil {
		d.log.f.Close()
	}
	for _, s := range d.segs {
		s.file.Close()
	}
	d.lock.Close()
}
