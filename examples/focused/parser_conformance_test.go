package main

import (
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/parsertest"
)

// TestFocusParserConformance runs the parsertest suite on the parser the
// focused crawler uses: Focus.Parser around a fetch.Registry, which
// records each page's relevance and must hand the Documents on unchanged.
func TestFocusParserConformance(t *testing.T) {
	parsertest.Run(t, parsertest.Harness{
		Formats:  parsertest.HTML | parsertest.Sitemap | parsertest.Feed,
		Dispatch: true,
		New: func(*testing.T) fetch.Parser {
			return NewFocus("river flood news").Parser(new(fetch.Registry))
		},
	})
}
