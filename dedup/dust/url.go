package dust

import "strings"

// parts are the pieces of a canonical absolute URL
// "scheme://host/path?query", as substrings of it.
type parts struct {
	scheme, host, path, query string
	hasQuery                  bool // "?" present, perhaps with an empty query
}

// split splits a canonical absolute URL. It reports false for anything
// the rules do not apply to: no "scheme://", userinfo, an empty host, a
// fragment, a path that does not start with "/", bytes a canonical URL
// does not have.
func split(u string) (p parts, ok bool) {
	i := strings.Index(u, "://")
	if i <= 0 || !validScheme(u[:i]) || !validChars(u) {
		return p, false
	}
	p.scheme = u[:i]
	rest := u[i+3:]
	j := hostEnd(rest)
	p.host, rest = rest[:j], rest[j:]
	if !validHost(p.host) || rest == "" || rest[0] != '/' || strings.IndexByte(rest, '#') >= 0 {
		return p, false
	}
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		p.path, p.query, p.hasQuery = rest[:q], rest[q+1:], true
	} else {
		p.path = rest
	}
	return p, true
}

// hostEnd returns the length of the authority at the start of s.
func hostEnd(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '/' || c == '?' || c == '#' {
			return i
		}
	}
	return len(s)
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// appendURL appends scheme://host path[?query] to b.
func appendURL(b []byte, scheme, host, path string, hasQuery bool, query string) []byte {
	b = append(b, scheme...)
	b = append(b, "://"...)
	b = append(b, host...)
	b = append(b, path...)
	if hasQuery {
		b = append(b, '?')
		b = append(b, query...)
	}
	return b
}

// appendWithout appends query q without its components named in set
// (names joined by "&") and reports whether any component is left.
func appendWithout(b []byte, q, set string) ([]byte, bool) {
	n := 0
	for q != "" {
		c, rest, _ := strings.Cut(q, "&")
		q = rest
		if c == "" {
			continue
		}
		if cn, ok := paramName(c); ok && inSet(set, cn) {
			continue
		}
		if n > 0 {
			b = append(b, '&')
		}
		b = append(b, c...)
		n++
	}
	return b, n > 0
}

// hasParam reports whether query q has a component named in set (names
// joined by "&").
func hasParam(q, set string) bool {
	for q != "" {
		c, rest, _ := strings.Cut(q, "&")
		if cn, ok := paramName(c); ok && inSet(set, cn) {
			return true
		}
		q = rest
	}
	return false
}
