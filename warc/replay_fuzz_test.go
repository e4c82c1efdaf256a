package warc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/warc"
)

// FuzzReplay opens arbitrary bytes as a WARC file and replays every URL it
// indexed: nothing may panic, every failure must be a typed error, and
// every response must come back for the URL asked.
func FuzzReplay(f *testing.F) {
	for _, gz := range []bool{false, true} {
		files := writeArchive(f, warc.WriterOptions{Uncompressed: !gz}, [][2]string{
			{"http://a.test/", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello"},
			{"http://a.test/r", "HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n"},
			{"http://a.test/c", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
			{"http://a.test/o", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + strings.Repeat("same ", 60)},
			{"http://b.test/o", "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n\r\n" + strings.Repeat("same ", 60)}, // a revisit
		}, map[string]string{"charset": "utf-8"})
		b, err := os.ReadFile(files[0])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.test/\r\nContent-Length: 12\r\n\r\nHTTP/1.1 200\r\n\r\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f.warc")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := warc.OpenReplay([]string{path}, &warc.ReplayOptions{MaxBodySize: 1 << 16, Reader: warc.ReaderOptions{MaxBlockBytes: 1 << 20}})
		if err != nil {
			var we *warc.Error
			if !errors.As(err, &we) {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		defer r.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, u := range r.URLs() {
			pu, err := parseURL(u)
			if err != nil {
				continue
			}
			resp, err := r.Fetch(ctx, &fetch.Request{URL: pu})
			if err != nil {
				var fe *fetch.Error
				if !errors.As(err, &fe) {
					t.Fatalf("%s: untyped error %T %v", u, err, err)
				}
				continue
			}
			if resp.URL != pu || len(resp.Body) > 1<<16 || strings.ContainsAny(resp.ContentType, "; ") {
				t.Fatalf("%s: %+v", u, resp)
			}
		}
	})
}
