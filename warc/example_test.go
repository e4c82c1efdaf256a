package warc_test

import (
	"fmt"
	"os"
	"time"

	"github.com/crawlkit/crawlkit/warc"
)

func Example() {
	dir, _ := os.MkdirTemp("", "warc")
	defer os.RemoveAll(dir)

	w, err := warc.NewWriter(warc.WriterOptions{Dir: dir})
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
	rd, _ := warc.NewReader(f, warc.ReaderOptions{})
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
