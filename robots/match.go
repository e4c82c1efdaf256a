package robots

import (
	"strings"
	"unsafe"
)

// rule is one compiled allow or disallow line.
//
// The pattern is split at its '*' wildcards into literal segments, each held
// in canonical form (see appendCanon), so that matching is a prefix test, a
// few strings.Index calls and, for a '$'-anchored pattern, a suffix test: no
// allocation and no backtracking. Greedy leftmost matching of the segments is
// exact for patterns whose only metacharacter is '*'.
type rule struct {
	segs     []string // canonical literal segments; len(segs)-1 wildcards between them
	anchored bool     // the pattern ended in '$'
	allow    bool
	length   int   // octets of the pattern as written: the RFC 9309 specificity
	last     int16 // for an anchored pattern, the byte a matching path ends with; -1 if any
}

// compileRule compiles the value of an allow or disallow line. The value is
// non-empty and has no surrounding whitespace.
func compileRule(value string, allow bool) rule {
	r := rule{allow: allow, length: len(value), last: -1}
	p := value
	if p[0] != '/' && p[0] != '*' {
		// RFC 9309 requires a pattern to start with "/"; a bare "private"
		// can only mean "/private" (temoto and Google agree).
		p = "/" + p
	}
	if strings.HasSuffix(p, "$") {
		r.anchored = true
		p = p[:len(p)-1]
	}
	parts := strings.Split(p, "*")
	r.segs = make([]string, 0, len(parts))
	var canon []byte
	inQuery := false
	for i, part := range parts {
		if part == "" && i > 0 && i < len(parts)-1 {
			continue // "**" is one wildcard
		}
		canon, inQuery = appendCanon(canon[:0], part, inQuery)
		r.segs = append(r.segs, string(canon))
	}
	if tail := r.segs[len(r.segs)-1]; r.anchored && tail != "" {
		r.last = int16(tail[len(tail)-1])
	}
	return r
}

// match reports whether the rule matches the canonical path p.
func (r *rule) match(p string) bool {
	if r.last >= 0 && (p == "" || p[len(p)-1] != byte(r.last)) {
		return false // cheap rejection for "*.gif$" and the like
	}
	segs := r.segs
	first := segs[0]
	if len(p) < len(first) || p[:len(first)] != first {
		return false
	}
	if len(segs) == 1 {
		return !r.anchored || len(p) == len(first)
	}
	pos := len(first)
	last := len(segs) - 1
	for _, s := range segs[1:last] {
		i := strings.Index(p[pos:], s)
		if i < 0 {
			return false
		}
		pos += i + len(s)
	}
	tail := segs[last]
	if r.anchored {
		return len(p)-pos >= len(tail) && p[len(p)-len(tail):] == tail
	}
	return strings.Contains(p[pos:], tail)
}

// unreserved reports whether c is an RFC 3986 unreserved character: the only
// characters whose percent-encoded and literal forms are the same URI.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

const upperhex = "0123456789ABCDEF"

// special marks the bytes appendCanon rewrites; specialInQuery those it
// rewrites after the first '?'. canonPath scans with them so that the common
// path (plain ASCII, no escapes, no '/' or ':' in the query) is matched in
// place.
var special, specialInQuery = func() (t, q [256]bool) {
	for c := range t {
		t[c] = c <= ' ' || c >= 0x7f || c == '%' || c == '*' || c == '$'
		q[c] = t[c] || inQueryEncoded(byte(c))
	}
	return t, q
}()

// inQueryEncoded reports the characters a query may carry raw (RFC 3986
// §3.4) that are data there rather than structure, so that their literal and
// percent-encoded forms denote the same query: "?u=https://a" and
// "?u=https%3A%2F%2Fa" (RFC 9309 §2.2.2, second example). The sub-delimiters
// ('&', '=', '+', ...) structure queries and stay distinct from their escapes.
func inQueryEncoded(c byte) bool { return c == ':' || c == '/' || c == '?' || c == '@' }

// appendCanon appends the canonical form of s to dst, the form RFC 9309
// §2.2.2 compares in: a percent-encoded unreserved character is decoded
// ("%62" is "b"), every other escape keeps its encoding with upper-case hex
// ("%2f" is "%2F", never "/": reserved characters are not decoded), and octets
// outside printable US-ASCII (UTF-8, controls, space) are percent-encoded, so
// "/ツ" in a rule and "/%E3%83%84" in a URL meet. '*' and '$' are encoded too:
// inside a pattern they only reach here as literals ('$' not at the end), and
// a URL's literal "*" must meet a rule's "%2A" (§2.2.3). After the first '?'
// (inQuery, returned updated), ':', '/', '?' and '@' are encoded as well (see
// inQueryEncoded). A '%' not followed by two hex digits stands for itself and
// is encoded as "%25".
func appendCanon(dst []byte, s string, inQuery bool) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) {
				hi, ok1 := unhex(s[i+1])
				lo, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					v := hi<<4 | lo
					if unreserved(v) {
						dst = append(dst, v)
					} else {
						dst = append(dst, '%', upperhex[v>>4], upperhex[v&15])
					}
					i += 2
					continue
				}
			}
			dst = append(dst, "%25"...)
		case special[c] || inQuery && inQueryEncoded(c):
			dst = append(dst, '%', upperhex[c>>4], upperhex[c&15])
		default:
			if c == '?' {
				inQuery = true
			}
			dst = append(dst, c)
		}
	}
	return dst, inQuery
}

// requestPath returns the path and query of target, a full URL or a path,
// possibly followed by a fragment, which canonPath removes. It does not
// allocate. slash reports that the result lacks the leading "/" it stands for
// ("http://h?q" has path "/?q"). A target that starts with "/" is a path,
// also "//a/b" (the path of http://h//a/b, as url.URL.EscapedPath gives
// it): it is not read as a scheme-relative URL, so that a canonical path
// stays what it is.
func requestPath(target string) (p string, slash bool) {
	if !strings.HasPrefix(target, "/") {
		// A scheme (RFC 3986 §3.1) is a letter, then letters, digits,
		// '+', '-' and '.', up to "://".
		for i := 0; i < len(target); i++ {
			c := target[i]
			if c == ':' && i > 0 {
				if strings.HasPrefix(target[i:], "://") {
					return afterAuthority(target[i+3:])
				}
				break
			}
			if !isAlpha(c) && (i == 0 || !isDigit(c) && c != '+' && c != '-' && c != '.') {
				break
			}
		}
	}
	return target, !strings.HasPrefix(target, "/")
}

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// afterAuthority returns what follows the authority that starts s.
func afterAuthority(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '/':
			return s[i:], false
		case '?', '#':
			return s[i:], true
		}
	}
	return "", true
}

// canonPath returns the canonical form of the request path of target, using
// buf when it must be rewritten. The result aliases buf or target and is valid
// only while both are.
func canonPath(buf []byte, target string) string {
	p, slash := requestPath(target)
	t := &special
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '#' {
			p = p[:i]
			break
		}
		if t[c] {
			slash = true // take the rewriting path below
			break
		}
		if c == '?' {
			t = &specialInQuery
		}
	}
	if !slash {
		return p
	}
	if i := strings.IndexByte(p, '#'); i >= 0 {
		p = p[:i]
	}
	b := buf[:0]
	if !strings.HasPrefix(p, "/") {
		b = append(b, '/')
	}
	b, _ = appendCanon(b, p, false)
	return unsafe.String(unsafe.SliceData(b), len(b))
}
