package index

import "math"

// BM25 holds the parameters of Okapi BM25. The zero value means Lucene's
// defaults, k1 = 1.2 and b = 0.75.
//
// A term t in document d scores
//
//	idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)),  idf(t) = ln(1 + (N − n + 0.5)/(n + 0.5))
//
// where N is the number of live documents, n the number of live documents
// containing t, |d| the number of terms of d and avgdl the mean over live
// documents; this is the book's (11.32) with Lucene's non-negative idf. A
// document's score is the sum over the distinct query terms, added in
// ascending term order, so every implementation that follows this order
// (Shard, Reference, Broker, TermIndex) produces bit-identical floats.
type BM25 struct {
	K1 float64 // 0 means 1.2
	B  float64 // 0 means 0.75; use a tiny positive value to disable length normalisation
}

func (p BM25) withDefaults() BM25 {
	if p.K1 <= 0 {
		p.K1 = 1.2
	}
	if p.B <= 0 {
		p.B = 0.75
	}
	return p
}

// IDF returns ln(1 + (N − n + 0.5)/(n + 0.5)).
func IDF(docs, df int64) float64 {
	return math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
}

// avgLen returns the mean document length, or 1 for an empty collection so
// that length normalisation never divides by zero.
func (s *Stats) avgLen() float64 {
	if s == nil || s.Docs <= 0 || s.Length <= 0 {
		return 1
	}
	return float64(s.Length) / float64(s.Docs)
}

// norm is the length-normalisation part of the denominator, computed once
// per document.
func (p BM25) norm(docLen uint32, avgdl float64) float64 {
	return p.K1 * (1 - p.B + p.B*float64(docLen)/avgdl)
}

// termScore is the BM25 contribution of one term; norm comes from p.norm.
func (p BM25) termScore(idf float64, tf uint32, norm float64) float64 {
	f := float64(tf)
	return idf * (f * (p.K1 + 1)) / (f + norm)
}

// Score returns the BM25 contribution of a term with document frequency df,
// frequency tf in a document of length docLen, given collection statistics
// docs (N) and totalLen (sum of lengths). It is the formula every
// implementation uses, exported for tests and for custom Searchers.
func (p BM25) Score(docs, totalLen, df int64, tf, docLen uint32) float64 {
	p = p.withDefaults()
	st := Stats{Docs: docs, Length: totalLen}
	return p.termScore(IDF(docs, df), tf, p.norm(docLen, st.avgLen()))
}
