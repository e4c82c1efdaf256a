package crawlkit

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestProgressRoundTrip: the saved progress decodes to what was encoded,
// and malformed records are ErrCorruptProgress.
func TestProgressRoundTrip(t *testing.T) {
	full := progress{
		stats: Stats{Seeds: 3, Links: 1 << 40, Received: 7, Bytes: 12345, Hosts: 9, Elapsed: 90 * time.Second,
			LinksDropped: 4, PagesLinkCapped: 1,
			FilteredBy: map[string]uint64{"host budget": 2, "length": 1}, Errors: map[string]uint64{"dns": 5},
			Status: map[int]uint64{200: 10, 404: 1}},
		positions: [][]byte{[]byte("warc1 x"), {}, {0, 1, 2}},
	}
	full.stats.Outcomes[Fetched], full.stats.Outcomes[Queued] = 10, 30
	full.stats.Backoffs = 4
	for _, tc := range []struct {
		name string
		p    progress
	}{
		{"empty", progress{stats: Stats{FilteredBy: map[string]uint64{}, Errors: map[string]uint64{}, Status: map[int]uint64{}}}},
		{"full", full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := appendProgress(nil, &tc.p)
			got, err := decodeProgress(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.p.positions) == 0 {
				tc.p.positions = nil
			}
			for i := range got.positions {
				if len(got.positions[i]) == 0 {
					got.positions[i] = []byte{}
				}
			}
			if !reflect.DeepEqual(*got, tc.p) {
				t.Errorf("decoded %+v\nwant    %+v", *got, tc.p)
			}
			for _, bad := range [][]byte{nil, {9}, b[:len(b)-1], append(append([]byte{}, b...), 0)} {
				if _, err := decodeProgress(bad); !errors.Is(err, ErrCorruptProgress) {
					t.Errorf("decodeProgress(%x) = %v, want ErrCorruptProgress", bad, err)
				}
			}
		})
	}
}

// FuzzProgress: decoding any input returns a progress or
// ErrCorruptProgress, never panics, and what decodes encodes to a record
// that decodes to the same progress.
func FuzzProgress(f *testing.F) {
	p := progress{stats: Stats{Seeds: 1, FilteredBy: map[string]uint64{"x": 1}, Status: map[int]uint64{200: 2}}, positions: [][]byte{[]byte("pos")}}
	f.Add(appendProgress(nil, &p))
	f.Add([]byte{progressVersion})
	f.Add([]byte{progressVersion, 200, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeProgress(b)
		if err != nil {
			if !errors.Is(err, ErrCorruptProgress) {
				t.Fatalf("error %v does not wrap ErrCorruptProgress", err)
			}
			return
		}
		again, err := decodeProgress(appendProgress(nil, got))
		if err != nil {
			t.Fatalf("%x decodes, but its encoding does not: %v", b, err)
		}
		if !reflect.DeepEqual(again.stats, got.stats) || len(again.positions) != len(got.positions) {
			t.Fatalf("%x: decoded %+v, then %+v", b, got, again)
		}
	})
}

// TestProgressVersion1 reads a progress record written before Backoffs
// was saved: version 1, without the field.
func TestProgressVersion1(t *testing.T) {
	p := progress{stats: Stats{Seeds: 2, FilteredBy: map[string]uint64{}, Errors: map[string]uint64{}, Status: map[int]uint64{200: 3}}}
	b := appendProgress(nil, &p)
	v1 := append([]byte{progressVersionV1}, b[1:len(b)-1]...) // without Backoffs (0, one byte)
	got, err := decodeProgress(v1)
	if err != nil || got.stats.Seeds != 2 || got.stats.Status[200] != 3 || got.stats.Backoffs != 0 {
		t.Fatalf("version 1 record: %+v, %v", got, err)
	}
}
