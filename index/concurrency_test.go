package index_test

import (
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

// TestConcurrentUse adds, deletes, compacts, persists and searches at the
// same time; run with -race it checks the locking of Shard, TermIndex and
// Broker, and the final state must equal a serial build.
func TestConcurrentUse(t *testing.T) {
	docs := indextest.Corpus(indextest.Config{Seed: 4, Docs: 400, MeanLen: 20, Vocab: 500})
	s := index.NewShard(nil)
	ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 3})
	b, err := index.NewBroker(&index.BrokerOptions{Shards: []index.Searcher{s}, Refresh: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	q := index.ParseQuery(nil, indextest.Word(1)+" "+indextest.Word(5), index.Or, 5)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < len(docs); i += 2 {
				s.Add(docs[i])
				ti.Add(docs[i])
				if i%50 == 0 {
					s.Delete(docs[i].URL)
					s.Add(docs[i])
					s.Compact()
					ti.Compact()
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 40 {
				for _, sr := range []index.Searcher{s, ti, b} {
					if _, err := sr.Search(ctx, q, nil); err != nil {
						t.Error(err)
						return
					}
				}
				var w discard
				s.WriteTo(&w)
			}
		})
	}
	wg.Wait()
	ref := index.NewReference(nil)
	mustAdd(t, ref.Add, docs)
	indextest.Compare(t, ref, s, []index.Query{q}, nil)
	indextest.Compare(t, ref, ti, []index.Query{q}, nil)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
