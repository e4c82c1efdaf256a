package fetchtest

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Hostile is the label of the host whose answers attack the client (see
// HostilePaths). It is linked from nowhere unless Config.LinkHostile is set,
// so ordinary crawl tests do not wait on it.
const Hostile = "hostile"

// HostilePaths returns the resources of the Hostile host, each with what it
// does to a client:
//
//	/huge          200 text/html, 64 MiB announced in Content-Length
//	/huge-chunked  200 text/html, 64 MiB without Content-Length (chunked)
//	/bomb          200 text/html, Content-Encoding gzip: 128 KiB on the wire
//	               that inflate to 128 MiB
//	/bad-gzip      200, Content-Encoding gzip, body not gzip
//	/slow          200 text/html, 16 bytes every 200 ms for a minute
//	/stall         200 with headers sent, then no body for a minute
//	/big-header    200 with an 11 MiB response header (over net/http's
//	               default 10 MiB limit)
//	/bad-utf8      200 text/html; charset=utf-8 with invalid UTF-8
//	/mislabeled    200 text/html whose body is a PNG image
//	/long-url      200 text/html linking a 10,000-byte URL on the same host
//
// Every slow answer ends as soon as the client goes away or the web closes.
func HostilePaths() []string { return slices.Clone(hostilePaths) }

var hostilePaths = []string{"/huge", "/huge-chunked", "/bomb", "/bad-gzip", "/slow",
	"/stall", "/big-header", "/bad-utf8", "/mislabeled", "/long-url"}

const (
	hugeSize   = 64 << 20
	bombMember = 1 << 20 // inflated size of one gzip member of the bomb
	bombCount  = 128
)

// bomb is built once: a gzip member of 1 MiB of zeros, repeated (a gzip file
// may hold many members, and readers inflate them all).
var bomb = sync.OnceValue(func() []byte {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, bombMember))
	_ = zw.Close()
	return bytes.Repeat(z.Bytes(), bombCount)
})

func (w *Web) serveHostile(sw http.ResponseWriter, r *http.Request, path string) {
	hd := sw.Header()
	ctx := r.Context()
	// wait reports false when the request should stop (client gone or web closing).
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		case <-w.closing:
			return false
		}
	}
	switch path {
	case "/huge", "/huge-chunked":
		hd.Set("Content-Type", "text/html; charset=utf-8")
		if path == "/huge" {
			hd.Set("Content-Length", strconv.Itoa(hugeSize))
		}
		sw.WriteHeader(200)
		chunk := bytes.Repeat([]byte("<p>all work and no play makes a crawler a dull crawler</p>\n"), 1<<10)
		for sent := 0; sent < hugeSize; {
			n := min(len(chunk), hugeSize-sent)
			if _, err := sw.Write(chunk[:n]); err != nil {
				return
			}
			sent += n
		}
	case "/bomb":
		b := bomb()
		hd.Set("Content-Type", "text/html; charset=utf-8")
		hd.Set("Content-Encoding", "gzip")
		hd.Set("Content-Length", strconv.Itoa(len(b)))
		sw.WriteHeader(200)
		_, _ = sw.Write(b)
	case "/bad-gzip":
		hd.Set("Content-Type", "text/html; charset=utf-8")
		hd.Set("Content-Encoding", "gzip")
		sw.WriteHeader(200)
		_, _ = sw.Write([]byte("this is not gzip at all, whatever the header says\n"))
	case "/slow", "/stall":
		hd.Set("Content-Type", "text/html; charset=utf-8")
		sw.WriteHeader(200)
		f, _ := sw.(http.Flusher)
		if f != nil {
			f.Flush()
		}
		for range 300 {
			if !wait(200 * time.Millisecond) {
				return
			}
			if path == "/slow" {
				if _, err := sw.Write([]byte("<p>drip, drip</p>\n")); err != nil {
					return
				}
				if f != nil {
					f.Flush()
				}
			}
		}
	case "/big-header":
		hd.Set("X-Filler", strings.Repeat("x", 11<<20))
		w.send(sw, r, 200, "text/html; charset=utf-8", []byte("<p>big header</p>\n"), time.Time{})
	case "/bad-utf8":
		w.send(sw, r, 200, "text/html; charset=utf-8",
			[]byte("<!DOCTYPE html><html><head><title>bad \xff\xfe bytes</title></head><body><p>caf\xe9 \xc3\x28 \xed\xa0\x80</p></body></html>\n"), time.Time{})
	case "/mislabeled":
		var b bytes.Buffer
		w.renderPNG(&b, w.ordinary[0], 0)
		w.send(sw, r, 200, "text/html; charset=utf-8", b.Bytes(), time.Time{})
	case "/long-url":
		long := "/long-url/" + strings.Repeat("segment/", 10000/8)
		w.send(sw, r, 200, "text/html; charset=utf-8",
			[]byte("<!DOCTYPE html><html><head><title>long</title></head><body><a href=\""+long+"\">long</a></body></html>\n"), time.Time{})
	default:
		http.Error(sw, "404 page not found", http.StatusNotFound)
	}
}
