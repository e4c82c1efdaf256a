// Package bench holds side-by-side benchmarks of crawlkit packages against
// other Go libraries. It is a separate module, so that the libraries
// compared against never enter crawlkit's own go.mod; run its commands from
// inside bench/.
//
// # Index
//
// index_test.go compares crawlkit/index with bleve v2 (scorch, BM25
// scoring model) on the same generated documents and query log:
//
//	cd bench && go test -run '^$' -bench 'Index' -benchtime 3x
//
// Each benchmark reports docs/s (indexing), p50-ns/query (median query
// latency) and heap-B/doc (heap held per indexed document).
//
// # WARC
//
// warc_test.go crawls a simulated web with crawlkit's WARC sink and reads
// the files back with github.com/nlnwa/gowarc/v3 in strict mode: record
// types and counts, block and payload digests, revisit records resolved
// to their originals (gowarc's Merge), CDXJ offsets and lengths against
// gowarc's. CI runs it:
//
//	cd bench && go test -run TestWARCValidGowarc
//
// # Main text
//
// maintext_test.go measures main-content extraction on the hand-marked
// pages of fetch/testdata/maintext: crawlkit's fetch.MainTextParser, the
// plain Document.Text, and codeberg.org/readeck/go-readability/v2 (its
// title in front of its text). Token-level precision and recall (lowercase
// words as a multiset, averaged over pages) and time per page, on a 2-core
// AMD EPYC VM, 2026-11-26:
//
//	cd bench && go test -run '^$' -bench MainText -benchtime 2s
//
//	extractor           precision  recall  ms/page  allocs/page
//	crawlkit MainText     0.954    0.959    0.14       950
//	plain Document.Text   0.635    1.000    0.027      180
//	go-readability v2.1.3 0.922    0.978    0.71      1890
//
// crawlkit keeps its own heuristic: as good on these pages, five times
// faster, and no new dependency (go-readability brings go-shiori/dom,
// chardet and dateparse). TestMainTextCompare -v prints the figures per
// page.
package bench
