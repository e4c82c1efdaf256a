package fetch

import (
	"context"
	"net/http"
)

// Static is a Fetcher serving fixed responses from memory, keyed by the
// URL's String: the second implementation of Fetcher, for tests of code that
// consumes responses and for replaying stored pages without a network. A URL
// not in the map gets a 404 with an empty body. Fetch returns a shallow copy
// with URL set to the requested URL and, if the stored response has an ETag
// equal to Request.ETag, a 304 without body.
//
// A Static is safe for concurrent use as long as it is not modified.
type Static map[string]*Response

var _ Fetcher = Static(nil)

// Fetch implements Fetcher. It costs one map lookup and one Response copy.
func (s Static) Fetch(ctx context.Context, req *Request) (*Response, error) {
	if req == nil || req.URL == nil {
		return nil, &Error{Op: "request", Kind: KindBadURL, Err: ErrScheme}
	}
	if sc := req.URL.Scheme; sc != "http" && sc != "https" || req.URL.Host == "" {
		return nil, &Error{Op: "request", Kind: KindBadURL, URL: req.URL.String(), Err: ErrScheme}
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "request", Kind: KindCanceled, URL: req.URL.String(), Err: err}
	}
	r, ok := s[req.URL.String()]
	if !ok {
		return &Response{URL: req.URL, Status: http.StatusNotFound, Header: http.Header{}}, nil
	}
	c := *r
	c.URL = req.URL
	if req.ETag != "" && req.ETag == r.ETag {
		c.Status, c.Body, c.Truncated = http.StatusNotModified, nil, false
	}
	return &c, nil
}
