// Package fetchertest is the conformance suite every fetch.Fetcher
// implementation runs, in the style of database/sql's driver tests, with
// the helpers that connect a fetcher to the simulated web of package
// fetchtest.
//
// The suite lives beside fetchtest rather than in it because fetchtest
// must not import fetch: fetch's own tests use the simulated web.
//
// # Suite
//
// Run starts a small fetchtest.Web on 127.0.0.1 and asks the Harness for
// the fetcher under test. A fetcher that goes over HTTP reaches the web
// through WebOptions (or its own dialer); one that answers from stored
// content (fetch.Static, a WARC archive) is filled beforehand with the
// web's answers to URLs, which Record captures as raw HTTP messages. The
// suite then checks the contract of fetch.Fetcher against answers it
// takes from the web itself:
//
//   - a response for every status (200, 3xx, 404, 410, 429, 500, 503),
//     with URL the requested one, Status, Header as received, Body without
//     its Content-Encoding and in UTF-8 for text, ContentType, Charset,
//     ETag, LastModified, Location only on redirects;
//   - redirects are not followed: the 3xx comes back with its Location
//     resolved to an absolute URL, and the target is not requested;
//   - a conditional request with the ETag of the page is answered 304
//     without a body;
//   - every error is a *fetch.Error with a Kind: a missing request or URL
//     is KindBadURL wrapping fetch.ErrScheme, and so is a URL that is not
//     absolute http or https; a canceled context gives KindCanceled
//     wrapping context.Canceled, before and during a fetch, promptly; an
//     expired deadline wraps context.DeadlineExceeded;
//   - concurrent fetches give the same answers as sequential ones.
//
// A test of an implementation reads:
//
//	func TestConformance(t *testing.T) {
//		fetchertest.Run(t, fetchertest.Harness{
//			New: func(t *testing.T, w *fetchtest.Web) fetch.Fetcher {
//				f := fetch.NewHTTP(fetchertest.WebOptions(w))
//				t.Cleanup(func() { f.Close() })
//				return f
//			},
//		})
//	}
//
// Known deviations of an implementation are named in Harness.Skip, so
// that they show in the test output instead of hiding in a weaker suite.
package fetchertest
