package warc

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestRepair(t *testing.T) {
	for _, uncompressed := range []bool{false, true} {
		t.Run(fmt.Sprintf("uncompressed=%v", uncompressed), func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewWriter(&WriterOptions{Dir: dir, Uncompressed: uncompressed})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				page(t, w, "h.sim.test", i)
			}
			w.Close()
			orig, err := os.ReadFile(w.Files()[0])
			if err != nil {
				t.Fatal(err)
			}
			recs := readAll(t, w.Files()[0])
			first, last := recs[1].Offset, recs[len(recs)-1].Offset
			tests := []struct {
				name       string
				from, to   int64 // lengths cut at
				step       int64
				kept, left int64 // bytes and records kept
			}{
				{"intact", int64(len(orig)), int64(len(orig)), 1, int64(len(orig)), int64(len(recs))},
				{"torn last record", last + 1, int64(len(orig)) - 1, 1, last, int64(len(recs) - 1)},
				{"at a record boundary", last, last, 1, last, int64(len(recs) - 1)},
				{"torn warcinfo", 1, first - 1, 7, 0, 0},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					path := filepath.Join(t.TempDir(), filepath.Base(w.Files()[0]))
					for cut := tc.from; cut <= tc.to; cut += tc.step {
						if err := os.WriteFile(path, orig[:cut], 0o644); err != nil {
							t.Fatal(err)
						}
						kept, err := Repair(path)
						if err != nil || kept != tc.kept {
							t.Fatalf("cut at %d: Repair = %d, %v; want %d", cut, kept, err, tc.kept)
						}
						if fi, _ := os.Stat(path); fi.Size() != tc.kept {
							t.Fatalf("cut at %d: %d bytes left, want %d", cut, fi.Size(), tc.kept)
						}
						if n := int64(len(readAll(t, path))); n != tc.left {
							t.Fatalf("cut at %d: %d records read back, want %d", cut, n, tc.left)
						}
					}
				})
			}

			// Damage that is not a torn tail is reported, not cut.
			damaged := bytes.Clone(orig)
			if uncompressed {
				copy(damaged[recs[2].Offset:], "XARC")
			} else {
				damaged[recs[3].Offset-6] ^= 0xff // a CRC-32 in a gzip trailer
			}
			path := filepath.Join(t.TempDir(), filepath.Base(w.Files()[0]))
			if err := os.WriteFile(path, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			kept, err := Repair(path)
			var we *Error
			if !errors.As(err, &we) || !errors.Is(err, ErrFormat) || kept != 0 {
				t.Fatalf("Repair of a damaged file = %d, %v; want an *Error wrapping ErrFormat", kept, err)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, damaged) {
				t.Errorf("Repair changed a damaged file")
			}
		})
	}
}

func TestRepairEmptyAndMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.warc.gz")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if kept, err := Repair(path); kept != 0 || err != nil {
		t.Errorf("Repair of an empty file = %d, %v", kept, err)
	}
	var we *Error
	if _, err := Repair(path + ".missing"); !errors.As(err, &we) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Repair of a missing file: %v", err)
	}
}

// A file compressed as one gzip member holds no record boundary to cut a
// torn tail at: Repair refuses it.
func TestRepairWholeFileGzip(t *testing.T) {
	var plain bytes.Buffer
	rw := NewRecordWriter(&plain, false)
	for i := range 3 {
		r := &Record{Block: bytes.Repeat([]byte{byte('a' + i)}, 5000)}
		r.Header.Set(FieldType, TypeResource)
		if err := rw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	var z bytes.Buffer
	gw := gzip.NewWriter(&z)
	gw.Write(plain.Bytes())
	gw.Close()
	torn := z.Bytes()[:z.Len()-20]
	path := filepath.Join(t.TempDir(), "whole.warc.gz")
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	if kept, err := Repair(path); !errors.Is(err, ErrFormat) || kept != 0 {
		t.Fatalf("Repair = %d, %v; want an error wrapping ErrFormat", kept, err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, torn) {
		t.Errorf("Repair changed the file")
	}
}
