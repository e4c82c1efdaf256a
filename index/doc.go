// Package index is an inverted index for crawled pages, scored with BM25 and
// distributed across machines by documents or by terms (IIR §20.3).
//
// # Shards
//
// A Shard maps each term to a roaring bitmap of document ids with term
// frequencies beside it, and stores each document's URL, title and length.
// An Analyzer segments text into words (the UAX #29 word rules for letters,
// numbers and ideographs), lowercases them and optionally drops stop words,
// by each document's language with StopByLang (Document.Lang; StopWords has
// seven languages' sets), in which case a query drops the stop words of
// every language. Queries combine terms with Or or And and ask for the top k; Or queries use
// WAND dynamic pruning over exact per-term upper bounds, so they score a
// fraction of the postings (Result.Postings) yet return exactly the
// exhaustive top k. Re-adding a URL replaces the document (the old one goes
// into a deletions bitmap); Compact reclaims the space. WriteTo and ReadFrom
// persist a shard in a versioned format protected by CRC-32C.
//
//	s := index.NewShard(nil)
//	s.Add(index.Document{URL: "https://a.example/", Title: "Crawling", Text: "..."})
//	res, err := s.Search(ctx, index.ParseQuery(s.Analyzer(), "web crawler", index.Or, 10), nil)
//
// # Scoring
//
// BM25 uses Lucene's defaults (k1 = 1.2, b = 0.75) and idf ln(1 + (N − n +
// 0.5)/(n + 0.5)); see BM25. A document's score adds its terms'
// contributions in ascending term order, in every implementation, so the
// same statistics give bit-identical scores however the index is split.
//
// # Distribution by documents
//
// Each shard holds a subset of the documents, chosen by a Partitioner: ByURL
// (hash of the URL, the default the book recommends) or ByHost; a Router
// sends each document to its shard. A Broker
// sends every query to all shards together with global statistics (N,
// total length, document frequencies) that it gathers from the shards and
// refreshes in the background, and merges their top k. An optional low tier
// is searched only when the high tier returns too few hits.
//
//	r := index.NewRouter(4, index.ByURL, nil)
//	r.Add(doc)
//	b, _ := index.NewBroker(&index.BrokerOptions{Shards: r.Searchers()})
//	defer b.Close()
//	res, err := b.Search(ctx, q, nil)
//
// # Distribution by terms
//
// A TermIndex assigns each term to one TermShard, which keeps that term's
// complete posting list; the coordinator keeps the document table. A query
// fetches the posting lists of its terms from their owners and scores them
// at the coordinator. docs/index-partitioning.md compares the bytes moved
// and the latency of both partitionings on a skewed query log.
//
// # Remote shards
//
// Searcher (and PostingSource for term shards) are small interfaces. Remote
// implements both over a Transport, a one-method request/reply interface
// (the cluster package provides one over NATS); Handler serves a node's
// Searcher or PostingSource on the other side and is itself the in-process
// loopback Transport. Meter counts the bytes a Transport moves.
//
// # Durable segmented index
//
// A Dir keeps an index in a directory with bounded memory, as Lucene and
// Bleve do (an LSM tree): Add appends the document to a log (one write
// call, so a killed process loses nothing Add returned for) and to an
// in-memory buffer Shard; a full buffer (DirOptions.BufferBytes, 16 MiB by
// default) is written out as an immutable segment and the log starts over;
// segments are merged in size tiers in the background, each merge
// streaming its inputs and replacing them atomically (new file, fsync,
// rename, then a new MANIFEST). Segments are searched on disk: a query
// reads the dictionary blocks, posting lists and document lengths it needs
// through a page cache bounded by DirOptions.CacheBytes (8 MiB), so the
// memory of a Dir is its buffer, its cache and about 1 KB per
// segment, whatever the number of documents. Every 4 KiB page of a segment
// carries a CRC-32C; a damaged file is an ErrCorrupt error naming it.
//
// Re-adding a URL replaces the older document wherever it is: the old
// version is masked by its segment's deletions and dropped by the next
// merge of that segment. Search and Stats use statistics global to the
// buffer and all segments, so a Dir ranks exactly like one Shard holding
// its live documents.
//
// A crawler adds every page, takes Position after each Add and stores the
// newest with its own checkpoint; after a crash it reopens the directory
// and rewinds to that position, which drops the pages added after it even
// if they were flushed to a segment since:
//
//	d, err := index.OpenDir("crawl/index", nil)
//	if resumed {
//		err = d.Rewind(checkpoint.IndexPosition)
//	}
//	for page := range pages {
//		err = d.Add(index.Document{URL: page.URL, Title: page.Title, Text: page.Text})
//		pos, _ := d.Position() // cheap: store the newest with the checkpoint
//	}
//	err = d.Close() // writes no segment: the next OpenDir replays the log
//
// A position can be rewound to until the second flush after it.
//

// Reference is a brute-force Searcher for checking rankings; package
// indextest generates reproducible collections and skewed query logs and
// compares two Searchers' rankings.
package index
