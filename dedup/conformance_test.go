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
