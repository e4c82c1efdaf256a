package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// ErrOption is wrapped by the errors of Options.Validate and ParseProxy.
var ErrOption = errors.New("fetch: invalid option")

// ownedHeaders are the request headers the fetcher sets itself, or that
// belong to the connection rather than the request; Options.Header and
// HostHeader cannot set them. The value says what to use instead.
var ownedHeaders = map[string]string{
	"User-Agent":          "Options.UserAgent",
	"Accept":              "Options.Accept",
	"Accept-Encoding":     "nothing: the fetcher asks for gzip and decodes it itself",
	"If-None-Match":       "Request.ETag",
	"If-Modified-Since":   "Request.LastModified",
	"Host":                "the URL's host",
	"Content-Length":      "nothing: the fetcher frames its requests",
	"Transfer-Encoding":   "nothing: the fetcher frames its requests",
	"Te":                  "nothing: a hop-by-hop header",
	"Trailer":             "nothing: the fetcher frames its requests",
	"Connection":          "nothing: a hop-by-hop header",
	"Keep-Alive":          "nothing: a hop-by-hop header",
	"Proxy-Connection":    "nothing: a hop-by-hop header",
	"Upgrade":             "nothing: a hop-by-hop header",
	"Proxy-Authorization": "credentials in the proxy's URL (Options.Proxy)",
}

// Validate reports the first problem of o: a header Options.Header or
// HostHeader may not set (one the fetcher owns, see Header) or a header
// name or value that is not valid HTTP, or a HostHeader key that is not a
// host name. The errors wrap ErrOption. NewHTTP does not call it: a
// fetcher made from options that do not validate ignores the headers it
// owns and fails the fetches an invalid header would break. Commands
// call it to refuse bad settings up front.
func (o *Options) Validate() error {
	if err := validateHeader("Header", o.Header); err != nil {
		return err
	}
	hosts := make([]string, 0, len(o.HostHeader))
	for h := range o.HostHeader {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts) // the same first problem every time
	for _, h := range hosts {
		k := hostKey(h)
		if k == "" || strings.ContainsAny(k, "/?#@ \t") || !httpguts.ValidHostHeader(k) {
			return fmt.Errorf("%w: HostHeader key %q is not a host name", ErrOption, h)
		}
		if err := validateHeader("HostHeader["+k+"]", o.HostHeader[h]); err != nil {
			return err
		}
	}
	return nil
}

func validateHeader(field string, h http.Header) error {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("%w: %s: %q is not a header name", ErrOption, field, k)
		}
		if use, ok := ownedHeaders[http.CanonicalHeaderKey(k)]; ok {
			return fmt.Errorf("%w: %s: the fetcher sets %s itself (use %s)", ErrOption, field, http.CanonicalHeaderKey(k), use)
		}
		for _, v := range h[k] {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("%w: %s: %s: value %q is not a valid header value", ErrOption, field, k, v)
			}
		}
	}
	return nil
}

// ParseHeader parses a header line "Name: value", as the -header flag of
// a command takes it, checking that name and value are valid HTTP. The
// value has its surrounding spaces removed.
func ParseHeader(line string) (name, value string, err error) {
	name, value, ok := strings.Cut(line, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok:
		return "", "", fmt.Errorf("%w: header %q: want \"Name: value\"", ErrOption, line)
	case !httpguts.ValidHeaderFieldName(name):
		return "", "", fmt.Errorf("%w: header %q: %q is not a header name", ErrOption, line, name)
	case !httpguts.ValidHeaderFieldValue(value):
		return "", "", fmt.Errorf("%w: header %q: the value is not a valid header value", ErrOption, line)
	}
	return http.CanonicalHeaderKey(name), value, nil
}

// cloneHeader copies h with canonical keys (a map literal may hold
// "user-agent"), so that the owned headers are recognized.
func cloneHeader(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, v := range h {
		ck := http.CanonicalHeaderKey(k)
		out[ck] = append(out[ck], v...)
	}
	return out
}

// hostKey is the HostHeader key of a host: lower case, no port, no final
// dot, no IPv6 brackets.
func hostKey(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// requestHeader builds the header of a request to host: Options.Header,
// then HostHeader[host], then the request's own, each replacing the
// names it sets. The fetcher's own headers are left out of the first two;
// the request's own are kept, as they always were (Fetch then sets
// User-Agent, Accept-Encoding and the conditional headers it has
// fields for over them).
func (f *HTTP) requestHeader(host string, own http.Header) http.Header {
	hh := f.opts.HostHeader[hostKey(host)]
	out := make(http.Header, len(f.opts.Header)+len(hh)+len(own)+6)
	for i, layer := range [...]http.Header{f.opts.Header, hh, own} {
		for k, v := range layer {
			ck := http.CanonicalHeaderKey(k)
			if _, owned := ownedHeaders[ck]; owned && i < 2 {
				continue
			}
			out[ck] = slices.Clone(v)
		}
	}
	return out
}
