package fetch_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
)

func compress(t testing.TB, coding string, p []byte) []byte {
	var b bytes.Buffer
	var w interface {
		Write([]byte) (int, error)
		Close() error
	}
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "deflate":
		w = zlib.NewWriter(&b)
	case "raw":
		w, _ = flate.NewWriter(&b, flate.DefaultCompression)
	}
	if _, err := w.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDecodeBody(t *testing.T) {
	page := bytes.Repeat([]byte("<p>Some text of a page, repeated.</p>\n"), 500) // 19,000 bytes
	noise := make([]byte, 20000)
	rand.NewChaCha8([32]byte{7}).Read(noise)
	gz, zl := compress(t, "gzip", page), compress(t, "deflate", page)
	gzNoise := compress(t, "gzip", noise)
	for _, tc := range []struct {
		name      string
		body      []byte
		coding    string
		max       int64
		want      []byte // nil: a prefix of prefix, checked by length below
		prefix    []byte
		minLen    int
		truncated bool
		err       bool
	}{
		{"gzip whole", gz, "gzip", 1 << 20, page, nil, 0, false, false},
		{"x-gzip, case and space", gz, " X-GZIP ", 1 << 20, page, nil, 0, false, false},
		{"gzip cut at max", gz, "gzip", 1000, page[:1000], nil, 0, true, false},
		{"deflate is zlib", zl, "deflate", 1 << 20, page, nil, 0, false, false},
		{"deflate cut at max", zl, "deflate", 100, page[:100], nil, 0, true, false},
		{"gzip stream cut short", gzNoise[:10000], "gzip", 1 << 20, nil, noise, 1, false, false},
		{"identity", page, "", 1 << 20, page, nil, 0, false, false},
		{"identity cut", page, "identity", 10, page[:10], nil, 0, true, false},
		{"unknown coding as is", page, "br", 1 << 20, page, nil, 0, false, false},
		{"raw deflate is not deflate", compress(t, "raw", page), "deflate", 1 << 20, nil, nil, 0, false, true},
		{"not gzip", page, "gzip", 1 << 20, nil, nil, 0, false, true},
		{"empty gzip", nil, "gzip", 1 << 20, nil, nil, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, truncated, err := fetch.DecodeBody(tc.body, tc.coding, tc.max)
			if tc.err {
				var fe *fetch.Error
				if err == nil || !errors.As(err, &fe) {
					t.Fatalf("err = %v, want a *fetch.Error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if truncated != tc.truncated {
				t.Errorf("truncated = %v, want %v", truncated, tc.truncated)
			}
			switch {
			case tc.want != nil && !bytes.Equal(got, tc.want):
				t.Errorf("got %d bytes, want %d", len(got), len(tc.want))
			case tc.prefix != nil && (len(got) < tc.minLen || !bytes.HasPrefix(tc.prefix, got)):
				t.Errorf("got %d bytes, not a prefix of the %d-byte original", len(got), len(tc.prefix))
			}
		})
	}
}

// FuzzDecodeBody: any body in any coding decodes to at most limit bytes
// without panicking, a bomb included.
func FuzzDecodeBody(f *testing.F) {
	page := bytes.Repeat([]byte("<p>text</p>"), 100)
	f.Add(compress(f, "gzip", page), "gzip", int64(500))
	f.Add(compress(f, "deflate", page), "deflate", int64(5000))
	f.Add(compress(f, "gzip", make([]byte, 1<<20)), "gzip", int64(1000)) // a small bomb
	f.Add([]byte("plain"), "", int64(3))
	f.Fuzz(func(t *testing.T, body []byte, coding string, limit int64) {
		if limit > 1<<20 {
			return
		}
		got, truncated, err := fetch.DecodeBody(body, coding, limit)
		limit = max(limit, 0) // a negative limit is 0
		if err != nil {
			return
		}
		if int64(len(got)) > limit {
			t.Fatalf("%d bytes decoded, limit %d", len(got), limit)
		}
		if truncated && int64(len(got)) != limit {
			t.Fatalf("truncated at %d bytes, limit %d", len(got), limit)
		}
	})
}

// A body archived as it came off the wire (gzip here) decodes, for a
// replay, to what the fetcher decoded; max bounds the decoded size.
func ExampleDecodeBody() {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte("<title>Archived page</title>"))
	w.Close()

	body, truncated, err := fetch.DecodeBody(gz.Bytes(), "gzip", 1<<20)
	fmt.Println(string(body), truncated, err)
	body, truncated, _ = fetch.DecodeBody(gz.Bytes(), "gzip", 7)
	fmt.Println(string(body), truncated)
	// Output:
	// <title>Archived page</title> false <nil>
	// <title> true
}
