package warc

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchEntries returns n index entries of n distinct URLs over 500 hosts.
func benchEntries(n int) []IndexEntry {
	es := make([]IndexEntry, n)
	for i := range es {
		u := fmt.Sprintf("http://h%03d.sim.test/archive/2026/%07d/a-story-title.html", i%500, i)
		key, _ := SURT(u)
		es[i] = IndexEntry{Key: key, Timestamp: "20261126120000", URL: u, Mime: "text/html", Status: 200,
			Digest: Digest([]byte(u)), Length: 4000 + int64(i%900), Offset: int64(i) * 5000, Filename: "crawlkit-20261126120000-00000.warc.gz"}
	}
	return es
}

// BenchmarkIndexWrite measures writing a file's CDXJ index (lines
// formatted, sorted, written, synced, renamed), per line.
func BenchmarkIndexWrite(b *testing.B) {
	const n = 20_000
	es := benchEntries(n)
	dir := b.TempDir()
	path := filepath.Join(dir, "x.warc.gz")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := writeIndex(path, es); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	st, _ := os.Stat(IndexPath(path))
	b.SetBytes(st.Size())
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/line")
	b.ReportMetric(float64(st.Size())/n, "B/line")
}

// BenchmarkIndexLookup measures Index.Lookup of a URL in one CDXJ file of
// 200,000 lines (about 50 MB, the index of some 10 GB of pages).
func BenchmarkIndexLookup(b *testing.B) {
	const n = 200_000
	es := benchEntries(n)
	dir := b.TempDir()
	path := filepath.Join(dir, "x.warc.gz")
	if err := writeIndex(path, es); err != nil {
		b.Fatal(err)
	}
	ix, err := OpenIndex([]string{IndexPath(path)})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e := es[rng.IntN(n)]
		got, err := ix.Lookup(e.URL)
		if err != nil || len(got) != 1 || got[0] != e {
			b.Fatalf("Lookup(%s) = %v, %v", e.URL, got, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/lookup")
}

// BenchmarkRewindReread measures what a resumed Writer reads back: every
// file of the series, for the digest table and the index of the last
// file. Pages are 20 KB of text; the figure is per GiB of .warc.gz and
// per response.
func BenchmarkRewindReread(b *testing.B) {
	// open: every page in the file the position is in, read whole;
	// closed: most pages in files closed before it, whose indexes name
	// the records and only their heads are read.
	for _, bc := range []struct {
		name string
		size int64
	}{{"open", 16 << 20}, {"closed", 1 << 20}} {
		b.Run(bc.name, func(b *testing.B) { benchRewindReread(b, bc.size) })
	}
}

func benchRewindReread(b *testing.B, maxFileSize int64) {
	dir := b.TempDir()
	opts := &WriterOptions{Dir: dir, MaxFileSize: maxFileSize}
	w, err := NewWriter(opts)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields("river mountain garden song of the sea electric engine crawl archive index page link story news home about")
	const pages = 3000
	var body strings.Builder
	for i := range pages {
		body.Reset()
		for body.Len() < 20_000 {
			body.WriteString(words[rng.IntN(len(words))])
			body.WriteByte(' ')
		}
		resp := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body.String()
		if _, _, err := w.WriteExchange(fmt.Sprintf("http://h%03d.sim.test/p/%d", i%50, i), "127.0.0.1", time.Now(), rawReq, []byte(resp), map[string]string{"depth": "1"}); err != nil {
			b.Fatal(err)
		}
	}
	pos := position0(b, w)
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, f := range w.Files() {
		st, _ := os.Stat(f)
		size += st.Size()
	}
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		w2, err := NewWriter(opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := w2.Rewind(pos); err != nil {
			b.Fatal(err)
		}
		if len(w2.digests.m) != pages {
			b.Fatalf("%d digests, want %d", len(w2.digests.m), pages)
		}
		w2.Close()
	}
	b.StopTimer()
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(per/float64(size)*(1<<30)/1e9, "s/GiB")
	b.ReportMetric(per/pages/1e3, "µs/page")
	b.ReportMetric(float64(len(w.Files())), "files")
}
