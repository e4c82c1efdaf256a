package index_test

import (
	"context"
	"fmt"
	"os"

	"github.com/crawlkit/crawlkit/index"
)

var pages = []index.Document{
	{URL: "https://news.example/crawl", Title: "Crawlers", Text: "A web crawler fetches pages and follows their links."},
	{URL: "https://news.example/index", Title: "Indexes", Text: "An inverted index maps each term to the pages containing it."},
	{URL: "https://blog.example/polite", Title: "Politeness", Text: "A polite crawler waits between requests to one host."},
	{URL: "https://blog.example/rank", Title: "Ranking", Text: "BM25 ranks the pages of an index for a query."},
	{URL: "https://wiki.example/graph", Title: "Web graph", Text: "Links between pages form the web graph."},
}

// Document partitioning: pages go to shards by a hash of their URL; the
// broker queries all shards with global statistics and merges their top k.
func ExampleBroker() {
	r := index.NewRouter(2, index.ByURL, nil)
	for _, p := range pages {
		r.Add(p)
	}
	b, err := index.NewBroker(&index.BrokerOptions{Shards: r.Searchers()})
	if err != nil {
		panic(err)
	}
	defer b.Close()

	res, err := b.Search(context.Background(), index.ParseQuery(nil, "crawler pages", index.And, 10), nil)
	if err != nil {
		panic(err)
	}
	for _, h := range res.Hits {
		fmt.Printf("%.4f %s\n", h.Score, h.URL)
	}
	// Output:
	// 1.1817 https://news.example/crawl
}

// Term partitioning: each term's postings live on one shard; the
// coordinator fetches the lists of the query terms and scores them.
func ExampleTermIndex() {
	ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 3})
	for _, p := range pages {
		ti.Add(p)
	}
	q := index.ParseQuery(nil, "web pages", index.Or, 3)
	for _, t := range q.Terms {
		fmt.Printf("term %q lives on shard %d\n", t, ti.Owner(t))
	}
	res, _ := ti.Search(context.Background(), q, nil)
	for _, h := range res.Hits {
		fmt.Printf("%.4f %s\n", h.Score, h.URL)
	}
	// Output:
	// term "pages" lives on shard 1
	// term "web" lives on shard 1
	// 1.5556 https://wiki.example/graph
	// 1.1817 https://news.example/crawl
	// 0.2810 https://blog.example/rank
}

// A shard behind a transport: Handler serves it, Remote calls it, Meter
// counts the bytes in between. A real deployment replaces the Handler by a
// network transport (the cluster package's NATS request-reply).
func ExampleRemote() {
	s := index.NewShard(nil)
	for _, p := range pages {
		s.Add(p)
	}
	m := &index.Meter{T: &index.Handler{Searcher: s}}
	r := index.NewRemote(m)
	res, _ := r.Search(context.Background(), index.ParseQuery(nil, "index", index.Or, 10), nil)
	calls, sent, received := m.Counts()
	fmt.Println(len(res.Hits), "hits;", calls, "round trip;", sent, "bytes sent,", received, "received")
	// Output:
	// 2 hits; 1 round trip; 13 bytes sent, 88 received
}

// A durable index in a directory: every Add is in the log when it returns;
// a crawler stores Position with its checkpoint and, after a crash,
// reopens the directory and rewinds to it.
func ExampleDir() {
	path, err := os.MkdirTemp("", "index")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(path)

	d, err := index.OpenDir(path, nil)
	if err != nil {
		panic(err)
	}
	for _, p := range pages {
		if err := d.Add(p); err != nil {
			panic(err)
		}
	}
	checkpoint, _ := d.Position() // saved with the crawler's own state
	d.Add(index.Document{URL: "https://late.example/", Text: "crawler pages after the checkpoint"})
	d.Close() // or a crash: the log holds every document added

	d, err = index.OpenDir(path, nil)
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if err := d.Rewind(checkpoint); err != nil {
		panic(err)
	}
	res, _ := d.Search(context.Background(), index.ParseQuery(d.Analyzer(), "crawler pages", index.And, 10), nil)
	for _, h := range res.Hits {
		fmt.Printf("%.4f %s\n", h.Score, h.URL)
	}
	fmt.Println(d.Info().Docs, "documents")
	// Output:
	// 1.1817 https://news.example/crawl
	// 5 documents
}
