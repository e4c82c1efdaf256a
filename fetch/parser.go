package fetch

import (
	"errors"
	"net/url"
	"strings"
)

// Parser extracts the text and the links of a fetched page: the parse module
// of the book's Figure 20.1. Implementations must be safe for concurrent use
// and must not panic on any input.
type Parser interface {
	// Parse parses resp.Body as a document at resp.URL.
	Parse(resp *Response) (*Document, error)
}

// ParserFunc adapts a function to the Parser interface.
type ParserFunc func(resp *Response) (*Document, error)

// Parse calls f(resp).
func (f ParserFunc) Parse(resp *Response) (*Document, error) { return f(resp) }

// ErrNotSitemap is returned by Sitemap for XML that is neither a urlset nor
// a sitemap index.
var ErrNotSitemap = errors.New("fetch: not a sitemap")

// ErrUnsupportedType is returned by ByType for a content type it has no
// parser for.
var ErrUnsupportedType = errors.New("fetch: no parser for content type")

// Document is what a Parser extracts from a page: text for the indexer,
// links (with anchor text) for the frontier and the web graph.
type Document struct {
	// URL is the URL of the page (the response's URL).
	URL *url.URL
	// Base is the URL relative links were resolved against: the first
	// <base href> if the page has one, otherwise URL.
	Base *url.URL
	// Title is the text of the first <title>, whitespace collapsed.
	Title string
	// Text is the visible text (no script, style, template or comments;
	// <noscript> content is visible, as with scripting disabled, unless
	// HTML.Scripting), whitespace collapsed to single spaces, block
	// elements separated by a space.
	Text string
	// Lang is the language of <html lang>, else the Content-Language
	// header or <meta http-equiv=content-language>; "" if none.
	Lang string
	// Links are the outgoing links in document order, resolved and
	// absolute. Links whose scheme is javascript, mailto, data, tel or
	// vbscript and same-page fragment links ("#top") are left out.
	Links []Link
	// NoIndex and NoFollow are the directives of <meta name=robots> and
	// the X-Robots-Tag header ("none" sets both).
	NoIndex, NoFollow bool
	// Truncated reports that a cap (links, text, entries) was reached or
	// the response body itself was truncated.
	Truncated bool
	// LinksDropped counts the links past the parser's cap on links per
	// page (HTML.MaxLinks) that were left out of Links; 0 when the cap
	// was not reached. A crawler counts the pages it is not 0 for: their
	// tails were not followed.
	LinksDropped int
}

// Link is one outgoing link.
type Link struct {
	// URL is the absolute target, fragment kept (Canonical drops it).
	URL *url.URL
	// Text is the anchor text, whitespace collapsed: the text inside <a>,
	// with the alt text of images in it; the alt of <area>; the title of
	// <iframe> and <frame>.
	Text string
	// Rel is the rel attribute, lowercased ("nofollow", "canonical",
	// "alternate", "next", "prev", "sitemap" for sitemap index entries,
	// "refresh" for meta refresh).
	Rel string
	// Tag is the element the link came from: "a", "area", "link",
	// "iframe", "frame", "meta", "loc" for a sitemap entry, "header"
	// for an HTTP Link header (ParseLinkHeader), or "follow" for a link
	// a selector handler recorded (Element.Follow).
	Tag string
	// Hreflang is the hreflang attribute of a <link> (the language of
	// an alternate version, "en", "pt-BR", "x-default"), trimmed, as the
	// page wrote it; "" if none.
	Hreflang string
}

// HasRel reports whether the space-separated Rel contains token (ASCII
// case-insensitively), e.g. l.HasRel("nofollow").
func (l Link) HasRel(token string) bool {
	for _, f := range strings.Fields(l.Rel) {
		if strings.EqualFold(f, token) {
			return true
		}
	}
	return false
}

// ByType is a Parser that picks the parser for the response's content type:
// HTML for text/html and application/xhtml+xml, Sitemap for XML, gzip and
// for text/plain with "sitemap" in its path (text sitemaps). Other types
// yield ErrUnsupportedType. The zero value uses default parsers.
type ByType struct {
	HTML    HTML
	Sitemap Sitemap
}

var _ Parser = (*ByType)(nil)

// Parse implements Parser.
func (p *ByType) Parse(resp *Response) (*Document, error) {
	switch ct := resp.ContentType; {
	case ct == "text/html" || ct == "application/xhtml+xml":
		return p.HTML.Parse(resp)
	case ct == "application/xml" || ct == "text/xml" || strings.HasSuffix(ct, "+xml") ||
		ct == "application/gzip" || ct == "application/x-gzip" ||
		(ct == "text/plain" && resp.URL != nil && strings.Contains(strings.ToLower(resp.URL.Path), "sitemap")):
		return p.Sitemap.Parse(resp)
	}
	return nil, &Error{Op: "parse", Kind: KindProtocol, URL: urlString(resp.URL), Err: ErrUnsupportedType}
}

func urlString(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.String()
}
