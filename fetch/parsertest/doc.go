// Package parsertest is the conformance suite every fetch.Parser
// implementation runs, in the style of database/sql's driver tests.
//
// # Suite
//
// Run feeds the parser under test documents of the formats it declares
// (Harness.Formats): the HTML pages and sitemaps of a small
// fetchtest.Web on 127.0.0.1, fetched as the crawler fetches them, RSS and
// Atom feeds of its own, and garbage of every kind. It checks the
// contract of fetch.Parser and fetch.Document:
//
//   - Document.URL is the response's URL and Base an absolute URL;
//   - links are absolute, never javascript:, mailto:, data:, tel: or
//     vbscript:, never a same-page fragment, and carry the Tag of the
//     element they came from; on the simulated web, titles and links
//     equal the web's ground truth, and a sitemap lists the host's pages;
//   - robots directives (meta robots, X-Robots-Tag), <base href> and
//     <html lang> reach the Document;
//   - a truncated response gives a truncated Document;
//   - no input makes the parser panic, modify the response body, or
//     return an error other than a *fetch.Error;
//   - a parser that picks by content type (Harness.Dispatch) refuses
//     other types with a *fetch.Error wrapping fetch.ErrUnsupportedType;
//   - concurrent parses give the same Documents as sequential ones.
//
// A test of an implementation reads:
//
//	func TestConformance(t *testing.T) {
//		parsertest.Run(t, parsertest.Harness{
//			New:      func(*testing.T) fetch.Parser { return new(fetch.Registry) },
//			Formats:  parsertest.HTML | parsertest.Sitemap | parsertest.Feed,
//			Dispatch: true,
//		})
//	}
package parsertest
