package dedup_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
)

func TestSetConformance(t *testing.T) {
	deduptest.TestURLSeen(t, func(*testing.T) dedup.URLSeen { return new(dedup.Set) })
}

func TestPresizedSetConformance(t *testing.T) {
	deduptest.TestURLSeen(t, func(*testing.T) dedup.URLSeen { return dedup.NewSet(1000) })
}

func TestMapSetConformance(t *testing.T) {
	deduptest.TestURLSeen(t, func(*testing.T) dedup.URLSeen { return new(dedup.MapSet) })
}

func TestContentConformance(t *testing.T) {
	deduptest.TestContentSeen(t, deduptest.ContentCaps{Near: true}, func(t *testing.T) dedup.ContentSeen {
		c, err := dedup.NewContent(nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}

func TestContentSimhashConformance(t *testing.T) {
	deduptest.TestContentSeen(t, deduptest.ContentCaps{Near: true}, func(t *testing.T) dedup.ContentSeen {
		c, err := dedup.NewContent(&dedup.ContentOptions{MaxHamming: 12})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}

func TestExactContentConformance(t *testing.T) {
	deduptest.TestContentSeen(t, deduptest.ContentCaps{}, func(*testing.T) dedup.ContentSeen { return new(dedup.ExactContent) })
}

// TestSetContains: Contains answers like TestAndAdd without adding,
// fingerprint 0 and a zero-value Set included.
func TestSetContains(t *testing.T) {
	for _, s := range []*dedup.Set{dedup.NewSet(0), dedup.NewSet(1 << 12), new(dedup.Set)} {
		for fp := uint64(0); fp < 3000; fp += 3 {
			if s.Contains(fp) {
				t.Fatalf("Contains(%d) before Add", fp)
			}
			if s.Add(fp) {
				t.Fatalf("Add(%d) reported it present", fp)
			}
			if !s.Contains(fp) || s.Contains(fp+1) {
				t.Fatalf("Contains after Add(%d) wrong", fp)
			}
			if !s.Add(fp) {
				t.Fatalf("second Add(%d) reported it new", fp)
			}
		}
		if n := s.Len(); n != 1000 {
			t.Errorf("Len = %d, want 1000", n)
		}
	}
}
