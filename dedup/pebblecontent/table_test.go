package pebblecontent_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
	"github.com/crawlkit/crawlkit/dedup/pebblecontent"
	"github.com/crawlkit/crawlkit/shingle"
)

func TestRecord(t *testing.T) {
	ctx := context.Background()
	for _, exactOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("exactOnly=%v", exactOnly), func(t *testing.T) {
			c, err := pebblecontent.New(memDB(t), "c", &pebblecontent.Options{ExactOnly: exactOnly})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			page := []byte(deduptest.Text(1, 300))
			m, err := c.Seen(ctx, dedup.Doc{URL: "http://text.test/", Text: page})
			if err != nil || m.Seen {
				t.Fatal(m, err)
			}
			steps := []struct {
				op        string // "record" or "forget"
				fp        uint64
				url       string
				wantFirst string
				wantKnown bool
			}{
				{"record", 1, "http://a.test/img.png", "http://a.test/img.png", false},
				{"record", 1, "http://b.test/copy.png", "http://a.test/img.png", true},
				{"record", 0, "http://zero.test/", "http://zero.test/", false},
				{"record", 0, "http://zero2.test/", "http://zero.test/", true},
				{"record", ^uint64(0), "", "", false}, // an empty URL is a URL
				{"record", ^uint64(0), "http://max.test/", "", true},
				{"record", m.Fingerprint, "http://c.test/", "http://text.test/", true}, // a text's fingerprint
				{"forget", 1, "", "", false},
				{"record", 1, "http://d.test/img.png", "http://d.test/img.png", false},
				{"forget", m.Fingerprint, "", "", false},
				{"record", m.Fingerprint, "http://e.test/", "http://e.test/", false},
			}
			for i, s := range steps {
				if s.op == "forget" {
					if err := c.Forget(ctx, s.fp); err != nil {
						t.Fatalf("step %d: Forget(%x): %v", i, s.fp, err)
					}
					continue
				}
				first, known, err := c.Record(s.fp, s.url)
				if err != nil || first != s.wantFirst || known != s.wantKnown {
					t.Fatalf("step %d: Record(%x, %q) = %q, %v, %v; want %q, %v", i, s.fp, s.url, first, known, err, s.wantFirst, s.wantKnown)
				}
			}
			// A recorded fingerprint matches the text exactly, never as a
			// near-duplicate.
			m2, err := c.Seen(ctx, dedup.Doc{URL: "http://f.test/", Text: page})
			if err != nil || !m2.Seen || m2.Near || m2.URL != "http://e.test/" {
				t.Fatalf("text after its fingerprint was recorded: %+v, %v", m2, err)
			}
			words := strings.Fields(string(page))
			words[7] = "edited"
			m3, err := c.Seen(ctx, dedup.Doc{URL: "http://g.test/", Text: []byte(strings.Join(words, " "))})
			if err != nil || m3.Seen {
				t.Fatalf("near-duplicate of a recorded fingerprint (no signature): %+v, %v", m3, err)
			}
		})
	}
}

// TestSameAsContent runs one random workload of near-duplicates, exact
// duplicates, new pages and Forgets through dedup.Content and through
// stores with full and packed signatures. With full values (Bits 64)
// every Match must be the same; with packed ones, every decision on
// pairs away from the threshold.
func TestSameAsContent(t *testing.T) {
	ctx := context.Background()
	n := 3000
	if raceEnabled {
		n = 300
	}
	// Small banding, so that buckets hold many members and Forget has to
	// move them around.
	lsh := shingle.LSHOptions{Bands: 16, Rows: 2}
	ref, err := dedup.NewContent(&dedup.ContentOptions{Sketch: shingle.Options{K: 32}, LSH: lsh})
	if err != nil {
		t.Fatal(err)
	}
	db := memDB(t)
	stores := map[int]*pebblecontent.Content{} // those still compared
	all := []int{64, 16, 8}
	for _, bits := range all {
		c, err := pebblecontent.New(db, fmt.Sprintf("b%d", bits), &pebblecontent.Options{Sketch: shingle.Options{K: 32}, LSH: lsh, Bits: bits, SyncInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		stores[bits] = c
	}
	r := rand.New(rand.NewPCG(4, 4))
	bases := make([][]string, 40)
	for i := range bases {
		bases[i] = strings.Fields(deduptest.Text(uint64(i), 60+r.IntN(200)))
	}
	var recorded []uint64
	differ := map[int]int{}
	for i := range n {
		if len(recorded) > 0 && r.IntN(5) == 0 {
			k := r.IntN(len(recorded))
			fp := recorded[k]
			recorded[k] = recorded[len(recorded)-1]
			recorded = recorded[:len(recorded)-1]
			if err := ref.Forget(ctx, fp); err != nil {
				t.Fatal(err)
			}
			for _, c := range stores {
				if err := c.Forget(ctx, fp); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		words := append([]string(nil), bases[r.IntN(len(bases))]...)
		for range r.IntN(12) {
			words[r.IntN(len(words))] = fmt.Sprint("w", r.IntN(50))
		}
		doc := dedup.Doc{URL: fmt.Sprintf("http://h.test/%d", i), Text: []byte(strings.Join(words, " "))}
		want, err := ref.Seen(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		if !want.Seen {
			recorded = append(recorded, want.Fingerprint)
		}
		for bits, c := range stores {
			got, err := c.Seen(ctx, doc)
			if err != nil {
				t.Fatal(err)
			}
			if bits == 64 && got != want {
				t.Fatalf("doc %d, Bits 64: %+v, dedup.Content: %+v", i, got, want)
			}
			if got.Seen != want.Seen || got.URL != want.URL {
				// A decision differs only for a pair near the threshold
				// (the packed estimate is a little noisier), after which
				// the two have recorded different documents: stop
				// comparing this store.
				if j := max(got.Similarity, want.Similarity); j < 0.7 {
					t.Fatalf("doc %d, Bits %d: %+v, dedup.Content: %+v", i, bits, got, want)
				}
				differ[bits]++
				delete(stores, bits)
			}
		}
	}
	t.Logf("%d documents, %d recorded at the end; packed stores that diverged near the threshold: %v", n, len(recorded), differ)
	for _, bits := range all {
		checkLayout(t, db, fmt.Sprintf("b%d", bits), 32*bits/8)
	}
}

// checkLayout checks the store's invariants on its keys: every bucket's
// slots are dense from 0, every member has a record, and every record
// with a signature is a member of exactly one bucket per band.
func checkLayout(t *testing.T, db *pebble.DB, prefix string, sigLen int) {
	t.Helper()
	p := []byte(prefix)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: append(bytes.Clone(p), 0xff)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	docs := map[uint64]bool{}       // fp → has a signature
	memberships := map[uint64]int{} // fp → buckets it is in
	bandsOf := map[uint64]map[uint16]bool{}
	var bucket []byte
	next := uint32(0)
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()[len(p):]
		switch k[0] {
		case 'm':
		case 'd':
			fp := binary.BigEndian.Uint64(k[1:])
			v := it.Value()
			n, w := binary.Uvarint(v[1:])
			docs[fp] = len(v)-1-w-int(n) == sigLen
		case 'b':
			if len(k) != 15 {
				t.Fatalf("bucket key %x", k)
			}
			if !bytes.Equal(bucket, k[:11]) {
				bucket, next = bytes.Clone(k[:11]), 0
			}
			if slot := binary.BigEndian.Uint32(k[11:]); slot != next {
				t.Fatalf("bucket %x: slot %d, want %d", bucket, slot, next)
			}
			next++
			fp := binary.BigEndian.Uint64(it.Value())
			memberships[fp]++
			band := binary.BigEndian.Uint16(k[1:])
			if bandsOf[fp] == nil {
				bandsOf[fp] = map[uint16]bool{}
			}
			if bandsOf[fp][band] {
				t.Fatalf("document %x twice in band %d", fp, band)
			}
			bandsOf[fp][band] = true
		default:
			t.Fatalf("unknown key %x", k)
		}
	}
	bands := 0
	for fp, sig := range docs {
		if sig {
			bands = max(bands, memberships[fp])
		}
	}
	for fp, sig := range docs {
		if want := map[bool]int{true: bands}[sig]; memberships[fp] != want {
			t.Fatalf("document %x in %d buckets, want %d", fp, memberships[fp], want)
		}
	}
	for fp := range memberships {
		if _, ok := docs[fp]; !ok {
			t.Fatalf("bucket member %x without a record", fp)
		}
	}
}
