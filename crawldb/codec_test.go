package crawldb

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

// TestTxnVersions reads commit records of every version written: a
// record of an older version decodes with the fields it did not have
// left zero.
func TestTxnVersions(t *testing.T) {
	// v1 and v2 records, written by hand as the older encoders did.
	pending, _ := appendPending(nil, &crawlkit.Pending{URL: frontier.URL{URL: "http://a.test/"}, Retries: 2})
	old := func(version byte, keyTail []int64, progress string) []byte {
		b := []byte{version}
		b = binary.AppendUvarint(b, 9)
		b = binary.AppendUvarint(b, 1)
		b = appendString(b, string(pending))
		b = append(b, 0, 0) // no Put, no Done
		b = binary.AppendUvarint(b, 1)
		b = appendString(b, "h:a.test")
		for _, v := range append([]int64{3, 0, int64(time.Second)}, keyTail...) {
			b = binary.AppendVarint(b, v)
		}
		b = append(b, 1)
		return appendString(b, progress)
	}
	cur, _ := appendTxn(nil, 9, &crawlkit.Txn{
		Add: []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/"}, Retries: 2}},
		Keys: []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 3, Gap: time.Second, Pages: 5, Alike: 1,
			Backoff: &crawlkit.Backoff{Level: 2, Failures: 1, Last: time.Unix(1700000000, 0)}}},
		Progress: []byte("p"),
		Rules:    []byte("r"),
	})
	for _, tc := range []struct {
		name         string
		rec          []byte
		pages, alike int64
		rules        string
		backoff      bool
	}{
		{"v1", old(txnVersionV1, nil, "p"), 0, 0, "", false},
		{"v2", old(txnVersionV2, []int64{5, 1}, "p"), 5, 1, "", false},
		{"v3", append(old(txnVersionV3, []int64{5, 1}, "p"), 0), 5, 1, "", false},
		{"v4", cur, 5, 1, "r", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seq, txn, err := decodeTxn(tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			k := txn.Keys[0]
			if seq != 9 || len(txn.Add) != 1 || txn.Add[0].Retries != 2 || k.Admitted != 3 || k.Pages != tc.pages || k.Alike != tc.alike ||
				string(txn.Progress) != "p" || string(txn.Rules) != tc.rules {
				t.Errorf("decoded seq %d %+v", seq, txn)
			}
			if bo := k.Backoff; (bo != nil) != tc.backoff || bo != nil && (bo.Level != 2 || bo.Failures != 1 || bo.Last.Unix() != 1700000000) {
				t.Errorf("decoded Backoff %+v, want one: %v", bo, tc.backoff)
			}
		})
	}
	if _, _, err := decodeTxn(append([]byte{txnVersion + 1}, cur[1:]...)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a record of a later version: %v, want ErrCorrupt", err)
	}
}

// TestPendingRecords covers the pending record's encodings: with and
// without a parked URL, and the malformed ones.
func TestPendingRecords(t *testing.T) {
	for _, p := range []crawlkit.Pending{
		{URL: frontier.URL{URL: "http://a.test/", Depth: 3}},
		{URL: frontier.URL{URL: "http://a.test/", Depth: 3}, Retries: 5},
		{URL: frontier.URL{URL: "http://www.a.test/x"}, Parked: "http://a.test/x"},
		{URL: frontier.URL{URL: "http://www.a.test/x"}, Retries: 1, Parked: "http://a.test/x"},
	} {
		b, err := appendPending(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodePending(b)
		if err != nil || got.URL.URL != p.URL.URL || got.URL.Depth != p.URL.Depth || got.Retries != p.Retries || got.Parked != p.Parked {
			t.Errorf("%+v decoded as %+v (%v)", p, got, err)
		}
	}
	url, _ := (&frontier.URL{URL: "http://a.test/"}).AppendBinary(nil)
	for _, tc := range []struct {
		name string
		rec  []byte
	}{
		{"empty", nil},
		{"retries beyond int32", append(binary.AppendUvarint(nil, 1<<35), url...)},
		{"parked flag, empty URL", append(appendString(binary.AppendUvarint(nil, parkedFlag), ""), url...)},
		{"parked flag, no URL", binary.AppendUvarint(nil, parkedFlag)},
		{"no frontier entry", binary.AppendUvarint(nil, 0)},
	} {
		if _, err := decodePending(tc.rec); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
}
