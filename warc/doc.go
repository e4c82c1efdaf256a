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
//	w, err := warc.NewWriter(&warc.WriterOptions{Dir: "out/warc"})
//	...
//	file, off, err := w.WriteExchange(url, ip, time.Now(), rawRequest, rawResponse, nil)
//	...
//	err = w.Close()
//
// # Crashes and resumes
//
// A Writer's files stay consistent when the crawl is killed at any moment.
// Each write (a record, or all the records of an exchange) lands in one
// file, whole; a write that fails is cut off again. After every page the
// crawler stores [Writer.Position], a token naming the file and the offset
// after the last write, with its own state; the resumed crawl opens a new
// Writer on the same directory and calls [Writer.Rewind] with the last
// stored token, which truncates that file there (dropping a torn record,
// if any) and removes the series' files created after it:
//
//	pos, err := w.Position() // after each page, stored with the crawl state
//	...
//	w, err := warc.NewWriter(opts) // on resume
//	err = w.Rewind(pos)
//
// File names never collide, across restarts within one second too, and
// sort in write order. [Repair] cuts the torn tail of a file written
// without positions.
//
// # Reading
//
// A [Reader] reads plain or gzip files (one member per record, or one for
// the whole file), bounding header and block sizes; malformed input is an
// [*Error] wrapping [ErrFormat], never a panic:
//
//	rd, err := warc.NewReader(f, nil) // nil: default size bounds
//	for rec, err := range rd.All() { ... }
//
// The Go WARC libraries are not used: the module proxy here does not serve
// them, and the format is small enough to own.
package warc
