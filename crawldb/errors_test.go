package crawldb

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

// TestCorruptMessages damages a state directory in the ways a disk, a
// copy or a hand can, and checks what an operator reads: the error wraps
// the sentinel, names the file at fault, and says "crawldb: " once.
func TestCorruptMessages(t *testing.T) {
	txn := func(seq uint64) []byte {
		b, err := appendTxn(nil, seq, &crawlkit.Txn{Add: []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/"}}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	record := func(payload []byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
		return append(b, payload...)
	}
	// writeLog writes commit log file n of dir.
	writeLog := func(t *testing.T, dir string, n uint64, b []byte) string {
		path := filepath.Join(dir, logName(n))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// setKey writes one raw key into the Pebble database of a closed
	// state, as a damaged or foreign database would hold it.
	setKey := func(t *testing.T, dir string, k, v []byte) string {
		db, err := pebble.Open(filepath.Join(dir, "db"), &pebble.Options{Logger: quietLogger{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Set(k, v, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, "db")
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string) (file string)
		want   error
		// load: Load reports the damage, not Open.
		load bool
	}{
		{"checksum of a record", func(t *testing.T, dir string) string {
			bad := record(txn(1))
			bad[len(bad)-1] ^= 0xff
			return writeLog(t, dir, 1, append(bad, record(txn(2))...))
		}, ErrCorrupt, false},
		{"record length", func(t *testing.T, dir string) string {
			return writeLog(t, dir, 1, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1})
		}, ErrCorrupt, false},
		{"record cut short in an older file", func(t *testing.T, dir string) string {
			b := record(txn(1))
			path := writeLog(t, dir, 1, b[:len(b)-3])
			writeLog(t, dir, 2, nil)
			return path
		}, ErrCorrupt, false},
		{"undecodable commit", func(t *testing.T, dir string) string {
			return writeLog(t, dir, 1, record([]byte{0xee, 1, 2, 3}))
		}, ErrCorrupt, false},
		{"commit out of sequence", func(t *testing.T, dir string) string {
			return writeLog(t, dir, 1, record(txn(5)))
		}, ErrCorrupt, false},
		{"format version", func(t *testing.T, dir string) string {
			return filepath.Dir(setKey(t, dir, []byte(metaVersion), []byte{formatVersion + 1}))
		}, ErrVersion, false},
		{"sequence number", func(t *testing.T, dir string) string {
			return setKey(t, dir, []byte(metaSeq), []byte{1, 2, 3})
		}, ErrCorrupt, false},
		{"pending record", func(t *testing.T, dir string) string {
			return setKey(t, dir, pendingKey(nil, "http://b.test/"), []byte{0xff, 0xff})
		}, ErrCorrupt, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			db, err := Open(dir, &Options{SyncInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			for _, n := range must(logFiles(dir)) {
				os.Remove(filepath.Join(dir, logName(n)))
			}
			file := tc.damage(t, dir)
			db, err = Open(dir, &Options{SyncInterval: -1})
			if tc.load {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				_, err = db.Load(context.Background(), func(crawlkit.Pending) error { return nil })
				db.Close()
			} else if err == nil {
				db.Close()
				t.Fatal("Open accepted the damaged state")
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("%v does not wrap %v", err, tc.want)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("%v (%T) is not a *crawldb.Error", err, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, file) {
				t.Errorf("%q does not name %s", msg, file)
			}
			if n := strings.Count(msg, "crawldb: "); n != 1 {
				t.Errorf("%q says \"crawldb: \" %d times, want once", msg, n)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
