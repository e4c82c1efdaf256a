// Package urlnorm resolves the links found in pages, computes the canonical
// form of URLs used as the duplicate-URL key, and derives the host keys that
// politeness, partitioning and the web graph sort by (book §20.2.1, §20.4).
//
// # Resolving links
//
// A link in a page is usually relative to the page (book §20.2.1: the link
// "/wiki/Wikipedia:General_disclaimer" on en.wikipedia.org/wiki/Main_Page
// points to http://en.wikipedia.org/wiki/Wikipedia:General_disclaimer).
// Resolve resolves links as browsers do: for http, https, ws, wss and ftp
// it follows the WHATWG URL Standard's parser, which agrees with RFC 3986 §5
// on ordinary links and adds the leniency browsers apply to hrefs in real
// pages (whitespace, backslashes, any number of slashes after the scheme,
// raw spaces and non-ASCII, internationalized host names, IPv4 written in
// hex); other schemes keep RFC 3986 §5:
//
//	page, _ := url.Parse("http://en.wikipedia.org/wiki/Main_Page")
//	u, err := urlnorm.Resolve(page, "/wiki/Wikipedia:General_disclaimer")
//
// # Canonical URLs
//
// Two spellings of one URL must meet in the "URL seen?" test. Canonical
// applies the syntax-based normalizations of RFC 3986 §6.2.2 and the
// scheme-based ones of §6.2.3 that never change what a server sees: case of
// scheme and host, default ports, percent-encoding (in the query of an
// http URL also "'", which browsers send as %27), dot segments, the empty
// path, the fragment. Rewrites that can change the page (sorting the query,
// stripping session and tracking parameters, folding "www.") are options of
// a Canonicalizer, off by default:
//
//	key, err := urlnorm.Canonical("HTTP://Example.COM:80/a/./b/../%7euser#top")
//	// key == "http://example.com/a/~user"
//
//	c := urlnorm.Canonicalizer{SortQuery: true, StripParams: urlnorm.TrackingParams()}
//	key, err = c.Canonical("http://example.com/?b=2&utm_source=x&a=1")
//	// key == "http://example.com/?a=1&b=2"
//
// # Host keys
//
// Host is the politeness key by default, Domain (the registrable domain,
// "eTLD+1") groups hosts run by one organization, and SortKey orders URLs
// host-reversed ("edu.stanford.www/alchemy") so that the pages of a site sit
// together in the web graph and its adjacency lists compress well.
//
// All functions are safe for concurrent use.
package urlnorm
