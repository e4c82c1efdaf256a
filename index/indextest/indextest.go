package indextest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/index"
)

// Config describes a generated collection. Zero fields take the defaults in
// their comments; equal Configs generate equal collections.
type Config struct {
	Seed    uint64  // random seed
	Docs    int     // number of documents; 0 means 1000
	Vocab   int     // vocabulary size; 0 means 20000
	Hosts   int     // number of hosts; 0 means Docs/20 + 1
	MeanLen int     // mean words per document body; 0 means 150
	Zipf    float64 // exponent of the word distribution (> 1); 0 means 1.07
	// Topic is the share of each body's words drawn from its host's own
	// small vocabulary (50 words), so that pages of a host are about the
	// same things, as on the web; 0 means 0.2, negative means none.
	Topic float64
}

func (c Config) withDefaults() Config {
	if c.Docs <= 0 {
		c.Docs = 1000
	}
	if c.Vocab <= 0 {
		c.Vocab = 20000
	}
	if c.Hosts <= 0 {
		c.Hosts = c.Docs/20 + 1
	}
	if c.MeanLen <= 0 {
		c.MeanLen = 150
	}
	if c.Zipf <= 1 {
		c.Zipf = 1.07
	}
	if c.Topic == 0 {
		c.Topic = 0.2
	}
	return c
}

var syllables = []string{"ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "pe", "du",
	"ga", "ho", "ji", "be", "fu", "za", "wo", "xi", "qe", "yu", "ri", "an", "el", "om"}

// Word returns the i-th vocabulary word (0 is the most frequent).
func Word(i int) string {
	var b strings.Builder
	i++
	for i > 0 {
		b.WriteString(syllables[i%len(syllables)])
		i /= len(syllables)
	}
	return b.String()
}

// Corpus generates cfg.Docs documents. Each body has a length drawn around
// MeanLen, words drawn from the Zipf distribution, a share cfg.Topic of
// them from the host's topic; titles have 2–6 words. URLs are
// http://hNNNN.sim.test/p/ID, hosts drawn with a skew so a few hosts hold
// many pages.
func Corpus(cfg Config) []index.Document {
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, 0x1d3c))
	words := rand.NewZipf(r, cfg.Zipf, 2, uint64(cfg.Vocab-1))
	hosts := rand.NewZipf(r, 1.3, 4, uint64(cfg.Hosts-1))
	topic := rand.NewZipf(r, 1.5, 2, 49)
	docs := make([]index.Document, cfg.Docs)
	var b strings.Builder
	for i := range docs {
		host := int(hosts.Uint64())
		// Host topics start at rank 100: common enough to be queried.
		topicBase := 100 + (host*53)%max(cfg.Vocab-200, 1)
		b.Reset()
		for j, n := 0, 2+r.IntN(5); j < n; j++ {
			if j > 0 {
				b.WriteByte(' ')
			}
			w := Word(int(words.Uint64()))
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
		}
		title := b.String()
		b.Reset()
		n := int(float64(cfg.MeanLen) * (0.25 + 1.5*r.Float64()))
		for j := 0; j < n; j++ {
			if j > 0 {
				if j%12 == 0 {
					b.WriteString(". ")
				} else {
					b.WriteByte(' ')
				}
			}
			if r.Float64() < cfg.Topic {
				b.WriteString(Word(min(topicBase+int(topic.Uint64()), cfg.Vocab-1)))
			} else {
				b.WriteString(Word(int(words.Uint64())))
			}
		}
		docs[i] = index.Document{
			URL:   fmt.Sprintf("http://h%04d.sim.test/p/%d", host, i),
			Title: title,
			Text:  b.String(),
		}
	}
	return docs
}

// QueryLog returns n query strings with a skewed distribution: a pool of
// distinct queries of 1–3 words (drawn from the vocabulary below its 10
// most frequent words, as users rarely search for those), from which the
// log draws with a Zipf law, so popular queries repeat.
func QueryLog(cfg Config, n int) []string {
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, 0x9e37))
	words := rand.NewZipf(r, 1.1, 4, uint64(min(cfg.Vocab, 5000)-11))
	pool := make([]string, max(n/4, 1))
	for i := range pool {
		k := 1 + r.IntN(3)
		terms := make([]string, k)
		for j := range terms {
			terms[j] = Word(10 + int(words.Uint64()))
		}
		pool[i] = strings.Join(terms, " ")
	}
	pick := rand.NewZipf(r, 1.2, 2, uint64(len(pool)-1))
	log := make([]string, n)
	for i := range log {
		log[i] = pool[pick.Uint64()]
	}
	return log
}

// Compare runs each query on want and got with the same global statistics
// (nil: each Searcher's own) and reports through t any difference in the
// ranked URLs or a score difference above 1e-9.
func Compare(t testing.TB, want, got index.Searcher, queries []index.Query, global *index.Stats) {
	t.Helper()
	ctx := context.Background()
	for _, q := range queries {
		w, err := want.Search(ctx, q, global)
		if err != nil {
			t.Fatalf("want.Search(%v): %v", q, err)
		}
		g, err := got.Search(ctx, q, global)
		if err != nil {
			t.Fatalf("got.Search(%v): %v", q, err)
		}
		if len(w.Hits) != len(g.Hits) {
			t.Errorf("query %v %v: %d hits, want %d", q.Terms, q.Op, len(g.Hits), len(w.Hits))
			continue
		}
		for i := range w.Hits {
			if w.Hits[i].URL != g.Hits[i].URL || math.Abs(w.Hits[i].Score-g.Hits[i].Score) > 1e-9 {
				t.Errorf("query %v %v hit %d: got %s %.12f, want %s %.12f", q.Terms, q.Op, i,
					g.Hits[i].URL, g.Hits[i].Score, w.Hits[i].URL, w.Hits[i].Score)
				break
			}
		}
	}
}
