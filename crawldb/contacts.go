package crawldb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	"github.com/crawlkit/crawlkit"
)

// The contacts file holds one fixed-size slot per worker: the key the
// worker is contacting and until when it must then be left alone. A slot
// is written with one positional write per lease, so no lock is needed
// between workers; Open reads the slots of the last run before any is
// written again.
//
// Slot: CRC-32C of the rest (4 bytes), key length (2), at and until in
// Unix nanoseconds (8 each), the key. A slot that fails its checksum
// (never written, or torn) is skipped.
const (
	contactSlot   = 512
	contactHead   = 22
	contactKeyMax = contactSlot - contactHead
	maxWorkers    = 1 << 16
)

// contacts is the open contacts file and the slots it held at Open.
type contacts struct {
	f    *os.File
	last []crawlkit.Contact
}

func openContacts(path string) (*contacts, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	c := &contacts{f: f}
	buf := make([]byte, contactSlot)
	for off := int64(0); ; off += contactSlot {
		_, err := f.ReadAt(buf, off)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		if ct, ok := decodeContact(buf); ok {
			c.last = append(c.last, ct)
		}
	}
	return c, nil
}

func decodeContact(b []byte) (crawlkit.Contact, bool) {
	n := int(binary.LittleEndian.Uint16(b[4:]))
	if n == 0 || n > contactKeyMax || crc32.Checksum(b[4:contactHead+n], castagnoli) != binary.LittleEndian.Uint32(b) {
		return crawlkit.Contact{}, false
	}
	return crawlkit.Contact{
		Key:   string(b[contactHead : contactHead+n]),
		At:    time.Unix(0, int64(binary.LittleEndian.Uint64(b[6:]))),
		Until: time.Unix(0, int64(binary.LittleEndian.Uint64(b[14:]))),
	}, true
}

// record writes worker w's slot.
func (c *contacts) record(w int, ct crawlkit.Contact) error {
	if w < 0 || w >= maxWorkers {
		return fmt.Errorf("crawldb: worker %d out of range", w)
	}
	key := ct.Key
	if len(key) > contactKeyMax {
		key = key[:contactKeyMax] // a prefix of a key matches none: the record is lost, not wrong
	}
	var b [contactSlot]byte
	binary.LittleEndian.PutUint16(b[4:], uint16(len(key)))
	binary.LittleEndian.PutUint64(b[6:], uint64(ct.At.UnixNano()))
	binary.LittleEndian.PutUint64(b[14:], uint64(ct.Until.UnixNano()))
	copy(b[contactHead:], key)
	binary.LittleEndian.PutUint32(b[:], crc32.Checksum(b[4:contactHead+len(key)], castagnoli))
	_, err := c.f.WriteAt(b[:], int64(w)*contactSlot)
	return err
}

func (c *contacts) close() error { return c.f.Close() }
