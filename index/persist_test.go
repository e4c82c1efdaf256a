package index_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

func smallShard(tb testing.TB, n int) *index.Shard {
	tb.Helper()
	s := index.NewShard(nil)
	docs := indextest.Corpus(indextest.Config{Seed: 11, Docs: n, Vocab: 300, MeanLen: 12})
	mustAdd(tb, s.Add, docs)
	s.Delete(docs[0].URL)
	return s
}

func encode(tb testing.TB, s *index.Shard) []byte {
	tb.Helper()
	var buf bytes.Buffer
	n, err := s.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		tb.Fatalf("WriteTo = %d, %v (buffer %d)", n, err, buf.Len())
	}
	return buf.Bytes()
}

func TestPersistRoundTrip(t *testing.T) {
	docs, qs := collection(t)
	s := index.NewShard(nil)
	mustAdd(t, s.Add, docs[:400])
	s.Add(index.Document{URL: docs[5].URL, Title: "replaced", Text: docs[6].Text})
	s.Delete(docs[9].URL)
	data := encode(t, s)

	got := index.NewShard(nil)
	n, err := got.ReadFrom(bytes.NewReader(data))
	if err != nil || n != int64(len(data)) {
		t.Fatalf("ReadFrom = %d, %v; want %d, nil", n, err, len(data))
	}
	if got.Len() != s.Len() || got.Deleted() != s.Deleted() || got.Terms() != s.Terms() {
		t.Errorf("read Len/Deleted/Terms %d/%d/%d, want %d/%d/%d", got.Len(), got.Deleted(), got.Terms(), s.Len(), s.Deleted(), s.Terms())
	}
	indextest.Compare(t, s, got, qs, nil)
	if again := encode(t, got); !bytes.Equal(again, data) {
		t.Error("re-encoding the read shard gives different bytes")
	}
	// Updates keep working after a load.
	if replaced, err := got.Add(index.Document{URL: docs[7].URL, Text: "x"}); err != nil || !replaced {
		t.Errorf("Add after load: replaced=%v err=%v", replaced, err)
	}
}

func TestReadFromDamaged(t *testing.T) {
	good := encode(t, smallShard(t, 30))
	check := func(name string, data []byte, want error) {
		t.Helper()
		s := smallShard(t, 3)
		before := s.Len()
		_, err := s.ReadFrom(bytes.NewReader(data))
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if !errors.Is(err, want) {
			t.Fatalf("%s: %v, want %v", name, err, want)
		}
		var ie *index.Error
		if !errors.As(err, &ie) || ie.Op != "read" {
			t.Fatalf("%s: %T %v is not an *index.Error for read", name, err, err)
		}
		if s.Len() != before {
			t.Fatalf("%s: failed read changed the shard", name)
		}
	}
	for _, n := range []int{0, 3, 15, 16, 17, len(good) / 2, len(good) - 4, len(good) - 1} {
		check("truncated", good[:n], index.ErrCorrupt)
	}
	for i := 0; i < len(good); i += 1 + i/8 {
		bad := bytes.Clone(good)
		bad[i] ^= 0x10
		want := index.ErrCorrupt
		if i == 4 || i == 5 {
			want = index.ErrVersion
		}
		check("bit flip", bad, want)
	}
	bad := bytes.Clone(good)
	bad[4] = 9
	check("future version", bad, index.ErrVersion)
	check("other file", []byte("PK\x03\x04 this is a zip file, not an index"), index.ErrCorrupt)
}

// FuzzReadFrom feeds arbitrary bytes to ReadFrom, with the checksum fixed up
// half of the time so that the decoder behind it is reached: it must return
// an error or a shard that re-encodes to an equal shard, never panic.
func FuzzReadFrom(f *testing.F) {
	f.Add(encode(f, smallShard(f, 4)), false)
	f.Add(encode(f, index.NewShard(nil)), true)
	f.Add([]byte("CKIX\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), true)
	f.Fuzz(func(t *testing.T, data []byte, fixCRC bool) {
		if fixCRC {
			data = index.FixChecksum(data)
		}
		s := index.NewShard(nil)
		if _, err := s.ReadFrom(bytes.NewReader(data)); err != nil {
			return
		}
		out := encode(t, s)
		s2 := index.NewShard(nil)
		if _, err := s2.ReadFrom(bytes.NewReader(out)); err != nil {
			t.Fatalf("re-read of a written shard failed: %v", err)
		}
		if !bytes.Equal(encode(t, s2), out) {
			t.Fatal("encoding is not stable")
		}
		// A loaded shard answers queries without panicking, and with hits
		// that are documents it holds, best first, scores finite.
		for _, term := range []string{"a", "ka", "lo"} {
			for _, op := range []index.Op{index.Or, index.And} {
				r, err := s.Search(ctx, index.Query{Terms: []string{term, "mi"}, Op: op}, nil)
				if err != nil {
					continue
				}
				for i, h := range r.Hits {
					if !s.Has(h.URL) || math.IsNaN(h.Score) || math.IsInf(h.Score, 0) ||
						i > 0 && (h.Score > r.Hits[i-1].Score || h.Score == r.Hits[i-1].Score && h.URL < r.Hits[i-1].URL) {
						t.Fatalf("query %q: hit %d %+v of %+v", term, i, h, r.Hits)
					}
				}
			}
		}
	})
}
