package fetch

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"sync"
)

// Registry is a Parser that picks a parser for each response by its media
// type: the extension point for new formats. Parsers registered with
// Register take precedence; for every other type the defaults apply:
//
//   - text/html, application/xhtml+xml: HTML
//   - application/rss+xml, application/atom+xml: Feed
//   - application/xml, text/xml, application/rdf+xml and other "+xml"
//     types: by the root element, Feed for rss, feed and rdf:RDF, Sitemap
//     for urlset and sitemapindex (and for a gzip body), ErrUnsupportedType
//     for anything else
//   - application/gzip, application/x-gzip: Sitemap (gzip sitemaps)
//   - text/plain with "sitemap" in the URL path: Sitemap (text sitemaps)
//
// Any other type yields a *Error wrapping ErrUnsupportedType, which the
// crawler counts as a page fetched without text or links. The media type is
// Response.ContentType, or the Content-Type header when that is empty.
//
// The zero value is ready to use. A Registry is safe for concurrent use,
// Register included; choosing a parser costs one map lookup under a read
// lock, plus a scan of the first bytes for the root element of generic XML.
type Registry struct {
	mu    sync.RWMutex
	types map[string]Parser

	html    HTML
	sitemap Sitemap
	feed    Feed
}

var _ Parser = (*Registry)(nil)

// Register makes p the parser for mediaType (a type such as
// "application/json", or a whole top-level type as "image/*"), replacing
// the default or an earlier registration. A nil p makes the type
// unsupported. Media types are matched case-insensitively, without
// parameters.
func (r *Registry) Register(mediaType string, p Parser) {
	mt := normType(mediaType)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.types == nil {
		r.types = map[string]Parser{}
	}
	r.types[mt] = p
}

func normType(ct string) string { return MediaType(ct) }

// ParserFor returns the parser the Registry uses for resp, or nil when
// there is none.
func (r *Registry) ParserFor(resp *Response) Parser {
	ct := resp.ContentType
	if ct == "" && resp.Header != nil {
		ct = normType(resp.Header.Get("Content-Type"))
	}
	r.mu.RLock()
	p, ok := r.types[ct]
	if !ok {
		if major, _, found := strings.Cut(ct, "/"); found {
			p, ok = r.types[major+"/*"]
		}
	}
	r.mu.RUnlock()
	if ok {
		return p
	}
	switch {
	case ct == "text/html" || ct == "application/xhtml+xml":
		return &r.html
	case ct == "application/rss+xml" || ct == "application/atom+xml":
		return &r.feed
	case ct == "application/xml" || ct == "text/xml" || strings.HasSuffix(ct, "+xml"):
		if bytes.HasPrefix(resp.Body, []byte{0x1f, 0x8b}) {
			return &r.sitemap // a gzip sitemap served as XML
		}
		switch XMLRoot(resp.Body) {
		case "rss", "feed", "RDF":
			return &r.feed
		case "urlset", "sitemapindex":
			return &r.sitemap
		}
	case ct == "application/gzip" || ct == "application/x-gzip":
		return &r.sitemap
	case ct == "text/plain" && resp.URL != nil && strings.Contains(strings.ToLower(resp.URL.Path), "sitemap"):
		return &r.sitemap
	}
	return nil
}

// Parse implements Parser.
func (r *Registry) Parse(resp *Response) (*Document, error) {
	if p := r.ParserFor(resp); p != nil {
		return p.Parse(resp)
	}
	return nil, &Error{Op: "parse", Kind: KindProtocol, URL: urlString(resp.URL), Err: ErrUnsupportedType}
}

// XMLRoot returns the local name of the root element of an XML document
// ("rss", "feed", "urlset", ...), or "" when none is found in its first
// 64 KiB. It skips the declaration, comments, processing instructions and
// a DOCTYPE, and never fails.
func XMLRoot(body []byte) string {
	d := xml.NewDecoder(bytes.NewReader(body[:min(len(body), 64<<10)]))
	d.Strict = false
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	for {
		tok, err := d.RawToken()
		if err != nil {
			return ""
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local
		}
	}
}
