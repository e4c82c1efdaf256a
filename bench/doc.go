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
package bench
