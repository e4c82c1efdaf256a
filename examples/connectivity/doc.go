// Command connectivity is the connectivity server of book §20.4: it loads
// (or builds from a link log) a compressed web graph, its transpose and the
// URL map, and answers "which URLs does u link to?" and "which URLs link to
// u?" over HTTP with JSON.
//
// Usage:
//
//	connectivity -store BASENAME            # files written by webgraph.Builder
//	connectivity -links links.tsv           # build from "source<TAB>target" lines
//
//	curl 'http://127.0.0.1:8080/out?url=http://example.com/&limit=10'
//	curl 'http://127.0.0.1:8080/in?id=42&offset=100&limit=100'
//	curl 'http://127.0.0.1:8080/stats'
//
// # Answers
//
// /out and /in answer {"id", "url", "degree", "offset", "limit", "links":
// [{"id", "url"}, ...]}; degree is the total number of links, links the page
// selected by offset and limit (default 100, at most 10000). /stats answers
// the node and arc counts and, for a compressed store, bits per link of the
// graph and its transpose and the size of the URL map. Malformed parameters
// get 400, unknown URLs and ids 404, all with {"error": "..."}.
package main
