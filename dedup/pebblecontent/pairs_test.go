package pebblecontent_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/shingle"
	"golang.org/x/net/html"
)

// pageFiles are real pages of prose and code (the fetch package's test
// pages); near-duplicate pairs are cut from their text.
var pageFiles = []string{"go1.html", "go_mem.html", "rustc-codegen.html"}

// corpusWords returns the words of the text of the test pages (script and
// style elements dropped), in order, or skips the test if the pages are
// missing.
func corpusWords(tb testing.TB) []string {
	corpusOnce.Do(func() {
		for _, name := range pageFiles {
			b, err := os.ReadFile(filepath.Join("..", "..", "fetch", "testdata", name))
			if err != nil {
				corpusErr = err
				return
			}
			corpus = append(corpus, strings.Fields(pageText(b))...)
		}
	})
	if corpusErr != nil {
		tb.Skipf("real pages unavailable: %v", corpusErr)
	}
	return corpus
}

var (
	corpusOnce sync.Once
	corpus     []string
	corpusErr  error
)

// pageText returns the text of an HTML page: its text nodes outside
// script and style, separated by spaces.
func pageText(page []byte) string {
	z := html.NewTokenizer(bytes.NewReader(page))
	var b strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken:
			if name, _ := z.TagName(); string(name) == "script" || string(name) == "style" {
				skip++
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); (string(name) == "script" || string(name) == "style") && skip > 0 {
				skip--
			}
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
				b.WriteByte(' ')
			}
		}
	}
}

// pair is a document and an edited copy with the exact Jaccard
// similarity of their 4-shingle sets.
type pair struct {
	a, b    []byte
	jaccard float64
}

// jaccardBin is a range [lo, hi) of exact Jaccard similarities.
type jaccardBin struct{ lo, hi float64 }

func (r jaccardBin) has(j float64) bool { return j >= r.lo && j < r.hi }

// nearPairs returns n pairs per bin, cut from the real pages: a passage
// of 200 to 1500 words and a copy edited the way pages change between
// crawls (words replaced here and there, a block rewritten, a block
// inserted or deleted, or several of these), by an amount aimed at a
// similarity drawn from the bin. Deterministic for a seed.
func nearPairs(tb testing.TB, seed uint64, n int, bins []jaccardBin) [][]pair {
	words := corpusWords(tb)
	r := rand.New(rand.NewPCG(seed, 0x9a125))
	out := make([][]pair, len(bins))
	var ha, hb []uint64
	for i, bin := range bins {
		for tries := 0; len(out[i]) < n; tries++ {
			if tries > 100*n {
				tb.Fatalf("could not generate %d pairs at Jaccard [%v, %v)", n, bin.lo, bin.hi)
			}
			size := 200 + r.IntN(1300)
			start := r.IntN(len(words) - size)
			a := words[start : start+size]
			// A change of m shingles in n leaves J ≈ (n−m)/(n+m).
			target := bin.lo + (bin.hi-bin.lo)*r.Float64()
			b := edit(r, words, a, (1-target)/(1+target))
			ta, tb := []byte(strings.Join(a, " ")), []byte(strings.Join(b, " "))
			ha, hb = shingleSet(ha, ta), shingleSet(hb, tb)
			if j := setJaccard(ha, hb); bin.has(j) {
				out[i] = append(out[i], pair{ta, tb, j})
			}
		}
	}
	return out
}

// edit returns a copy of a with about frac·len(a) of its shingles
// changed, drawing new words from words.
func edit(r *rand.Rand, words, a []string, frac float64) []string {
	b := slices.Clone(a)
	window := func(m int) []string {
		s := r.IntN(len(words) - m)
		return words[s : s+m]
	}
	ops := 1 + r.IntN(3)
	for range ops {
		m := max(1, int(frac*float64(len(a))/float64(ops)))
		switch r.IntN(4) {
		case 0: // words replaced here and there (dates, counters, typos)
			for range max(1, m/4) {
				b[r.IntN(len(b))] = words[r.IntN(len(words))]
			}
		case 1: // a block rewritten (a comment, an advertisement)
			m = min(m, len(b)/2)
			at := r.IntN(len(b) - m + 1)
			copy(b[at:], window(m))
		case 2: // a block inserted (a banner, a navigation bar)
			at := r.IntN(len(b) + 1)
			b = slices.Insert(b, at, window(m)...)
		case 3: // a block deleted
			m = min(m, len(b)/2)
			at := r.IntN(len(b) - m + 1)
			b = slices.Delete(b, at, at+m)
		}
	}
	return b
}

// shingleSet returns the sorted distinct 4-shingle hashes of text (as the
// default Sketcher hashes them), reusing dst.
func shingleSet(dst []uint64, text []byte) []uint64 {
	dst = dst[:0]
	for h := range shingle.ShingleHashes(text, 4, 0) {
		dst = append(dst, h)
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}

// setJaccard returns |a∩b|/|a∪b| of two sorted sets.
func setJaccard(a, b []uint64) float64 {
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			inter++
			i++
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
