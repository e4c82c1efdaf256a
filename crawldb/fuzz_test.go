package crawldb

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

func seedTxn() []byte {
	t := &crawlkit.Txn{
		Add: []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/", Depth: 2}}, {URL: frontier.URL{URL: "http://b.test/x"}, Retries: 1},
			{URL: frontier.URL{URL: "http://www.b.test/x"}, Parked: "http://b.test/x"}},
		Put:      []crawlkit.Pending{{URL: frontier.URL{URL: "http://c.test/", Due: time.Unix(1e9, 0)}}},
		Done:     []string{"http://d.test/"},
		Keys:     []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 2, Next: time.Unix(1e9, 5), Gap: time.Second}},
		Progress: []byte("progress"),
		Rules:    []byte("rules"),
	}
	b, _ := appendTxn(nil, 7, t)
	return b
}

// FuzzTxn: decoding any commit record returns a Txn or ErrCorrupt, never
// panics, and what decodes encodes to a record that decodes the same.
func FuzzTxn(f *testing.F) {
	f.Add(seedTxn())
	f.Add([]byte{txnVersion, 1, 0, 0, 0, 0, 0})
	f.Add([]byte{txnVersion, 1, 255, 255, 255, 255, 15})
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, txn, err := decodeTxn(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := appendTxn(nil, seq, txn)
		if err != nil {
			t.Fatal(err)
		}
		seq2, txn2, err := decodeTxn(again)
		if err != nil || seq2 != seq || !reflect.DeepEqual(txn2.Add, txn.Add) || !reflect.DeepEqual(txn2.Put, txn.Put) ||
			!reflect.DeepEqual(txn2.Done, txn.Done) || len(txn2.Keys) != len(txn.Keys) ||
			string(txn2.Progress) != string(txn.Progress) || string(txn2.Rules) != string(txn.Rules) {
			t.Fatalf("%x: decoded %+v, then %+v (%v)", b, txn, txn2, err)
		}
	})
}

// FuzzLogReplay: any bytes as the last commit log file replay without a
// panic, to ErrCorrupt or to the complete records, and a torn tail is cut.
func FuzzLogReplay(f *testing.F) {
	rec := seedTxn()
	f.Add(frame(rec))
	f.Add(append(frame(rec), frame(rec)[:5]...))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, logName(1))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		n := 0
		err := replayLog(dir, 1, true, func(p []byte) error {
			n++
			_, _, err := decodeTxn(p)
			return err
		})
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("replay: %v does not wrap ErrCorrupt", err)
		}
		if err == nil {
			// Replaying again reads the same records and cuts nothing.
			m := 0
			if err := replayLog(dir, 1, true, func([]byte) error { m++; return nil }); err != nil || m != n {
				t.Fatalf("a second replay read %d records (%v), the first %d", m, err, n)
			}
		}
	})
}

// frame returns payload framed as a commit log record.
func frame(payload []byte) []byte {
	dir, _ := os.MkdirTemp("", "frame")
	defer os.RemoveAll(dir)
	cl, err := openLog(dir, 0)
	if err != nil {
		panic(err)
	}
	cl.append(payload)
	cl.close()
	b, _ := os.ReadFile(filepath.Join(dir, logName(1)))
	return b
}

// FuzzContact: any slot bytes decode to a contact or to nothing, never a
// panic.
func FuzzContact(f *testing.F) {
	var slot [contactSlot]byte
	f.Add(slot[:])
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < contactSlot {
			b = append(b, make([]byte, contactSlot-len(b))...)
		}
		decodeContact(b[:contactSlot])
	})
}
