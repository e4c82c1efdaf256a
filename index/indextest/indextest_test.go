package indextest_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

func TestCorpusDeterministicAndSkewed(t *testing.T) {
	cfg := indextest.Config{Seed: 9, Docs: 300}
	a, b := indextest.Corpus(cfg), indextest.Corpus(cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("equal configs gave different corpora")
	}
	if c := indextest.Corpus(indextest.Config{Seed: 10, Docs: 300}); reflect.DeepEqual(a, c) {
		t.Fatal("different seeds gave equal corpora")
	}
	hosts := map[string]int{}
	for _, d := range a {
		hosts[strings.Split(d.URL, "/")[2]]++
		if d.Title == "" || d.Text == "" {
			t.Fatalf("empty document %+v", d)
		}
	}
	top := 0
	for _, n := range hosts {
		top = max(top, n)
	}
	if top < 3*len(a)/len(hosts) {
		t.Errorf("hosts are not skewed: biggest %d of %d pages over %d hosts", top, len(a), len(hosts))
	}
	log := indextest.QueryLog(cfg, 400)
	counts := map[string]int{}
	for _, q := range log {
		counts[q]++
	}
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	if len(log) != 400 || most < 20 {
		t.Errorf("query log not skewed: %d queries, most frequent %d times", len(log), most)
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(f, args...))
}
func (r *recorder) Fatalf(f string, args ...any) { r.Errorf(f, args...) }

// shifted perturbs every score of a Searcher.
type shifted struct{ index.Searcher }

func (s shifted) Search(ctx context.Context, q index.Query, g *index.Stats) (*index.Result, error) {
	r, err := s.Searcher.Search(ctx, q, g)
	if err == nil && len(r.Hits) > 0 {
		r.Hits[0].Score += 1e-6
	}
	return r, err
}

func TestCompare(t *testing.T) {
	docs := indextest.Corpus(indextest.Config{Seed: 1, Docs: 100, MeanLen: 20})
	s := index.NewShard(nil)
	ref := index.NewReference(nil)
	for _, d := range docs {
		s.Add(d)
		ref.Add(d)
	}
	qs := []index.Query{index.ParseQuery(nil, indextest.Word(3)+" "+indextest.Word(30), index.Or, 10)}
	var ok recorder
	indextest.Compare(&ok, ref, s, qs, nil)
	if len(ok.msgs) != 0 {
		t.Errorf("equal searchers reported: %v", ok.msgs)
	}
	var bad recorder
	indextest.Compare(&bad, ref, shifted{s}, qs, nil)
	if len(bad.msgs) == 0 {
		t.Error("a 1e-6 score difference went unnoticed")
	}
}

func ExampleCorpus() {
	docs := indextest.Corpus(indextest.Config{Seed: 1, Docs: 3, MeanLen: 8})
	for _, d := range docs {
		fmt.Println(d.URL, "|", d.Title)
	}
	fmt.Println(indextest.Word(0), indextest.Word(1), indextest.Word(100))
	// Output:
	// http://h0000.sim.test/p/0 | Yuyuso el
	// http://h0000.sim.test/p/1 | Yumi lo jijine hovi
	// http://h0000.sim.test/p/2 | Rine ruso lo tabeta pe lo
	// lo mi taru
}
