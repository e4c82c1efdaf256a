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
package indextest
