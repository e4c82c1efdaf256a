package main

import (
	"regexp"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// TestScopeConformance runs the URLFilter suite on the crawl's Scope, in
// the configurations it is used in.
func TestScopeConformance(t *testing.T) {
	for name, s := range map[string]Scope{
		"domains+skip": {Domains: []string{"example.co.uk", "sim.test"}, Skip: regexp.MustCompile(`/private/|\?sid=`)},
		"skip":         {Skip: regexp.MustCompile(`/search\?`)},
		"zero":         {},
	} {
		t.Run(name, func(t *testing.T) {
			var cases frontiertest.Cases
			switch name {
			case "domains+skip":
				cases = frontiertest.Cases{
					{URL: "http://www.example.co.uk/a"}, {URL: "http://EXAMPLE.co.uk/a"}, {URL: "http://h001.sim.test:8080/x"},
					{URL: "http://other.co.uk/a", Reject: true, Reason: frontier.ReasonDomain},
					{URL: "http://co.uk/a", Reject: true, Reason: frontier.ReasonDomain},
					{URL: "http://[::1]/a", Reject: true, Reason: frontier.ReasonDomain},
					{URL: "http://www.example.co.uk/private/x", Reject: true, Reason: frontier.ReasonPattern},
					{URL: "http://h001.sim.test/item?sid=9", Reject: true, Reason: frontier.ReasonPattern},
				}
			case "skip":
				cases = frontiertest.Cases{
					{URL: "http://any.test/search"},
					{URL: "http://any.test/search?q=x", Reject: true, Reason: frontier.ReasonPattern},
				}
			default:
				cases = frontiertest.Cases{{URL: "http://any.where/"}, {URL: "ftp://x/"}}
			}
			frontiertest.RunFilter(t, func() frontier.URLFilter { return s }, cases)
		})
	}
}

// TestFocusConformance runs the Prioritizer suite on Focus, without and
// with recorded page relevance.
func TestFocusConformance(t *testing.T) {
	t.Run("new", func(t *testing.T) {
		frontiertest.RunPrioritizer(t, func() frontier.Prioritizer { return NewFocus("river flood boat") })
	})
	t.Run("recorded", func(t *testing.T) {
		frontiertest.RunPrioritizer(t, func() frontier.Prioritizer {
			f := NewFocus("river flood boat")
			f.Record("http://a.test/", "River flood", "boats on the river")
			f.Record("http://a.test/water", "Water", "flood flood flood river")
			f.Record("\x00", "", "")
			return f
		})
	})
	t.Run("empty-query", func(t *testing.T) {
		frontiertest.RunPrioritizer(t, func() frontier.Prioritizer { return NewFocus("the of and") })
	})
}
