// Package indextest generates reproducible collections and skewed query
// logs for testing and benchmarking search indexes, and checks a Searcher's
// rankings against another's (usually the brute-force index.Reference).
//
// # Collections
//
// Corpus builds documents whose words follow a Zipf distribution over a
// synthetic vocabulary of pronounceable words, spread over hosts with a
// skewed (Zipf) number of pages each, like a crawl:
//
//	docs := indextest.Corpus(indextest.Config{Seed: 1, Docs: 2000})
//	log := indextest.QueryLog(indextest.Config{Seed: 1}, 500)
//
// # Conformance
//
// TestSearcher is the suite every index.Searcher implementation runs: it
// builds the Searcher over a generated collection and checks statistics and
// rankings against the brute-force index.Reference:
//
//	func TestConformance(t *testing.T) {
//		indextest.TestSearcher(t, func(t *testing.T, docs []index.Document) index.Searcher {
//			s := index.NewShard(nil)
//			for _, d := range docs {
//				s.Add(d)
//			}
//			return s
//		})
//	}
//
// Compare runs queries on two Searchers and fails the test unless both
// return the same URLs in the same order with scores equal within 1e-9.
//
// TestPostingSource is the suite of index.PostingSource (index.TermShard,
// index.Remote): it builds the source over a generated collection and
// checks every term's ids and frequencies against postings it computes
// with the zero index.Analyzer, the order and number of the lists,
// unknown terms, concurrency and canceled contexts:
//
//	indextest.TestPostingSource(t, func(t *testing.T, docs []index.Document) index.PostingSource {
//		ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 1})
//		for _, d := range docs {
//			ti.Add(d)
//		}
//		return ti.Shard(0)
//	})
//
// TestTransport is the suite of index.Transport (index.Handler, the
// loopback; index.TransportFunc; index.Meter; the cluster package's NATS
// request-reply): the harness puts the Transport in front of an
// index.Handler the suite gives it, and the suite checks that replies
// arrive byte for byte, that a node's errors travel in its replies and
// an unreachable node is an error, that a canceled context ends a call
// promptly, and that concurrent calls get their own replies:
//
//	indextest.TestTransport(t, indextest.TransportHarness{
//		New: func(t *testing.T, node *index.Handler) index.Transport {
//			return &index.Meter{T: node}
//		},
//		Synchronous: true,
//	})
package indextest
