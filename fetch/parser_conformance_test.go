package fetch_test

import (
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/parsertest"
)

// Every Parser of the package passes the parsertest suite with the
// formats it reads: HTML, Sitemap and Feed on their own, ByType (HTML and
// sitemaps, by content type), Registry (all three, by content type) and
// a ParserFunc around a Registry.
func TestParserConformance(t *testing.T) {
	all := parsertest.HTML | parsertest.Sitemap | parsertest.Feed
	tests := []struct {
		name string
		h    parsertest.Harness
	}{
		{"HTML", parsertest.Harness{Formats: parsertest.HTML, New: func(*testing.T) fetch.Parser { return new(fetch.HTML) }}},
		{"Sitemap", parsertest.Harness{Formats: parsertest.Sitemap, New: func(*testing.T) fetch.Parser { return new(fetch.Sitemap) }}},
		{"Feed", parsertest.Harness{Formats: parsertest.Feed, New: func(*testing.T) fetch.Parser { return new(fetch.Feed) }}},
		{"ByType", parsertest.Harness{Formats: parsertest.HTML | parsertest.Sitemap, Dispatch: true,
			New: func(*testing.T) fetch.Parser { return new(fetch.ByType) }}},
		{"Registry", parsertest.Harness{Formats: all, Dispatch: true, New: func(*testing.T) fetch.Parser { return new(fetch.Registry) }}},
		{"ParserFunc", parsertest.Harness{Formats: all, Dispatch: true, New: func(*testing.T) fetch.Parser {
			return fetch.ParserFunc(new(fetch.Registry).Parse)
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { parsertest.Run(t, tt.h) })
	}
}
