package crawldb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The commit log is the state's own write-ahead log. Pebble's log keeps a
// commit made without an fsync in a 32 KiB buffer of the process until
// the buffer fills, so a killed process would lose the last commits; an
// fsync per page costs about a millisecond here. So every Txn is first
// appended to a commit log file with one write system call, which the
// operating system keeps whatever happens to the process, and then
// applied to Pebble. Open replays the records Pebble lacks (those after
// the sequence number it holds). Every SyncInterval the log is switched
// to a new file and Pebble's log is synced; the old file, now redundant,
// is removed.
//
// A record is a 4-byte little-endian payload length, the CRC-32C of the
// payload, and the payload (appendTxn). A record cut short at the end of
// the last file (a kill in mid-write) is cut off; a damaged record
// elsewhere is ErrCorrupt.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxRecord bounds a record's payload.
const maxRecord = 1 << 28

// logPrefix and logSuffix frame a commit log file's name around its
// number, in hex so that names sort in order.
const (
	logPrefix = "commits-"
	logSuffix = ".log"
)

func logName(n uint64) string { return fmt.Sprintf("%s%016x%s", logPrefix, n, logSuffix) }

// logFiles returns the numbers of the commit log files in dir, ascending.
func logFiles(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ns []uint64
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, logPrefix) || !strings.HasSuffix(name, logSuffix) {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, logPrefix), logSuffix), 16, 64)
		if err != nil {
			continue
		}
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns, nil
}

// commitLog appends records to the current file. Not safe for concurrent
// use: the DB serializes commits.
type commitLog struct {
	dir  string
	n    uint64 // number of the current file
	f    *os.File
	off  int64
	recs int // records in the current file
	buf  []byte
}

// openLog starts a new log file numbered after every file in dir.
func openLog(dir string, after uint64) (*commitLog, error) {
	l := &commitLog{dir: dir, n: after}
	if err := l.next(); err != nil {
		return nil, err
	}
	return l, nil
}

// next switches to a new file.
func (l *commitLog) next() error {
	l.n++
	f, err := os.OpenFile(filepath.Join(l.dir, logName(l.n)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.off, l.recs = f, 0, 0
	return nil
}

// append writes one record with one write system call. A failed write
// is cut off again, so that the next record starts clean; if that fails
// too the log is unusable.
func (l *commitLog) append(payload []byte) error {
	if len(payload) > maxRecord {
		return fmt.Errorf("crawldb: commit of %d bytes exceeds the %d-byte limit", len(payload), maxRecord)
	}
	b := binary.LittleEndian.AppendUint32(l.buf[:0], uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
	b = append(b, payload...)
	l.buf = b
	n, err := l.f.WriteAt(b, l.off)
	if err != nil {
		if terr := l.f.Truncate(l.off); terr != nil {
			return errors.Join(err, terr)
		}
		return err
	}
	l.off += int64(n)
	l.recs++
	return nil
}

func (l *commitLog) close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// replayLog calls apply for every complete record of the log file n in
// dir, in order. A record cut short at the end is cut off when last (the
// file being written at a kill) and is ErrCorrupt otherwise, as is a
// record whose checksum fails.
func replayLog(dir string, n uint64, last bool, apply func(payload []byte) error) error {
	path := filepath.Join(dir, logName(n))
	at := func(off int, err error) error {
		return &Error{Op: "replay", Path: path, Subject: "at offset " + strconv.Itoa(off), Err: err}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return &Error{Op: "replay", Err: err} // an *os.PathError: it names the file
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return &Error{Op: "replay", Path: path, Err: err}
	}
	off := 0
	for off < len(data) {
		rest := data[off:]
		if len(rest) < 8 {
			break
		}
		size := binary.LittleEndian.Uint32(rest)
		if size > maxRecord {
			return at(off, fmt.Errorf("%w: record length %d", ErrCorrupt, size))
		}
		if uint64(len(rest)) < 8+uint64(size) {
			break
		}
		payload := rest[8 : 8+size]
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(rest[4:]) {
			if last && 8+uint64(size) == uint64(len(rest)) {
				// A torn write can damage the last record only;
				// anything after it would be a later write.
				break
			}
			return at(off, fmt.Errorf("%w: checksum mismatch", ErrCorrupt))
		}
		if err := apply(payload); err != nil {
			return at(off, err)
		}
		off += 8 + int(size)
	}
	if off < len(data) {
		if !last {
			return at(off, fmt.Errorf("%w: %d bytes of a record cut short before the last log file", ErrCorrupt, len(data)-off))
		}
		if err := f.Truncate(int64(off)); err != nil {
			return &Error{Op: "replay", Err: err}
		}
	}
	return nil
}
