package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// The files of a Dir:
//
//	MANIFEST       the current state, replaced atomically
//	NNNNNNNN.seg   an immutable segment
//	NNNNNNNN.log   a log of added documents
//	LOCK           held (flock) by the process that has the directory open
//	*.tmp          files being written; removed on open
//
// Numbers come from one counter, so a larger number is a newer file.
//
// Manifest format, version 1: "CKMF" | version u16 | flags u16 (0), then
// uvarints: directory id (u64, little-endian), next file number, current
// log, the current state, then 1 and the previous log and state, or 0;
// CRC-32C of everything before, u32. A state is its number of segments
// and, per segment, its file number and the deletions recorded for it (the
// length then a roaring bitmap in portable format).
const (
	manifestName    = "MANIFEST"
	lockName        = "LOCK"
	manifestMagic   = "CKMF"
	manifestVersion = 1
)

// segMeta is a segment of a manifest state: its number and the deletions
// recorded for it. del is never modified once in a manifest.
type segMeta struct {
	num uint64
	del *roaring.Bitmap
}

// manifest is the durable state of a Dir. cur, with the log replayed on
// top, is the index; prev, with prevLog replayed on top, is the index as it
// was when the previous flush started — kept so that Rewind can go back to
// a position of the previous log.
type manifest struct {
	dirID   uint64
	next    uint64 // next file number
	log     uint64
	cur     []segMeta
	hasPrev bool
	prevLog uint64
	prev    []segMeta
}

func segName(num uint64) string { return fmt.Sprintf("%08d.seg", num) }
func logName(num uint64) string { return fmt.Sprintf("%08d.log", num) }

// parseName returns the number and extension of a segment or log file
// name.
func parseName(name string) (uint64, string, bool) {
	base, ext, ok := strings.Cut(name, ".")
	if !ok || (ext != "seg" && ext != "log") || len(base) < 8 {
		return 0, "", false
	}
	n, err := strconv.ParseUint(base, 10, 64)
	return n, ext, err == nil
}

func (m *manifest) encode() []byte {
	var e enc
	e.b = append(e.b, manifestMagic...)
	e.b = binary.LittleEndian.AppendUint16(e.b, manifestVersion)
	e.b = binary.LittleEndian.AppendUint16(e.b, 0)
	e.b = binary.LittleEndian.AppendUint64(e.b, m.dirID)
	e.uvarint(m.next)
	e.uvarint(m.log)
	var buf bytes.Buffer
	state := func(segs []segMeta) {
		e.uvarint(uint64(len(segs)))
		for _, s := range segs {
			e.uvarint(s.num)
			buf.Reset()
			s.del.WriteTo(&buf)
			e.uvarint(uint64(buf.Len()))
			e.b = append(e.b, buf.Bytes()...)
		}
	}
	state(m.cur)
	if m.hasPrev {
		e.byte1(1)
		e.uvarint(m.prevLog)
		state(m.prev)
	} else {
		e.byte1(0)
	}
	return binary.LittleEndian.AppendUint32(e.b, crc32.Checksum(e.b, castagnoli))
}

func decodeManifest(b []byte) (*manifest, error) {
	if len(b) < 16 || string(b[:4]) != manifestMagic {
		return nil, fmt.Errorf("%w: bad manifest header", ErrCorrupt)
	}
	if crc32.Checksum(b[:len(b)-4], castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: manifest checksum mismatch", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != manifestVersion {
		return nil, fmt.Errorf("%w: manifest version %d", ErrVersion, v)
	}
	if binary.LittleEndian.Uint16(b[6:]) != 0 {
		return nil, fmt.Errorf("%w: unknown manifest flags", ErrCorrupt)
	}
	m := &manifest{dirID: binary.LittleEndian.Uint64(b[8:])}
	d := &dec{b: b[16 : len(b)-4]}
	m.next, m.log = d.uvarint(), d.uvarint()
	state := func() []segMeta {
		n := d.count(2)
		segs := make([]segMeta, 0, n)
		for range n {
			num, size := d.uvarint(), d.uvarint()
			if d.err != nil || size > uint64(len(d.b)) {
				d.fail(errShort)
				return nil
			}
			del, err := decodeBitmap(d.b[:size])
			if err != nil {
				d.fail(err)
				return nil
			}
			d.b = d.b[size:]
			segs = append(segs, segMeta{num: num, del: del})
		}
		return segs
	}
	m.cur = state()
	switch d.byte1() {
	case 0:
	case 1:
		m.hasPrev = true
		m.prevLog = d.uvarint()
		m.prev = state()
	default:
		d.fail(errors.New("bad flag"))
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail(errors.New("trailing bytes"))
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrCorrupt, d.err)
	}
	return m, nil
}

// decodeBitmap reads a roaring bitmap in portable format after checking it.
func decodeBitmap(b []byte) (*roaring.Bitmap, error) {
	if _, err := checkRoaring(b); err != nil {
		return nil, err
	}
	bm := roaring.New()
	if _, err := bm.ReadFrom(bytes.NewReader(b)); err != nil {
		return nil, err
	}
	return bm, nil
}

func readManifest(dir string) (*manifest, error) {
	path := filepath.Join(dir, manifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := decodeManifest(b)
	if err != nil {
		return nil, &Error{Op: "read", Subject: path, Err: err}
	}
	return m, nil
}

// writeManifest replaces the manifest atomically: write a temporary file,
// sync it, rename it over the old one, sync the directory.
func writeManifest(dir string, m *manifest) error {
	path := filepath.Join(dir, manifestName)
	tmp := path + ".tmp"
	err := writeFileSync(tmp, m.encode())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return &Error{Op: "write", Subject: path, Err: err}
	}
	return nil
}

func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes renames and creations in dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
