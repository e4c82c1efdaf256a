// Package sinktest is the conformance suite of crawlkit.Sink and of its
// optional capabilities (DurableSink, PreparingSink, ExchangeSink,
// WireSink): every implementation (the sinks of package crawlkit, and
// yours) runs it from its tests, as database/sql drivers run their driver
// tests.
//
// # Harness
//
// The suite writes pages (see Page) and reads back, through the
// Harness, which page URLs the sink's output holds: a harness opens the
// sink on a directory and lists the pages of that directory as a reader
// of the format would (package warc's Reader for an archive,
// encoding/json for JSON Lines, crawlkit.ReadLinkLog for a link log, a
// query for TitleWord for an index). Opening a sink again on the same
// directory is a new process finding what the last one left.
//
//	func TestJSONLinesFileConformance(t *testing.T) {
//		sinktest.Run(t, sinktest.Harness{
//			Open: func(t *testing.T, dir string) (crawlkit.Sink, error) {
//				return crawlkit.OpenJSONLines(filepath.Join(dir, "pages.jsonl"))
//			},
//			Pages: func(t *testing.T, dir string) []string {
//				return readJSONLines(t, filepath.Join(dir, "pages.jsonl"))
//			},
//			RewindAfterWrite: sinktest.RewindCuts,
//		})
//	}
//
// # What the suite checks
//
// Every Sink: Close without a Write leaves no page; pages written in turn
// are all there after Close, in order, once; Write is safe for concurrent
// use (200 pages from 8 goroutines, none lost or doubled); nothing of a
// Page is kept after Write returns; and a sink given a writer
// (Harness.NewOnWriter) flushes it at Close and leaves it open.
//
// A DurableSink is killed and resumed: the suite writes pages, taking
// Position after each, abandons the sink without Close, opens it again
// on the same directory and Rewinds to a position in the middle: exactly
// the pages up to it must be there, and pages written next follow them.
// Rewind to the position taken before the first Write empties the
// output; a malformed token, or a position beyond what the output holds,
// is an error that changes nothing; Rewind after a Write does what
// Harness.RewindAfterWrite says. No Rewind goes back more than three
// pages: a killed crawl's sinks hold at most the page of the commit in
// flight after the position it saved, and an implementation may keep
// positions valid for a while only (index.Dir: until the second flush
// after them).
//
// A PreparingSink prepares pages in parallel goroutines while the
// Prepared are written in order: the output is the one Write makes, and
// the positions rewind alike; a page prepared and never written (its
// commit failed) leaves no trace. An ExchangeSink archives the responses
// given to Exchange, concurrently with Writes, and they are not pages; a
// Rewind cuts the exchanges after the position too. A WireSink's
// WantsWire does not change.
//
// A capability the sink lacks skips its subtests, saying so in the test
// output.
package sinktest
