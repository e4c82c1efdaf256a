package frontier_test

import (
	"regexp"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// TestPrioritizerConformance runs the Prioritizer suite on every
// prioritizer of the package, in their default and in other
// configurations.
func TestPrioritizerConformance(t *testing.T) {
	tests := []struct {
		name string
		new  func() frontier.Prioritizer
	}{
		{"Depth", func() frontier.Prioritizer { return frontier.Depth{} }},
		{"Depth/step3", func() frontier.Prioritizer { return frontier.Depth{Step: 3} }},
		{"Depth/negative-step", func() frontier.Prioritizer { return frontier.Depth{Step: -2} }},
		{"ChangeRate", func() frontier.Prioritizer { return frontier.ChangeRate{} }},
		{"ChangeRate/quality", func() frontier.Prioritizer {
			return frontier.ChangeRate{Min: 1e-9, Max: 1, Unknown: 0.9, Quality: func(u *frontier.URL) float64 {
				return float64(len(u.URL)%7) / 3 // above 1 and 0 included: clamped
			}}
		}},
		{"Rules", func() frontier.Prioritizer {
			return &frontier.Rules{Rules: []frontier.Rule{
				{HostSuffix: "news.test", Priority: -1},
				{Pattern: regexp.MustCompile(`/archive/`), Priority: 0},
				{HostSuffix: "c.test", Pattern: regexp.MustCompile(`always`), Priority: 0},
				{}, // matches nothing: skipped
			}, Default: frontier.Depth{Step: 2}}
		}},
		{"Rules/default", func() frontier.Prioritizer { return &frontier.Rules{} }},
		// A Rule's Priority beyond the levels there are is clamped.
		{"Rules/beyond-levels", func() frontier.Prioritizer {
			return &frontier.Rules{Rules: []frontier.Rule{
				{HostSuffix: "news.test", Priority: 2},
				{HostSuffix: "c.test", Priority: -3},
			}}
		}},
		{"OPIC", func() frontier.Prioritizer { return frontier.NewOPIC() }},
		{"OPIC/initial", func() frontier.Prioritizer { return &frontier.OPIC{Initial: 1e-300} }},
		{"PrioritizerFunc", func() frontier.Prioritizer {
			return frontier.PrioritizerFunc(func(u *frontier.URL, levels int) int {
				return len(u.Anchor) % levels
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frontiertest.RunPrioritizer(t, tt.new)
		})
	}
}
