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
// # Revisits
//
// A response whose payload is identical (same WARC-Payload-Digest) to that
// of a response the series already holds is written as a revisit record
// (WARC 1.1 §6.7.2, profile ProfileIdenticalPayload): its HTTP status
// line and headers, no payload, and WARC-Refers-To, -Refers-To-Target-URI
// and -Refers-To-Date naming the original. A crawl's exact duplicates (one
// page under several URLs, mirrors, identical error pages) are stored
// once. A near-duplicate is another payload and stays a response;
// truncated responses, and payloads under MinRevisitPayload bytes, are
// always written in full. WriterOptions.NoRevisits turns revisits off.
//
// The table of archived payload digests is bounded
// (WriterOptions.MaxDigests, about 280 bytes per payload) and lives with
// the files: each completed file gets, beside its index, an originals
// list (name + OriginalsSuffix, JSON lines) of the payloads first archived
// in it, and Rewind rebuilds the table from those lists and the file it
// cuts back, so a resumed crawl refers to exactly the originals that
// survived the kill, never to a record Rewind cut off, without reading
// the crawl's archive again. Replay and pywb resolve a revisit to
// its original's payload.
//
// # CDXJ index
//
// Each WARC file gets a CDXJ index beside it (name + IndexSuffix), in the
// format pywb reads: one line per response, revisit and resource record,
// "SURT-key timestamp {json}" with url, mime, status, digest, length,
// offset and filename, sorted as bytes (so by key, then timestamp). An
// index is written whole (temporary file, fsync, rename) once its file is
// complete: at rotation, at Close, and by Rewind for the file it cuts
// back, whose old index may name records after the cut. The file being
// written has no index yet; after a kill, Rewind writes it. So every index
// agrees with its file, and none outlives it. IndexFile rebuilds one
// from its WARC file (after Repair, or for files of other tools);
// [Index] finds a URL's captures by binary search and reads their records:
//
//	ix, err := warc.OpenIndexDir("out/warc")
//	e, ok, err := ix.Latest("http://example.com/")
//	rec, err := ix.Record(e)
//
// pywb reads such indexes from a collection's indexes/ directory, with
// the WARC files they name in its archive/ directory.
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
// The format is small enough to own, so crawlkit's go.mod needs no WARC
// library; an independent one (github.com/nlnwa/gowarc, strict mode)
// validates the files a crawl writes, in the bench module (CI runs it).
package warc
