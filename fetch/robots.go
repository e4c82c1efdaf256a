package fetch

import (
	"context"
	"net/url"

	"github.com/crawlkit/crawlkit/robots"
)

// RobotsFetch returns a robots.FetchFunc over f, so that robots.txt
// requests go through the same address guard, limits and User-Agent as
// pages. A Fetcher does not follow redirects and reports the resolved
// Location, which is what robots.Cache expects. A body f truncated is
// parsed as far as it goes (f's MaxBodySize should be at least
// robots.MaxSize). The FetchFunc is safe for concurrent use, as every
// Fetcher must be.
//
// It lives here rather than in package robots so that a program using
// only robots.txt rules does not link the fetcher and its dependencies.
func RobotsFetch(f Fetcher) robots.FetchFunc {
	return func(ctx context.Context, rawURL string) (*robots.Response, error) {
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, err
		}
		resp, err := f.Fetch(ctx, &Request{URL: u})
		if err != nil {
			return nil, err
		}
		r := &robots.Response{Status: resp.Status, Body: resp.Body}
		if resp.Location != nil {
			r.Location = resp.Location.String()
		}
		return r, nil
	}
}
