package cluster

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/frontier"
)

func journalSamples() []*shardRecord {
	next := time.Unix(1_800_000_000, 5)
	return []*shardRecord{
		{kind: recClaim, owner: "n0", inc: 7},
		{kind: recRelease, owner: "n1", inc: 1 << 60},
		{kind: recData, owner: "n2", inc: 3},
		{kind: recSnapshot, owner: "n2", inc: 4, flags: snapFirst, txn: crawlkit.Txn{
			Add:  []crawlkit.Pending{{URL: frontier.URL{URL: "http://b.test/"}}},
			Done: []string{"http://b.test/"},
		}},
		{kind: recData, owner: "n0", inc: 9, txn: crawlkit.Txn{
			Add:  []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/", Depth: 2, Fingerprint: 42}}, {URL: frontier.URL{URL: "http://a.test/x"}, Retries: 2, Parked: "http://a.test/"}},
			Put:  []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/y", Due: next}}},
			Done: []string{"http://a.test/z"},
			Keys: []crawlkit.KeyDelta{
				{Key: "h:a.test", Admitted: 2, Next: next, Gap: time.Second, Pages: 1, Alike: -1},
				{Key: "h:a.test", Backoff: &crawlkit.Backoff{Level: 2, Failures: 1, Last: next}},
			},
		}, fps: []fpEntry{{fp: 1 << 60, url: "http://a.test/z"}}, out: []frontier.URL{{URL: "http://b.test/x", Depth: 3}}},
		{kind: recData, owner: "n0", inc: 9, folded: 77},
	}
}

// TestJournalRecords round-trips every kind of record and checks that a
// shard image replays them as a State applies Txns.
func TestJournalRecords(t *testing.T) {
	for _, r := range journalSamples() {
		data, err := appendShardRecord(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeShardRecord(data)
		if err != nil {
			t.Fatalf("%c record: %v", r.kind, err)
		}
		// Times come back in the local zone; compare instants.
		for _, l := range [][]crawlkit.Pending{r.txn.Add, r.txn.Put, got.txn.Add, got.txn.Put} {
			for i := range l {
				l[i].URL.Due = l[i].URL.Due.UTC()
			}
		}
		for _, l := range [][]crawlkit.KeyDelta{r.txn.Keys, got.txn.Keys} {
			for i := range l {
				l[i].Next = l[i].Next.UTC()
				if l[i].Backoff != nil {
					l[i].Backoff.Last = l[i].Backoff.Last.UTC()
				}
			}
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%c record:\n got %+v\nwant %+v", r.kind, got, r)
		}
		for cut := range len(data) {
			if _, err := decodeShardRecord(data[:cut]); err == nil {
				t.Errorf("%c record cut at %d of %d bytes decoded", r.kind, cut, len(data))
			}
		}
	}
	im := newShardImage()
	for k, r := range journalSamples() {
		im.apply(r, uint64(k+1))
	}
	if len(im.seen) != 2 || len(im.pending) != 3 || im.owner != "n0" || im.released {
		t.Errorf("image: %d seen, %d pending, owner %q released %v", len(im.seen), len(im.pending), im.owner, im.released)
	}
	k := im.keys["h:a.test"]
	if k.Admitted != 2 || k.Pages != 1 || k.Alike != -1 || k.Gap != time.Second || k.Backoff.Level != 2 {
		t.Errorf("host record %+v", k)
	}
}

// FuzzDecodeShardRecord: a journal record read back from the stream must
// never panic the reader, and what it accepts encodes back to itself.
func FuzzDecodeShardRecord(f *testing.F) {
	for _, r := range journalSamples() {
		data, err := appendShardRecord(nil, r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{recData, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeShardRecord(data)
		if err != nil {
			return
		}
		again, err := appendShardRecord(nil, r)
		if err != nil {
			t.Fatalf("decoded record does not encode: %v", err)
		}
		back, err := decodeShardRecord(again)
		if err != nil || !reflect.DeepEqual(back.txn.Done, r.txn.Done) || len(back.txn.Add) != len(r.txn.Add) || back.owner != r.owner {
			t.Fatalf("record re-encoded to %x decodes to %+v, %v", again, back, err)
		}
	})
}

// TestShardSnapshot replays a journal, snapshots its image in small
// chunks and replays the snapshot: the image is the same. A snapshot cut
// short (no final chunk) changes nothing, and records after a snapshot
// apply on top of it.
func TestShardSnapshot(t *testing.T) {
	next := time.Unix(1_800_000_000, 0)
	var journal []*shardRecord
	for i := range 40 {
		u := "http://a.test/" + strconv.Itoa(i)
		txn := crawlkit.Txn{Add: []crawlkit.Pending{{URL: frontier.URL{URL: u, Depth: i % 3}, Retries: i % 2}}}
		if i%3 == 0 && i > 0 {
			txn.Done = []string{"http://a.test/" + strconv.Itoa(i-1)}
		}
		txn.Keys = []crawlkit.KeyDelta{{Key: "h:a.test", Admitted: 1, Pages: 1, Next: next.Add(time.Duration(i) * time.Second), Gap: time.Second}}
		if i == 7 {
			txn.Keys = append(txn.Keys, crawlkit.KeyDelta{Key: "h:a.test", Backoff: &crawlkit.Backoff{Level: 2, Failures: 1, Last: next}})
		}
		journal = append(journal, &shardRecord{kind: recData, owner: "n0", inc: 1, txn: txn})
	}
	// Every record goes through its encoding, as a replay reads it.
	roundTrip := func(r *shardRecord) *shardRecord {
		data, err := appendShardRecord(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeShardRecord(data)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	replay := func(recs []*shardRecord) *shardImage {
		im := newShardImage()
		for k, r := range recs {
			im.apply(roundTrip(r), uint64(k+1)) // stream sequences from 1
		}
		return im
	}
	type view struct {
		Seen    map[string]bool
		Pending map[string]crawlkit.Pending
		Keys    map[string]crawlkit.KeyRecord
	}
	viewOf := func(im *shardImage) view {
		v := view{Seen: map[string]bool{}, Pending: im.pending, Keys: map[string]crawlkit.KeyRecord{}}
		for _, u := range im.seen {
			v.Seen[u] = true
		}
		for k, r := range im.keys {
			r.Next, r.Backoff.Last = r.Next.UTC(), r.Backoff.Last.UTC()
			v.Keys[k] = r
		}
		for u, p := range v.Pending {
			p.URL.Due = p.URL.Due.UTC()
			v.Pending[u] = p
		}
		return v
	}
	want := replay(journal)
	snap := want.snapshot(200, true) // a few URLs per chunk
	if len(snap) < 3 {
		t.Fatalf("%d snapshot chunks, want several", len(snap))
	}
	for _, r := range snap {
		r.owner, r.inc = "n0", 2 // as shards.write sets them
	}
	if got := replay(append(append([]*shardRecord{}, journal[:5]...), snap...)); !reflect.DeepEqual(viewOf(got), viewOf(want)) {
		t.Errorf("snapshot replayed:\n got %+v\nwant %+v", viewOf(got), viewOf(want))
	} else if got.records != 0 {
		t.Errorf("%d records since the snapshot, want 0", got.records)
	} else if got.stale != 6 {
		// Its writer died before purging the five records before it:
		// a claim purges them, up to the snapshot's first chunk.
		t.Errorf("records before the snapshot end at %d, want 6", got.stale)
	}
	// Cut short: the records before it stand.
	early := replay(journal[:10])
	torn := replay(append(append([]*shardRecord{}, journal[:10]...), snap[:len(snap)-1]...))
	if !reflect.DeepEqual(viewOf(torn), viewOf(early)) || torn.stale != 0 {
		t.Errorf("a snapshot without its final chunk changed the image (stale %d)", torn.stale)
	}
	// Records after the snapshot apply on top of it.
	more := &shardRecord{kind: recData, owner: "n0", inc: 1, txn: crawlkit.Txn{
		Add: []crawlkit.Pending{{URL: frontier.URL{URL: "http://a.test/new"}}}, Done: []string{"http://a.test/39"}}}
	after := replay(append(append([]*shardRecord{}, snap...), more))
	if _, ok := after.pending["http://a.test/new"]; !ok || len(after.seen) != 41 || after.stale != 0 {
		t.Errorf("after the snapshot: %d seen, new pending %v, stale %d", len(after.seen), ok, after.stale)
	}
	if _, ok := after.pending["http://a.test/39"]; ok {
		t.Error("a URL done after the snapshot is still pending")
	}
}
