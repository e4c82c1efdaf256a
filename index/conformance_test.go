package index_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

// Every Searcher in the package passes the indextest conformance suite.
func TestConformance(t *testing.T) {
	shard := func(t *testing.T, docs []index.Document) *index.Shard {
		s := index.NewShard(nil)
		mustAdd(t, s.Add, docs)
		return s
	}
	tests := []struct {
		name  string
		build func(t *testing.T, docs []index.Document) index.Searcher
	}{
		{"Shard", func(t *testing.T, docs []index.Document) index.Searcher { return shard(t, docs) }},
		{"Reference", func(t *testing.T, docs []index.Document) index.Searcher {
			r := index.NewReference(nil)
			mustAdd(t, r.Add, docs)
			return r
		}},
		{"Remote", func(t *testing.T, docs []index.Document) index.Searcher {
			return index.NewRemote(&index.Handler{Searcher: shard(t, docs)})
		}},
		{"Broker by URL", func(t *testing.T, docs []index.Document) index.Searcher {
			b, _ := docBroker(t, docs, 3, index.ByURL, nil)
			return b
		}},
		{"Broker by host, tiered", func(t *testing.T, docs []index.Document) index.Searcher {
			hi, lo := index.NewShard(nil), index.NewShard(nil)
			for _, d := range docs {
				if index.ByHost(d.URL, 2) == 0 {
					hi.Add(d)
				} else {
					lo.Add(d)
				}
			}
			// MinHits above any k: the low tier is always searched, so
			// results equal the whole collection's.
			b, err := index.NewBroker(&index.BrokerOptions{Shards: []index.Searcher{hi}, Low: []index.Searcher{lo}, MinHits: 1000, Refresh: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}},
		{"Dir", func(t *testing.T, docs []index.Document) index.Searcher {
			// Segments of 70 documents, some merged, and a buffer.
			d := openDir(t, t.TempDir(), index.DirOptions{BufferDocs: 70, MergeFactor: -1})
			t.Cleanup(func() { d.Close() })
			for i, doc := range docs {
				if err := d.Add(doc); err != nil {
					t.Fatal(err)
				}
				if i == 150 {
					d.Merge(ctx)
				}
			}
			return d
		}},
		{"TermIndex", func(t *testing.T, docs []index.Document) index.Searcher {
			ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 3})
			mustAdd(t, ti.Add, docs)
			return ti
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			indextest.TestSearcher(t, tt.build)
		})
	}
}
