package pebblecontent

import (
	"bytes"
	"errors"
	"testing"

	"github.com/crawlkit/crawlkit/shingle"
)

// FuzzDecodeDoc feeds arbitrary values (a damaged disk, another program's
// keys under the prefix) to the document decoder: it must fail with
// ErrCorrupt or return parts that encode back to the same value.
func FuzzDecodeDoc(f *testing.F) {
	f.Add(appendDoc(nil, "http://a.test/", bytes.Repeat([]byte{7}, 128)), 128)
	f.Add(appendDoc(nil, "", nil), 0)
	f.Add([]byte{1, 0x80, 0x00}, 16)
	f.Fuzz(func(t *testing.T, v []byte, sigLen int) {
		sigLen = max(sigLen, 0) % (shingle.MaxK * 8)
		url, packed, err := decodeDoc(v, sigLen)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if len(packed) != 0 && len(packed) != sigLen {
			t.Fatalf("signature of %d bytes accepted, want %d", len(packed), sigLen)
		}
		if got := appendDoc(nil, string(url), packed); !bytes.Equal(got, v) {
			t.Fatalf("%x decodes to %q, %x, which encode to %x", v, url, packed, got)
		}
	})
}

// FuzzDecodeMeta does the same for the store's options record.
func FuzzDecodeMeta(f *testing.F) {
	f.Add(appendMeta(nil, meta{k: 128, w: 4, bands: 14, rows: 9, bits: 8}))
	f.Add(appendMeta(nil, meta{exactOnly: true}))
	f.Add(appendMeta(nil, meta{k: shingle.MaxK, w: 16, seed: 1 << 63, method: shingle.Classic, bands: 1, rows: 1, bits: 64}))
	f.Fuzz(func(t *testing.T, v []byte) {
		m, err := decodeMeta(v)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if got := appendMeta(nil, m); !bytes.Equal(got, v) {
			t.Fatalf("%x decodes to %v, which encodes to %x", v, m, got)
		}
	})
}

// TestJaccard checks the packed estimator against shingle's reference
// implementations for every width.
func TestJaccard(t *testing.T) {
	sk, err := shingle.NewSketcher(nil)
	if err != nil {
		t.Fatal(err)
	}
	a := sk.Sketch([]byte("the quick brown fox jumps over the lazy dog and runs far away into the woods"))
	b := sk.Sketch([]byte("the quick brown fox jumps over the lazy cat and runs far away into the woods"))
	for _, tc := range []struct {
		name string
		x, y shingle.Signature
	}{{"different", a, b}, {"same", a, a}, {"short", a[:13], b[:13]}} {
		for _, width := range []int{1, 2, 4, 8} {
			pa, pb := pack(nil, tc.x, width), pack(nil, tc.y, width)
			got := jaccard(pa, pb, len(tc.x), width)
			want := shingle.Jaccard(tc.x, tc.y)
			if width < 8 {
				qa, _ := tc.x.Pack(8 * width)
				qb, _ := tc.y.Pack(8 * width)
				want = qa.Jaccard(qb)
			}
			if got != want {
				t.Errorf("%s, width %d: %v, want %v", tc.name, width, got, want)
			}
		}
	}
	if j := jaccard([]byte{1, 2}, []byte{1}, 2, 1); j != 0 {
		t.Errorf("signatures of different lengths: %v", j)
	}
}
