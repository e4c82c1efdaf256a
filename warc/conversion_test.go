package warc

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// A conversion record added to an exchange lands after it in its file,
// names its response (or revisit) record, carries its target and date,
// survives a rotation between encoding and writing, stays out of the
// index, and a header value it cannot hold is refused with the exchange
// unchanged.
func TestConversion(t *testing.T) {
	for _, uncompressed := range []bool{false, true} {
		t.Run(fmt.Sprintf("uncompressed=%v", uncompressed), func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewWriter(&WriterOptions{Dir: dir, MaxFileSize: 6 << 10, Uncompressed: uncompressed})
			if err != nil {
				t.Fatal(err)
			}
			dom := []byte("<html><body><p>built by script</p></body></html>")
			var files []string
			for i := range 6 {
				// Payloads 0-2 again as 3-5: those are revisits.
				e, err := w.EncodeExchange(fmt.Sprintf("http://a.sim.test/%d", i), "", when, rawReq, respWith("", fmt.Sprintf("%03d%s", i%3, story)), nil, "")
				if err != nil {
					t.Fatal(err)
				}
				if err := w.AddConversion(e, "text/html\r\nX: y", dom); err == nil {
					t.Fatal("a content type with a line break was accepted")
				}
				if err := w.AddConversion(e, "text/html; charset=utf-8", append(dom, byte('0'+i))); err != nil {
					t.Fatal(err)
				}
				if i == 1 {
					// Another exchange rotates the file first: e is
					// encoded again for the next file.
					for range 3 {
						if _, _, err := w.WriteExchange("http://b.sim.test/", "", when, rawReq, respWith("", string(bytes.Repeat([]byte{'x'}, 2000))), nil); err != nil {
							t.Fatal(err)
						}
					}
				}
				file, _, err := w.WriteEncoded(e)
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, file)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, f := range w.Files() {
				recs := readAll(t, f)
				for k, r := range recs {
					if r.Type() != TypeConversion {
						continue
					}
					found++
					var ref *Record
					for _, o := range recs[:k] {
						if o.ID() == r.Header.Get(FieldRefersTo) {
							ref = o
						}
					}
					if ref == nil || (ref.Type() != TypeResponse && ref.Type() != TypeRevisit) {
						t.Errorf("%s: conversion of %s refers to %q, not a response before it in its file", f, r.TargetURI(), r.Header.Get(FieldRefersTo))
						continue
					}
					i := int(r.Block[len(r.Block)-1] - '0')
					if r.TargetURI() != ref.TargetURI() || r.Header.Get(FieldDate) != ref.Header.Get(FieldDate) ||
						r.Header.Get(FieldContentType) != "text/html; charset=utf-8" || !bytes.Equal(r.Block, append(dom, byte('0'+i))) ||
						r.Header.Get(FieldBlockDigest) != Digest(r.Block) || r.Header.Get(FieldWarcinfoID) != recs[0].ID() || files[i] != f {
						t.Errorf("%s: conversion record %+v of %s", f, r.Header, ref.TargetURI())
					}
					if wantRevisit := i >= 3; (ref.Type() == TypeRevisit) != wantRevisit {
						t.Errorf("exchange %d: the conversion refers to a %s", i, ref.Type())
					}
				}
				indexed := 0
				for _, r := range recs {
					if r.Type() == TypeResponse || r.Type() == TypeRevisit {
						indexed++
					}
				}
				if data, err := os.ReadFile(IndexPath(f)); err != nil || bytes.Count(data, []byte{'\n'}) != indexed {
					t.Errorf("%s: %d index lines (%v), want one per response and revisit, %d", f, bytes.Count(data, []byte{'\n'}), err, indexed)
				}
			}
			if found != 6 {
				t.Errorf("%d conversion records, want 6", found)
			}
			checkArchive(t, dir, true)
		})
	}
}
