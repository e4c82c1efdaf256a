package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/crawlkit/crawlkit/urlnorm"
	"github.com/crawlkit/crawlkit/webgraph"
)

// errNotURL is wrapped by lookup's error for a query that is no URL at
// all (answered 400, not 404).
var errNotURL = errors.New("not a URL")

// lookup finds the node of a URL as a person types it. The graph holds
// canonical URLs (the crawler's dedup key, urlnorm.Canonical), so the
// exact string is tried first, then its canonical form (case of scheme
// and host, default port, percent-encoding, dot segments, the fragment),
// then the same with and without a trailing slash, and, for a URL given
// without a scheme ("example.com/a"), with http:// and https://. The
// answer's "url" field says which URL was found. At most six lookups.
func lookup(s webgraph.GraphStore, raw string) (int, error) {
	id, err := s.ID(raw)
	if !errors.Is(err, webgraph.ErrUnknownURL) {
		return id, err
	}
	var tries []string
	if !strings.Contains(raw, "://") {
		tries = append(tries, "http://"+raw, "https://"+raw)
	} else {
		tries = append(tries, raw)
	}
	valid := false
	for _, t := range tries {
		c, cerr := urlnorm.Canonical(t)
		if cerr != nil || !strings.HasPrefix(c, "http") {
			continue
		}
		valid = true
		for _, v := range slashVariants(c) {
			if id, err = s.ID(v); !errors.Is(err, webgraph.ErrUnknownURL) {
				return id, err
			}
		}
	}
	if !valid {
		return 0, fmt.Errorf("%w: %q (want an absolute http or https URL)", errNotURL, raw)
	}
	return 0, err
}

// slashVariants returns the canonical URL c and c with its path's
// trailing slash added or removed ("http://a/b" and "http://a/b/"); the
// root path "/" has no other spelling.
func slashVariants(c string) []string {
	rest := c
	query := ""
	if i := strings.IndexByte(c, '?'); i >= 0 {
		rest, query = c[:i], c[i:]
	}
	i := strings.Index(rest, "://")
	if i < 0 || !strings.Contains(rest[i+3:], "/") {
		return []string{c}
	}
	host, path, _ := strings.Cut(rest[i+3:], "/")
	path = "/" + path
	prefix := rest[:i+3] + host
	switch {
	case path == "/":
		return []string{c}
	case strings.HasSuffix(path, "/"):
		return []string{c, prefix + strings.TrimSuffix(path, "/") + query}
	default:
		return []string{c, prefix + path + "/" + query}
	}
}
