package bench

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
	"github.com/crawlkit/crawlkit/internal/cputime"
)

// The same collection and query log for both libraries: 10,000 generated
// documents of ~150 words, 1,000 skewed queries of 1–3 words, OR, top 10.
var cfg = indextest.Config{Seed: 5, Docs: 10000}

var data = sync.OnceValues(func() ([]index.Document, []string) {
	return indextest.Corpus(cfg), indextest.QueryLog(cfg, 1000)
})

// analyzer matches bleve's "standard" analyzer: Unicode word segmentation,
// lowercase, English stop words.
var analyzer = &index.Analyzer{Stop: index.EnglishStopWords}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// dirSize is the total size of the files under dir: bleve's scorch keeps
// its segments in files it maps into memory, outside the Go heap.
func dirSize(tb testing.TB, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func buildCrawlkit(docs []index.Document) *index.Shard {
	s := index.NewShard(&index.ShardOptions{Analyzer: analyzer})
	for _, d := range docs {
		if _, err := s.Add(d); err != nil {
			panic(err)
		}
	}
	return s
}

// bleveMapping indexes one text field (title and text, like crawlkit) with
// the standard analyzer and BM25, without term vectors or the _all field,
// and stores the title, as crawlkit does.
func bleveMapping() mapping.IndexMapping {
	body := bleve.NewTextFieldMapping()
	body.Analyzer = standard.Name
	body.Store = false
	body.IncludeTermVectors = false
	body.IncludeInAll = false
	title := bleve.NewTextFieldMapping()
	title.Index = false
	title.Store = true
	title.IncludeTermVectors = false
	title.IncludeInAll = false
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt("body", body)
	dm.AddFieldMappingsAt("title", title)
	im := bleve.NewIndexMapping()
	im.DefaultMapping = dm
	im.DefaultAnalyzer = standard.Name
	im.ScoringModel = bleveindex.BM25Scoring
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	return im
}

type bleveDoc struct {
	Body  string `json:"body"`
	Title string `json:"title"`
}

func buildBleve(tb testing.TB, docs []index.Document) bleve.Index {
	idx, err := bleve.New(tb.TempDir()+"/bleve", bleveMapping())
	if err != nil {
		tb.Fatal(err)
	}
	batch := idx.NewBatch()
	for _, d := range docs {
		if err := batch.Index(d.URL, bleveDoc{Body: d.Title + " " + d.Text, Title: d.Title}); err != nil {
			tb.Fatal(err)
		}
		if batch.Size() == 1000 {
			if err := idx.Batch(batch); err != nil {
				tb.Fatal(err)
			}
			batch.Reset()
		}
	}
	if err := idx.Batch(batch); err != nil {
		tb.Fatal(err)
	}
	return idx
}

// BenchmarkIndexBuild indexes the whole collection per iteration and
// reports docs/s and the heap held per document by the finished index.
// bleve's time stops when its last batch is searchable (its background
// persister may still be writing segments).
func BenchmarkIndexBuild(b *testing.B) {
	docs, _ := data()
	var size int64
	for _, d := range docs {
		size += int64(len(d.Title) + len(d.Text))
	}
	b.Run("crawlkit", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(size)
		var heap float64
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			before := heapInUse()
			b.StartTimer()
			c := cputime.Now()
			s := buildCrawlkit(docs)
			cpu += cputime.Now() - c
			b.StopTimer()
			heap = float64(heapInUse()-before) / float64(len(docs))
			runtime.KeepAlive(s)
			b.StartTimer()
		}
		b.ReportMetric(float64(b.N*len(docs))/b.Elapsed().Seconds(), "docs/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*len(docs)), "cpu-ns/doc")
		b.ReportMetric(heap, "heap-B/doc")
	})
	b.Run("bleve", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(size)
		var heap, disk float64
		var elapsed, cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			before := heapInUse()
			b.StartTimer()
			// CPU time counts every thread of the process, so bleve's
			// background goroutines count too.
			start, c := time.Now(), cputime.Now()
			idx := buildBleve(b, docs)
			elapsed += time.Since(start)
			cpu += cputime.Now() - c
			b.StopTimer()
			heap = float64(heapInUse()-before) / float64(len(docs))
			idx.Close()
			disk = float64(dirSize(b, idx.Name())) / float64(len(docs))
			b.StartTimer()
		}
		b.ReportMetric(float64(b.N*len(docs))/elapsed.Seconds(), "docs/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*len(docs)), "cpu-ns/doc")
		b.ReportMetric(heap, "heap-B/doc")
		b.ReportMetric(disk, "disk-B/doc")
	})
}

// reportLatency reports the median, 90th and 99th percentile latencies.
func reportLatency(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	at := func(p float64) float64 { return float64(d[min(len(d)-1, int(p*float64(len(d))))].Nanoseconds()) }
	b.ReportMetric(at(.5), "p50-ns/query")
	b.ReportMetric(at(.9), "p90-ns/query")
	b.ReportMetric(at(.99), "p99-ns/query")
}

// BenchmarkIndexQuery runs the query log (OR, top 10, title loaded) and
// reports the median latency.
func BenchmarkIndexQuery(b *testing.B) {
	docs, log := data()
	b.Run("crawlkit", func(b *testing.B) {
		s := buildCrawlkit(docs)
		qs := make([]index.Query, len(log))
		for i, t := range log {
			qs[i] = index.ParseQuery(analyzer, t, index.Or, 10)
		}
		ctx := context.Background()
		s.Search(ctx, qs[0], nil) // seal the postings buffered by Add, as bleve's batches are
		lat := make([]time.Duration, 0, 1<<16)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			res, err := s.Search(ctx, qs[i%len(qs)], nil)
			lat = append(lat, time.Since(start))
			if err != nil || (len(res.Hits) > 0 && res.Hits[0].Title == "") {
				b.Fatal("bad result", err)
			}
		}
		reportLatency(b, lat)
	})
	b.Run("bleve", func(b *testing.B) {
		idx := buildBleve(b, docs)
		defer idx.Close()
		reqs := make([]*bleve.SearchRequest, len(log))
		for i, t := range log {
			mq := bleve.NewMatchQuery(t)
			mq.SetField("body")
			mq.SetOperator(query.MatchQueryOperatorOr)
			r := bleve.NewSearchRequestOptions(mq, 10, 0, false)
			r.Fields = []string{"title"}
			reqs[i] = r
		}
		lat := make([]time.Duration, 0, 1<<16)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			res, err := idx.Search(reqs[i%len(reqs)])
			lat = append(lat, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Hits) > 0 && res.Hits[0].Fields["title"] == nil {
				b.Fatal("title not loaded")
			}
		}
		reportLatency(b, lat)
	})
}

// TestSameWork checks that the comparison is fair: both libraries analyse
// the documents alike (every query term matches the same number of
// documents) and bleve really scores with its BM25 model. The rankings are
// not compared: bleve v2.5's BM25 uses sqrt(tf) in place of tf, takes
// avgdl as the field's distinct terms per document (rounded up) and
// multiplies disjunctions by a coordination factor, so its order differs
// from Lucene's BM25, which crawlkit follows.
func TestSameWork(t *testing.T) {
	docs, log := data()
	docs = docs[:2000]
	s := buildCrawlkit(docs)
	idx := buildBleve(t, docs)
	defer idx.Close()
	ctx := context.Background()
	checked := 0
	for _, text := range log[:200] {
		for _, term := range analyzer.Terms(nil, text) {
			st, err := s.Stats(ctx, []string{term})
			if err != nil {
				t.Fatal(err)
			}
			tq := bleve.NewTermQuery(term)
			tq.SetField("body")
			br, err := idx.Search(bleve.NewSearchRequestOptions(tq, 1, 0, true))
			if err != nil {
				t.Fatal(err)
			}
			if int64(br.Total) != st.DF[term] {
				t.Errorf("term %q: bleve matches %d documents, crawlkit %d", term, br.Total, st.DF[term])
			}
			if br.Total > 0 && !strings.Contains(fmt.Sprint(br.Hits[0].Expl), "bm25") {
				t.Errorf("bleve does not score with BM25: %v", br.Hits[0].Expl)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no terms checked")
	}
}
