package warc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The keys the Python surt package (pywb's) makes for these URLs; the
// cases come from its documented behaviour (www labels, default ports,
// argument order, trailing slashes, session identifiers).
func TestSURT(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://www.archive.org/goo/?a=2&b&a=1", "org,archive)/goo?a=1&a=2&b"},
		{"http://archive.org", "org,archive)/"},
		{"http://archive.org/", "org,archive)/"},
		{"http://archive.org/goo/", "org,archive)/goo"},
		{"http://archive.org/goo/?", "org,archive)/goo"},
		{"http://www.archive.org:8080/goo", "org,archive:8080)/goo"},
		{"http://www.archive.org:80/", "org,archive)/"},
		{"https://www.archive.org:443/", "org,archive)/"},
		{"https://www.archive.org:80/", "org,archive:80)/"},
		{"http://www.archive.org:443/", "org,archive:443)/"},
		{"http://1.2.3.4:8080/", "4,3,2,1:8080)/"},
		{"http://www12.foo.com/", "com,foo)/"},
		{"http://www2foo.com/", "com,www2foo)/"},
		{"http://www2.www2foo.com/", "com,www2foo)/"},
		{"http://user:pw@Example.COM./A/B.html#frag", "com,example)/a/b.html"},
		{"http://example.com/a/./b/../c/", "com,example)/a/c"},
		{"http://example.com//a//b", "com,example)/a/b"},
		{"http://example.com/index.html?b=b&a=b&b=a&a=a", "com,example)/index.html?a=a&a=b&b=a&b=b"},
		{"http://example.com/x?a=1&", "com,example)/x?&a=1"},
		{"http://example.com/x?Q=Z", "com,example)/x?q=z"},
		{"http://example.com/x?jsessionid=0123456789abcdef0123456789abcdef&b=1", "com,example)/x?b=1"},
		{"http://example.com/x?a=1&PHPSESSID=0123456789abcdef0123456789ABCDEF", "com,example)/x?&a=1"}, // "a=1&", then sorted
		{"http://example.com/x?cfid=12&cftoken=34&z=1", "com,example)/x?z=1"},
		{"http://example.com/(S(4hqa0555fwsecu455xqckv45))/mileg.aspx", "com,example)/mileg.aspx"},
		{"http://example.com/a%20b", "com,example)/a%20b"},
		{"http://h003.sim.test:41234/p/4.html", "test,sim,h003:41234)/p/4.html"},
	} {
		got, err := SURT(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("SURT(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "/relative/path", "http://", "http://[::1", "mailto:someone@example.com"} {
		if got, err := SURT(in); !errors.Is(err, ErrSURT) {
			t.Errorf("SURT(%q) = %q, %v; want ErrSURT", in, got, err)
		}
	}
}

// A key holds no byte at or below the space, whatever the URL holds, so
// that sorting lines as bytes sorts them by key.
func TestSURTNoSpace(t *testing.T) {
	for _, in := range []string{"http://example.com/a\x7fb", "http://example.com/?q=a b", "http://example.com/caf\xc3\xa9", "http://ex\tample.com/"} {
		got, err := SURT(in)
		if err != nil {
			continue // refused by url.Parse: nothing to key
		}
		if i := strings.IndexFunc(got, func(r rune) bool { return r <= ' ' || r >= 0x7f }); i >= 0 {
			t.Errorf("SURT(%q) = %q: byte %q at %d", in, got, got[i], i)
		}
	}
}

func TestIndexLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		e    IndexEntry
		want string
	}{
		{"response", IndexEntry{Key: "com,example)/", Timestamp: "20261126120000", URL: "http://example.com/", Mime: "text/html", Status: 200, Digest: "sha1:AAAA", Length: 1043, Offset: 2360, Filename: "a.warc.gz"},
			`com,example)/ 20261126120000 {"url": "http://example.com/", "mime": "text/html", "status": "200", "digest": "sha1:AAAA", "length": "1043", "offset": "2360", "filename": "a.warc.gz"}`},
		{"revisit", IndexEntry{Key: "com,example)/b", Timestamp: "20261126120001", URL: "http://example.com/b", Mime: "warc/revisit", Status: 200, Digest: "sha1:AAAA", Length: 300, Offset: 0, Filename: "a.warc.gz"},
			`com,example)/b 20261126120001 {"url": "http://example.com/b", "mime": "warc/revisit", "status": "200", "digest": "sha1:AAAA", "length": "300", "offset": "0", "filename": "a.warc.gz"}`},
		{"resource without status", IndexEntry{Key: "com,example)/c", Timestamp: "20261126120002", URL: "http://example.com/c", Mime: "image/png", Length: 9, Offset: 7, Filename: "b.warc"},
			`com,example)/c 20261126120002 {"url": "http://example.com/c", "mime": "image/png", "length": "9", "offset": "7", "filename": "b.warc"}`},
		{"escapes", IndexEntry{Key: "com,example)/q", Timestamp: "20261126120003", URL: "http://example.com/q?a=\"b\"\\\x01", Filename: "x\"y.warc"},
			`com,example)/q 20261126120003 {"url": "http://example.com/q?a=\"b\"\\\u0001", "length": "0", "offset": "0", "filename": "x\"y.warc"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.e.AppendLine(nil))
			if got != tt.want {
				t.Fatalf("line\n%s\nwant\n%s", got, tt.want)
			}
			back, err := ParseIndexLine([]byte(got + "\n"))
			if err != nil || !reflect.DeepEqual(back, tt.e) {
				t.Fatalf("parsed back %+v, %v", back, err)
			}
		})
	}
}

func TestParseIndexLine(t *testing.T) {
	ok := []struct {
		name, line string
		want       IndexEntry
	}{
		{"numbers as JSON numbers", `com,example)/ 20261126120000 {"url": "http://example.com/", "status": 404, "length": 12, "offset": 34, "filename": "f.warc.gz"}`,
			IndexEntry{Key: "com,example)/", Timestamp: "20261126120000", URL: "http://example.com/", Status: 404, Length: 12, Offset: 34, Filename: "f.warc.gz"}},
		{"pywb's dash for no status, extra fields, CRLF", "com,example)/ 2026 {\"url\": \"http://example.com/\", \"status\": \"-\", \"offset\": \"0\", \"filename\": \"f\", \"method\": \"POST\"}\r\n",
			IndexEntry{Key: "com,example)/", Timestamp: "2026", URL: "http://example.com/", Filename: "f"}},
	}
	for _, tt := range ok {
		got, err := ParseIndexLine([]byte(tt.line))
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	for _, line := range []string{
		"",
		"nokey",
		" 20261126120000 {}",
		"k 2026112612000x {\"url\": \"u\", \"offset\": \"0\", \"filename\": \"f\"}",
		"k 202 {\"url\": \"u\", \"offset\": \"0\", \"filename\": \"f\"}",
		"k 20261126120000",
		"k 20261126120000 {not json}",
		"k 20261126120000 {\"offset\": \"0\", \"filename\": \"f\"}",
		"k 20261126120000 {\"url\": \"u\", \"filename\": \"f\"}",
		"k 20261126120000 {\"url\": \"u\", \"offset\": \"0\"}",
		"k 20261126120000 {\"url\": \"u\", \"offset\": \"-1\", \"filename\": \"f\"}",
		"k 20261126120000 {\"url\": \"u\", \"offset\": \"1e3\", \"filename\": \"f\"}",
		"k 20261126120000 {\"url\": \"u\", \"offset\": \"0\", \"filename\": \"f\", \"status\": \"1000\"}",
	} {
		if e, err := ParseIndexLine([]byte(line)); !errors.Is(err, ErrIndexFormat) {
			t.Errorf("ParseIndexLine(%q) = %+v, %v; want ErrIndexFormat", line, e, err)
		}
	}
}

// FuzzParseIndexLine: no input panics; a line that parses formats back to
// a line that parses to the same entry.
func FuzzParseIndexLine(f *testing.F) {
	f.Add([]byte(`com,example)/ 20261126120000 {"url": "http://example.com/", "mime": "text/html", "status": "200", "digest": "sha1:AAAA", "length": "1043", "offset": "2360", "filename": "a.warc.gz"}`))
	f.Add([]byte(`k 2026 {"url": "\ud800", "offset": 1, "filename": "f", "status": "-"}`))
	f.Add([]byte("k 20261126120000 {\"url\": \"u\xff\", \"offset\": \"0\", \"filename\": \"f\"}\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseIndexLine(line)
		if err != nil {
			if !errors.Is(err, ErrIndexFormat) {
				t.Fatalf("error %v does not wrap ErrIndexFormat", err)
			}
			return
		}
		again, err := ParseIndexLine(e.AppendLine(nil))
		if err != nil || again != e {
			t.Fatalf("%+v formats to %q, which parses to %+v, %v", e, e.AppendLine(nil), again, err)
		}
	})
}

func TestTimestamp14(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"2026-11-26T12:00:00Z", "20261126120000"},
		{"2026-11-26T12:00:00.123456Z", "20261126120000"},
		{"2026-11-26T12:00:00+01:00", "20261126120000"},
		{"2026-11-26", "20261126"},
		{"", ""},
		{"soon", ""},
	} {
		if got := timestamp14(tt.in); got != tt.want {
			t.Errorf("timestamp14(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHTTPStatus(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"HTTP/1.1 200 OK\r\n\r\n", 200},
		{"HTTP/1.0 404\r\n", 404},
		{"HTTP/2 301 Moved\r\n", 301},
		{"HTTP/1.1 20 OK\r\n", 0},
		{"HTTP/1.1 abc\r\n", 0},
		{"GET / HTTP/1.1\r\n", 0},
		{"", 0},
	} {
		if got := httpStatus([]byte(tt.in)); got != tt.want {
			t.Errorf("httpStatus(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// IndexFile and the Writer's own index are the same lines: the Writer
// indexes as it writes, IndexFile from the file, with one rule.
func TestIndexFileMatchesWriter(t *testing.T) {
	for _, uncompressed := range []bool{false, true} {
		t.Run(fmt.Sprintf("uncompressed=%v", uncompressed), func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewWriter(&WriterOptions{Dir: dir, Uncompressed: uncompressed, MaxFileSize: 8 << 10})
			if err != nil {
				t.Fatal(err)
			}
			writeMixed(t, w, 30)
			res := &Record{Block: []byte("\x89PNG...")}
			res.Header.Set(FieldType, TypeResource)
			res.Header.Set(FieldTargetURI, "http://h.sim.test/logo.png")
			res.Header.Set(FieldContentType, "image/png")
			if err := w.Write(res); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if len(w.Files()) < 2 {
				t.Fatalf("want several files, got %d", len(w.Files()))
			}
			lines := 0
			for _, f := range w.Files() {
				written, err := os.ReadFile(IndexPath(f))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := IndexFile(f); err != nil {
					t.Fatal(err)
				}
				rebuilt, err := os.ReadFile(IndexPath(f))
				if err != nil {
					t.Fatal(err)
				}
				if string(written) != string(rebuilt) {
					t.Fatalf("%s: the Writer's index\n%s\nIndexFile's\n%s", filepath.Base(f), written, rebuilt)
				}
				lines += strings.Count(string(written), "\n")
				checkIndexAgrees(t, f)
			}
			// 30 exchanges and the resource: one line each.
			if lines != 31 {
				t.Errorf("%d index lines, want 31", lines)
			}
		})
	}
}

// writeMixed writes n exchanges: every third repeats the payload of page 0
// (a revisit), every fifth is a near-duplicate of it (a response), the
// others distinct.
func writeMixed(t testing.TB, w *Writer, n int) {
	t.Helper()
	base := strings.Repeat("<p>the same story on many pages</p>", 12)
	for i := range n {
		body := fmt.Sprintf("<p>page %d</p>%s", i, base)
		switch {
		case i%3 == 0:
			body = base
		case i%5 == 0:
			body = base + " "
		}
		resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nX-Page: %d\r\n\r\n%s", i, body)
		u := fmt.Sprintf("http://h.sim.test/p/%d", i)
		if _, _, err := w.WriteExchange(u, "127.0.0.1", when, []byte("GET /p HTTP/1.1\r\n\r\n"), []byte(resp), map[string]string{"depth": "1"}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkIndexAgrees checks that the index of the WARC file at path and the
// file agree: every line names a record at its offset, of its URL, type,
// length and digest; every record an index holds has a line.
func checkIndexAgrees(t *testing.T, path string) {
	t.Helper()
	ix, err := OpenIndex([]string{IndexPath(path)})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	data, err := os.ReadFile(IndexPath(path))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[int64]IndexEntry{}
	for l := range strings.Lines(string(data)) {
		e, err := ParseIndexLine([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", IndexPath(path), err)
		}
		if e.Filename != filepath.Base(path) {
			t.Fatalf("%s names file %s", IndexPath(path), e.Filename)
		}
		rec, err := ix.Record(e)
		if err != nil {
			t.Fatalf("%s: line %q: %v", IndexPath(path), l, err)
		}
		if (e.Mime == "warc/revisit") != (rec.Type() == TypeRevisit) || rec.Header.Get(FieldPayloadDigest) != e.Digest && rec.Type() != TypeResource {
			t.Fatalf("line %q: record of type %s, digest %s", l, rec.Type(), rec.Header.Get(FieldPayloadDigest))
		}
		lines[e.Offset] = e
	}
	recs := readAll(t, path)
	st, _ := os.Stat(path)
	for i, rec := range recs {
		end := st.Size()
		if i+1 < len(recs) {
			end = recs[i+1].Offset
		}
		want, indexed := indexEntry(rec, end-rec.Offset, filepath.Base(path))
		got, ok := lines[rec.Offset]
		if indexed != ok || ok && got != want {
			t.Fatalf("%s: record %s at %d: line %+v (%v), want %+v (%v)", filepath.Base(path), rec.Type(), rec.Offset, got, ok, want, indexed)
		}
		delete(lines, rec.Offset)
	}
	if len(lines) > 0 {
		t.Fatalf("%s: %d lines name no record: %v", IndexPath(path), len(lines), lines)
	}
}

// FuzzIndexLookup looks URLs up in arbitrary CDXJ files: nothing panics,
// failures are typed, and in a file of valid lines sorted as bytes the
// bisection finds exactly the lines a linear scan finds.
func FuzzIndexLookup(f *testing.F) {
	var seed []byte
	// 40 lines, past the bisection's scan window.
	for _, e := range benchEntries(40) {
		seed = append(e.AppendLine(seed), '\n')
	}
	f.Add(seed, "http://h007.sim.test/archive/2026/0000007/a-story-title.html")
	f.Add(seed, "http://h007.sim.test/nothing")
	f.Add([]byte("a 2026 {}\nb\n"), "http://b/")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, rawURL string) {
		path := filepath.Join(dir, "f.cdxj")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ix, err := OpenIndex([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		got, err := ix.Lookup(rawURL)
		if err != nil {
			var we *Error
			if !errors.Is(err, ErrIndexFormat) && !errors.Is(err, ErrSURT) && !errors.As(err, &we) {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		key, _ := SURT(rawURL)
		for _, e := range got {
			if e.Key != key {
				t.Fatalf("Lookup(%q) returned key %q", rawURL, e.Key)
			}
		}
		// A well-formed index: compare with a linear scan.
		lines := strings.SplitAfter(string(data), "\n")
		var want []IndexEntry
		for i, l := range lines {
			if l == "" {
				continue
			}
			e, err := ParseIndexLine([]byte(l))
			if err != nil || !strings.HasSuffix(l, "\n") || i > 0 && lines[i-1] > l || strings.ContainsAny(e.Key, "\r\n") {
				return
			}
			if e.Key == key {
				want = append(want, e)
			}
		}
		slices.SortStableFunc(want, func(a, b IndexEntry) int { return strings.Compare(a.Timestamp, b.Timestamp) })
		if !slices.Equal(got, want) {
			t.Fatalf("Lookup(%q) = %d entries, a linear scan %d", rawURL, len(got), len(want))
		}
	})
}
