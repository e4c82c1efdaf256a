package warc_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/warc"
)

func Example() {
	dir, _ := os.MkdirTemp("", "warc")
	defer os.RemoveAll(dir)

	w, err := warc.NewWriter(&warc.WriterOptions{Dir: dir})
	if err != nil {
		panic(err)
	}
	req := []byte("GET / HTTP/1.1\r\nHost: example.test\r\n\r\n")
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello")
	file, _, err := w.WriteExchange("http://example.test/", "", time.Now(), req, resp, nil)
	if err != nil {
		panic(err)
	}
	w.Close()

	f, _ := os.Open(file)
	defer f.Close()
	rd, _ := warc.NewReader(f, nil)
	for rec, err := range rd.All() {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-8s %q %q\n", rec.Type(), rec.TargetURI(), warc.HTTPPayload(rec.Block))
	}
	// Output:
	// warcinfo "" ""
	// response "http://example.test/" "hello"
	// request  "http://example.test/" ""
}

// A crawl stores the Writer's position with its state after every page; the
// crawl resumed after a kill rewinds the files to the last stored position,
// dropping the pages written after it, which it fetches again.
func ExampleWriter_Rewind() {
	dir, _ := os.MkdirTemp("", "warc")
	defer os.RemoveAll(dir)
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello")

	w, _ := warc.NewWriter(&warc.WriterOptions{Dir: dir})
	committed, _ := w.Position() // before the first page
	for _, u := range []string{"http://example.test/1", "http://example.test/2"} {
		w.WriteExchange(u, "", time.Now(), nil, resp, nil)
		committed, _ = w.Position()
	}
	w.WriteExchange("http://example.test/3", "", time.Now(), nil, resp, nil)
	// Killed here: page 3 was written, not committed.

	w, _ = warc.NewWriter(&warc.WriterOptions{Dir: dir})
	if err := w.Rewind(committed); err != nil {
		panic(err)
	}
	w.WriteExchange("http://example.test/3", "", time.Now(), nil, resp, nil)
	w.Close()

	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	for _, name := range files {
		f, _ := os.Open(name)
		rd, _ := warc.NewReader(f, nil)
		for rec, err := range rd.All() {
			if err != nil {
				panic(err)
			}
			if rec.Type() == warc.TypeResponse {
				fmt.Println(rec.TargetURI())
			}
		}
		f.Close()
	}
	// Output:
	// http://example.test/1
	// http://example.test/2
	// http://example.test/3
}

// Two URLs serve the same bytes: the second is archived as a revisit
// record, which the CDXJ index lists as "warc/revisit" and a Replay
// answers with the first one's payload.
func ExampleIndex() {
	dir, _ := os.MkdirTemp("", "warc")
	defer os.RemoveAll(dir)
	date := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	body := strings.Repeat("the same story, syndicated. ", 20)

	w, _ := warc.NewWriter(&warc.WriterOptions{Dir: dir})
	for i, u := range []string{"http://www.example.test/story", "http://mirror.example.test/story?id=7&lang=en"} {
		resp := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nX-Served-By: %d\r\n\r\n%s", i, body))
		w.WriteExchange(u, "", date.Add(time.Duration(i)*time.Second), nil, resp, nil)
	}
	w.Close() // writes the last file's index

	ix, _ := warc.OpenIndexDir(dir)
	defer ix.Close()
	for _, u := range []string{"http://example.test/story", "http://mirror.example.test/story?lang=en&id=7"} {
		e, _, _ := ix.Latest(u)
		rec, _ := ix.Record(e)
		fmt.Println(e.Key, e.Timestamp, e.Mime, e.Status, rec.Type())
	}

	r, _ := warc.OpenReplayDir(dir, nil)
	defer r.Close()
	u, _ := url.Parse("http://mirror.example.test/story?id=7&lang=en")
	resp, _ := r.Fetch(context.Background(), &fetch.Request{URL: u})
	fmt.Println(resp.Status, resp.Header.Get("X-Served-By"), len(resp.Body))
	// Output:
	// test,example)/story 20261126120000 text/plain 200 response
	// test,example,mirror)/story?id=7&lang=en 20261126120001 warc/revisit 200 revisit
	// 200 1 560
}
