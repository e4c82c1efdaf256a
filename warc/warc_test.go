package warc

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	rawReq  = []byte("GET /a HTTP/1.1\r\nHost: h000.sim.test\r\nUser-Agent: crawlkit\r\n\r\n")
	rawResp = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><title>A</title>hello</html>")
	when    = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
)

func readAll(t *testing.T, path string) []*Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := NewReader(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*Record
	for rec, err := range rd.All() {
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		recs = append(recs, rec)
	}
	return recs
}

func TestWriteExchangeRoundTrip(t *testing.T) {
	for _, uncompressed := range []bool{false, true} {
		t.Run(fmt.Sprintf("uncompressed=%v", uncompressed), func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewWriter(&WriterOptions{Dir: dir, Uncompressed: uncompressed, Now: func() time.Time { return when }})
			if err != nil {
				t.Fatal(err)
			}
			file, off, err := w.WriteExchange("http://h000.sim.test/a", "127.0.0.1", when, rawReq, rawResp, map[string]string{"outlinks": "http://h001.sim.test/"})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			recs := readAll(t, file)
			if got, want := types(recs), "warcinfo response request metadata"; got != want {
				t.Fatalf("record types = %q, want %q", got, want)
			}
			resp := recs[1]
			if resp.Offset != off {
				t.Errorf("response offset read %d, written %d", resp.Offset, off)
			}
			if !bytes.Equal(resp.Block, rawResp) {
				t.Errorf("response block = %q", resp.Block)
			}
			if resp.TargetURI() != "http://h000.sim.test/a" || !resp.Date().Equal(when) {
				t.Errorf("target %q date %v", resp.TargetURI(), resp.Date())
			}
			if got := resp.Header.Get(FieldPayloadDigest); got != Digest([]byte("<html><title>A</title>hello</html>")) {
				t.Errorf("payload digest %q", got)
			}
			if got := resp.Header.Get(FieldBlockDigest); got != Digest(rawResp) {
				t.Errorf("block digest %q", got)
			}
			for _, r := range recs[2:] {
				if r.Header.Get(FieldConcurrentTo) != resp.ID() {
					t.Errorf("%s record not concurrent to the response", r.Type())
				}
			}
			if recs[1].Header.Get(FieldWarcinfoID) != recs[0].ID() {
				t.Errorf("response does not name the file's warcinfo record")
			}
			if !strings.Contains(string(recs[3].Block), "outlinks: http://h001.sim.test/\r\n") {
				t.Errorf("metadata block = %q", recs[3].Block)
			}
		})
	}
}

func types(recs []*Record) string {
	var s []string
	for _, r := range recs {
		s = append(s, r.Type())
	}
	return strings.Join(s, " ")
}

// A record's offset alone is enough to read it back: the point of one gzip
// member per record, and what a replay index relies on.
func TestSeekToOffset(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(&WriterOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	offs := map[int64]string{}
	var file string
	for i := range 20 {
		u := fmt.Sprintf("http://h%03d.sim.test/", i)
		f, off, err := w.WriteExchange(u, "", when, rawReq, append(rawResp, byte('a'+i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		file, offs[off] = f, u
	}
	w.Close()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for off, u := range offs {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		rd, err := NewReader(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := rd.Next()
		if err != nil {
			t.Fatalf("at %d: %v", off, err)
		}
		if rec.TargetURI() != u || rec.Type() != TypeResponse {
			t.Errorf("at %d: %s %s, want response %s", off, rec.Type(), rec.TargetURI(), u)
		}
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(&WriterOptions{Dir: dir, MaxFileSize: 2000})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := range n {
		if _, _, err := w.WriteExchange(fmt.Sprintf("http://h.sim.test/%d", i), "", when, rawReq, rawResp, nil); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	files := w.Files()
	if len(files) < 3 {
		t.Fatalf("%d files, want rotation into several", len(files))
	}
	seen := 0
	for _, f := range files {
		recs := readAll(t, f)
		if recs[0].Type() != TypeWarcinfo || recs[0].Header.Get(FieldFilename) != filepath.Base(f) {
			t.Errorf("%s does not start with its warcinfo record", f)
		}
		for _, r := range recs {
			if r.Type() == TypeResponse {
				seen++
			}
		}
	}
	if seen != n {
		t.Errorf("%d responses across files, want %d", seen, n)
	}
	if _, _, err := w.WriteExchange("http://x/", "", when, nil, rawResp, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("write after Close: %v, want ErrClosed", err)
	}
}

// Files compressed as one gzip member (as `gzip file.warc` makes) read too.
func TestWholeFileGzip(t *testing.T) {
	var plain bytes.Buffer
	rw := NewRecordWriter(&plain, false)
	for i := range 3 {
		r := &Record{Block: []byte(fmt.Sprintf("block %d", i))}
		r.Header.Set(FieldType, TypeResource)
		if err := rw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	var z bytes.Buffer
	gw := gzip.NewWriter(&z)
	gw.Write(plain.Bytes())
	gw.Close()
	rd, err := NewReader(&z, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rec, err := rd.Next()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if string(rec.Block) != fmt.Sprintf("block %d", i) {
			t.Errorf("record %d block %q", i, rec.Block)
		}
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Errorf("after last: %v, want io.EOF", err)
	}
}

func TestMalformed(t *testing.T) {
	good := "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n"
	tests := []struct {
		name, in string
		max      int64
	}{
		{"not warc", "HTTP/1.1 200 OK\r\n\r\n", 0},
		{"no content length", "WARC/1.1\r\nWARC-Type: resource\r\n\r\nhello", 0},
		{"negative length", "WARC/1.1\r\nContent-Length: -1\r\n\r\n", 0},
		{"truncated block", "WARC/1.1\r\nContent-Length: 50\r\n\r\nhello", 0},
		{"truncated header", "WARC/1.1\r\nContent-Le", 0},
		{"header line without colon", "WARC/1.1\r\nnonsense\r\n\r\n", 0},
		{"block over limit", good, 4},
		{"bad second record", good + "WARC/1.1\r\nContent-Length: x\r\n\r\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd, err := NewReader(strings.NewReader(tt.in), &ReaderOptions{MaxBlockBytes: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			var last error
			for range 3 {
				if _, last = rd.Next(); last != nil {
					break
				}
			}
			var we *Error
			if !errors.As(last, &we) || !errors.Is(last, ErrFormat) {
				t.Fatalf("error %v, want *Error wrapping ErrFormat", last)
			}
		})
	}
}

func TestCorruptGzip(t *testing.T) {
	var buf bytes.Buffer
	rw := NewRecordWriter(&buf, true)
	r := &Record{Block: bytes.Repeat([]byte("x"), 1000)}
	r.Header.Set(FieldType, TypeResource)
	rw.Write(r)
	b := buf.Bytes()
	b[len(b)-6] ^= 0xff // the CRC-32 in the gzip trailer
	rd, err := NewReader(bytes.NewReader(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rd.Next()
	if err == nil {
		_, err = rd.Next()
	}
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("error %v, want ErrFormat", err)
	}
}

func TestInvalidHeaderFieldRefused(t *testing.T) {
	var buf bytes.Buffer
	rw := NewRecordWriter(&buf, false)
	r := &Record{}
	r.Header.Set(FieldType, TypeResource)
	r.Header.Set(FieldTargetURI, "http://x/\r\nWARC-Type: forged")
	if err := rw.Write(r); err == nil {
		t.Fatal("a CRLF in a header value was written")
	}
}

func TestEmptyInput(t *testing.T) {
	rd, err := NewReader(strings.NewReader(""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Fatalf("%v, want io.EOF", err)
	}
}

// TestWriterOptions checks the options convention: nil fails with an
// *Error because Dir is required, and the Writer keeps its own copy.
func TestWriterOptions(t *testing.T) {
	var werr *Error
	if _, err := NewWriter(nil); !errors.As(err, &werr) {
		t.Fatalf("NewWriter(nil) = %v, want an *Error", err)
	}
	dir := t.TempDir()
	opts := &WriterOptions{Dir: dir, Prefix: "a", Info: map[string]string{"operator": "x"}}
	w, err := NewWriter(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Prefix, opts.Info["operator"] = "b", "y"
	if _, _, err := w.WriteExchange("http://x/", "", when, rawReq, rawResp, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) != 1 || !strings.HasPrefix(filepath.Base(files[0]), "a-") {
		t.Fatalf("files %v, want one named a-...", files)
	}
	if got := readAll(t, files[0])[0].Block; !bytes.Contains(got, []byte("operator: x")) {
		t.Fatalf("warcinfo %q does not hold the operator given at NewWriter", got)
	}
}

func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	rw := NewRecordWriter(&buf, true)
	r := &Record{Block: rawResp}
	r.Header.Set(FieldType, TypeResponse)
	rw.Write(r)
	f.Add(buf.Bytes())
	f.Add([]byte("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n"))
	f.Add([]byte("WARC/1.0\r\nContent-Length: 99999999999\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data), &ReaderOptions{MaxBlockBytes: 1 << 20})
		if err != nil {
			return
		}
		for range 1000 {
			rec, err := rd.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrFormat) {
					var we *Error
					if !errors.As(err, &we) {
						t.Fatalf("untyped error %v", err)
					}
				}
				return
			}
			if n, err := strconv.ParseInt(rec.Header.Get(FieldContentLength), 10, 64); err != nil || n != int64(len(rec.Block)) {
				t.Fatalf("block of %d bytes, Content-Length %q", len(rec.Block), rec.Header.Get(FieldContentLength))
			}
		}
	})
}

// BenchmarkWriteExchange writes the same 20 KB page over and over: as a
// response each time (NoRevisits), and as the revisit records a Writer
// makes of it by default.
func BenchmarkWriteExchange(b *testing.B) {
	for _, bb := range []struct {
		name       string
		noRevisits bool
	}{{"response", true}, {"revisit", false}} {
		b.Run(bb.name, func(b *testing.B) {
			dir := b.TempDir()
			w, err := NewWriter(&WriterOptions{Dir: dir, NoRevisits: bb.noRevisits})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			resp := append([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"), bytes.Repeat([]byte("<p>some page text and more</p>\n"), 600)...)
			b.ReportAllocs()
			b.SetBytes(int64(len(resp) + len(rawReq)))
			for b.Loop() {
				if _, _, err := w.WriteExchange("http://h000.sim.test/a", "127.0.0.1", when, rawReq, resp, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}

func BenchmarkRead(b *testing.B) {
	var buf bytes.Buffer
	rw := NewRecordWriter(&buf, true)
	resp := append([]byte("HTTP/1.1 200 OK\r\n\r\n"), bytes.Repeat([]byte("<p>some page text and more</p>\n"), 600)...)
	const n = 100
	for range n {
		r := &Record{Block: resp}
		r.Header.Set(FieldType, TypeResponse)
		rw.Write(r)
	}
	data := buf.Bytes()
	b.ReportAllocs()
	b.SetBytes(int64(n * len(resp)))
	for b.Loop() {
		rd, _ := NewReader(bytes.NewReader(data), nil)
		for {
			if _, err := rd.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
}
