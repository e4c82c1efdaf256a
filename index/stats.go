package index

import (
	"maps"
	"slices"
)

// Stats are collection statistics: what BM25 needs beyond a document's own
// term frequencies. A shard reports its local Stats; a Broker adds them up
// into global Stats and hands those back to every shard with each query, so
// scores do not depend on how documents were partitioned.
type Stats struct {
	// Docs is the number of live (not deleted) documents, N.
	Docs int64
	// Length is the sum of the lengths (terms) of the live documents.
	Length int64
	// DF maps a term to the number of live documents containing it, n.
	// A term absent from DF has n = 0.
	DF map[string]int64
}

// Add adds o into s (s.DF is allocated if needed). Adding is exact integer
// arithmetic, so the sum does not depend on order or partitioning.
func (s *Stats) Add(o *Stats) {
	if o == nil {
		return
	}
	s.Docs += o.Docs
	s.Length += o.Length
	if len(o.DF) > 0 && s.DF == nil {
		s.DF = make(map[string]int64, len(o.DF))
	}
	for t, n := range o.DF {
		s.DF[t] += n
	}
}

// Clone returns a deep copy of s.
func (s *Stats) Clone() *Stats {
	if s == nil {
		return nil
	}
	c := *s
	c.DF = maps.Clone(s.DF)
	return &c
}

// Terms returns the terms of s.DF in ascending order.
func (s *Stats) Terms() []string {
	return slices.Sorted(maps.Keys(s.DF))
}
