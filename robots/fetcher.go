package robots

import (
	"context"
	"net/url"

	"github.com/crawlkit/crawlkit/fetch"
)

// FromFetcher returns a FetchFunc over a crawler's fetch.Fetcher, so that
// robots.txt requests go through the same address guard, limits and
// User-Agent as pages. A fetch.Fetcher does not follow redirects and reports
// the resolved Location, which is what the Cache expects. A body the fetcher
// truncated is parsed as far as it goes (its MaxBodySize should be at least
// MaxSize). The FetchFunc is safe for concurrent use, as every fetch.Fetcher
// must be.
func FromFetcher(f fetch.Fetcher) FetchFunc {
	return func(ctx context.Context, rawURL string) (*Response, error) {
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, err
		}
		resp, err := f.Fetch(ctx, &fetch.Request{URL: u})
		if err != nil {
			return nil, err
		}
		r := &Response{Status: resp.Status, Body: resp.Body}
		if resp.Location != nil {
			r.Location = resp.Location.String()
		}
		return r, nil
	}
}
