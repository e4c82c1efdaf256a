package dedup_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
)

// Every Durable in the package passes the deduptest suite.
func TestDurableConformance(t *testing.T) {
	content := func(o *dedup.ContentOptions) func(t *testing.T) deduptest.DurableContent {
		return func(t *testing.T) deduptest.DurableContent {
			c, err := dedup.NewContent(o)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	for _, tc := range []struct {
		name string
		h    deduptest.DurableHarness
	}{
		{"Content", deduptest.DurableHarness{New: content(nil), Near: true}},
		{"Content with simhash", deduptest.DurableHarness{New: content(&dedup.ContentOptions{MaxHamming: 12}), Near: true}},
		{"ExactContent", deduptest.DurableHarness{New: func(*testing.T) deduptest.DurableContent { return new(dedup.ExactContent) }}},
	} {
		t.Run(tc.name, func(t *testing.T) { deduptest.TestDurable(t, tc.h) })
	}
}
