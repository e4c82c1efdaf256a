// Package warc reads and writes WARC 1.1 files (ISO 28500:2017), the
// archive format of web crawlers: the crawler's WARC sink writes every
// fetch as a request, a response and a metadata record, and a replaying
// fetcher reads them back so a crawl can be re-run offline.
//
// # Writing
//
// A [Writer] rotates through files in a directory, each starting with a
// warcinfo record, each record its own gzip member (".warc.gz"), so a
// record can be read from its offset alone:
//
//	w, err := warc.NewWriter(warc.WriterOptions{Dir: "out/warc"})
//	...
//	file, off, err := w.WriteExchange(url, ip, time.Now(), rawRequest, rawResponse, nil)
//	...
//	err = w.Close()
//
// # Reading
//
// A [Reader] reads plain or gzip files (one member per record, or one for
// the whole file), bounding header and block sizes; malformed input is an
// [*Error] wrapping [ErrFormat], never a panic:
//
//	rd, err := warc.NewReader(f, warc.ReaderOptions{})
//	for rec, err := range rd.All() { ... }
//
// The Go WARC libraries are not used: the module proxy here does not serve
// them, and the format is small enough to own.
package warc
