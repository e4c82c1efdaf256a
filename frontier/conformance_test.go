package frontier_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

func TestMercatorConformance(t *testing.T) {
	frontiertest.Run(t, frontiertest.Harness{
		New: func(t *testing.T, o frontier.Options) frontier.Frontier {
			m, err := frontier.NewMercator(&o)
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		Prioritized: true,
	})
}

func TestFIFOConformance(t *testing.T) {
	frontiertest.Run(t, frontiertest.Harness{
		New: func(t *testing.T, o frontier.Options) frontier.Frontier {
			f, err := frontier.NewFIFO(&o)
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
	})
}
