package crawlkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
)

// testPage returns a page of URL u with n links.
func testPage(u string, n int) *Page {
	pu, _ := url.Parse(u)
	p := &Page{URL: u, Fetched: time.Unix(1e9, 0), Fingerprint: 0xabc,
		Response: &fetch.Response{URL: pu, Status: 200, ContentType: "text/html", Header: http.Header{}, Body: []byte("<p>x</p>")},
		Document: &fetch.Document{Title: "T " + u}}
	for i := range n {
		p.Links = append(p.Links, u+"/"+strings.Repeat("l", i+1))
	}
	return p
}

// closeRecorder is a writer that remembers being closed.
type closeRecorder struct {
	bytes.Buffer
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// TestWriterSinksLeaveWritersOpen: JSONLines and LinkLog flush at Close
// and never close the writer they were handed, even when it is an
// io.Closer (os.Stdout is one).
func TestWriterSinksLeaveWritersOpen(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		make func(w *closeRecorder) Sink
		want string
	}{
		{"JSONLines", func(w *closeRecorder) Sink { return NewJSONLines(w) }, `"url":"http://a.test/"`},
		{"LinkLog", func(w *closeRecorder) Sink { return NewLinkLog(w) }, "http://a.test/\thttp://a.test//l\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &closeRecorder{}
			s := tc.make(w)
			if err := s.Write(ctx, testPage("http://a.test/", 2)); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if w.closed {
				t.Error("Close closed the writer the sink was handed")
			}
			if !strings.Contains(w.String(), tc.want) {
				t.Errorf("output %q lacks %q", w.String(), tc.want)
			}
		})
	}
}

// TestLineFilesRewind: JSONLinesFile and LinkLogFile cut a torn last
// line at open, write a page with one write, report the file's length as
// their position and rewind to an earlier one; a position beyond the
// file is ErrSinkBehind.
func TestLineFilesRewind(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		open  func(string) (DurableSink, error)
		lines func(*Page) int
	}{
		{"JSONLinesFile", func(p string) (DurableSink, error) { return OpenJSONLines(p) }, func(*Page) int { return 1 }},
		{"LinkLogFile", func(p string) (DurableSink, error) { return OpenLinkLog(p) }, func(p *Page) int { return max(1, len(p.Links)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out")
			if err := os.WriteFile(path, []byte("a whole line\na torn li"), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := tc.open(path)
			if err != nil {
				t.Fatal(err)
			}
			pos0, _ := s.Position()
			var positions [][]byte
			want := 1
			for i := range 5 {
				p := testPage("http://a.test/"+strings.Repeat("x", i), i)
				if ps, ok := s.(PreparingSink); ok && i%2 == 1 {
					pr, err := ps.Prepare(ctx, p)
					if err == nil {
						err = pr.Write()
					}
					if err != nil {
						t.Fatal(err)
					}
				} else if err := s.Write(ctx, p); err != nil {
					t.Fatal(err)
				}
				pos, err := s.Position()
				if err != nil {
					t.Fatal(err)
				}
				positions = append(positions, pos)
				if i < 3 {
					want += tc.lines(p)
				}
			}
			s.Close()

			// A new process: rewound to after the third page.
			s, err = tc.open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Rewind(positions[2]); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if n := bytes.Count(b, []byte("\n")); n != want || b[len(b)-1] != '\n' {
				t.Errorf("after Rewind: %d lines (want %d), last byte %q", n, want, b[len(b)-1])
			}
			if !bytes.HasPrefix(b, []byte("a whole line\n")) || bytes.Contains(b, []byte("torn")) {
				t.Errorf("the torn line was not cut, or the whole one lost: %q", b[:min(len(b), 40)])
			}
			if err := s.Rewind(positions[4]); !errors.Is(err, ErrSinkBehind) {
				t.Errorf("Rewind beyond the file: %v, want ErrSinkBehind", err)
			}
			if err := s.Rewind(pos0[:3]); err == nil {
				t.Error("a malformed position was accepted")
			}
			if tc.name == "JSONLinesFile" {
				for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n"))[1:] {
					var rec PageRecord
					if err := json.Unmarshal(line, &rec); err != nil {
						t.Errorf("line %q: %v", line, err)
					}
				}
			}
		})
	}
}

func TestFileErrorNamesPathOnce(t *testing.T) {
	const path = "/x/links.tsv"
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}, "crawlkit: write /x/links.tsv: no space left on device"},
		{&fs.PathError{Op: "open", Path: "/x/other", Err: fs.ErrNotExist}, "crawlkit: /x/links.tsv: open /x/other: file does not exist"},
		{errors.New("malformed record"), "crawlkit: /x/links.tsv: malformed record"},
	} {
		err := fileError(path, tc.err)
		if err.Error() != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("fileError(%v) = %q, want %q wrapping the cause", tc.err, err, tc.want)
		}
	}
}
