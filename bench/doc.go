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
package bench
