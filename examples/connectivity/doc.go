// Command connectivity is the connectivity server of book §20.4: it loads
// (or builds from a link log) a compressed web graph, its transpose and the
// URL map, and answers "which URLs does u link to?" and "which URLs link to
// u?" over HTTP: JSON for programs, HTML pages for people.
//
// Usage:
//
//	connectivity -store crawl/graph/web.graph   # what the crawler prints; also its basename, its directory or the crawl's -out
//	connectivity -links crawl/links.tsv         # build from "source<TAB>target" lines
//
//	open http://127.0.0.1:8090/                 # a form, and a page per URL with its links
//	curl 'http://127.0.0.1:8090/out?url=http://example.com/&limit=10'
//	curl 'http://127.0.0.1:8090/in?id=42&offset=100&limit=100'
//	curl 'http://127.0.0.1:8090/stats'
//
// The default address, 127.0.0.1:8090, is the command's own: simweb
// serves on 8080 and the crawler's status page is shown on 8081, so all
// three run side by side.
//
// # Answers
//
// /out and /in answer {"id", "url", "degree", "offset", "limit", "links":
// [{"id", "url"}, ...]}; degree is the total number of links, links the page
// selected by offset and limit (default 100, at most 10000). /stats answers
// the node and arc counts and, for a compressed store, bits per link of the
// graph and its transpose and the size of the URL map. Malformed parameters
// get 400, unknown URLs and ids 404, all with {"error": "..."}.
//
// A url= is found as typed or as its canonical form (package urlnorm: the
// crawler's duplicate-URL key), with and without a trailing slash, and
// with http:// or https:// when it has no scheme; "url" in the answer is
// the URL found.
//
// # Link logs
//
// -links reads a crawler's links.tsv or any file of "source<TAB>target"
// lines and lone "source" lines; blank lines and lines starting with '#'
// are skipped. A line that is anything else (a field that is not an
// absolute http or https URL, an empty field, three fields) stops the
// command with "FILE:LINE: what is wrong".
//
// Exit status: 0 after a clean stop (Ctrl-C), 1 when the graph cannot be
// loaded or served, 2 for bad flags.
package main
