package fetch

import (
	"net/url"
	"strings"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// MaxHeaderLinks is the most links ParseLinkHeader returns: a real
// response names a handful (canonical, preload hints, pagination); a
// header that names thousands is hostile, and its tail is dropped.
const MaxHeaderLinks = 256

// ParseLinkHeader parses the values of HTTP Link header fields (RFC 8288
// §3: `<uri>; rel="canonical"; type="text/html", <uri2>; rel=next`),
// each field value a comma-separated list, and returns their links in
// order, each URI resolved against base (which may be nil), with Tag
// "header" and Rel the first rel parameter (RFC 8288 §3.3: later ones are
// ignored) lowercased, its relation types separated by single spaces.
// Links whose target is not an absolute http or https URL after
// resolution are left out, as are link-values that do not start with
// "<uri>"; the parser skips to the next comma outside quotes and goes on.
// Other parameters are read (quoted strings with their escapes) and
// dropped. At most MaxHeaderLinks links are returned. It never panics,
// costs O(total length) and allocates per link.
func ParseLinkHeader(values []string, base *url.URL) []Link {
	var out []Link
	for _, v := range values {
		p := linkScanner{s: v}
		for len(out) < MaxHeaderLinks {
			target, rel, ok, more := p.next()
			if ok {
				if u, err := urlnorm.Resolve(base, target); err == nil && u.IsAbs() && u.Host != "" &&
					(u.Scheme == "http" || u.Scheme == "https") {
					out = append(out, Link{URL: u, Rel: rel, Tag: "header"})
				}
			}
			if !more {
				break
			}
		}
	}
	return out
}

// linkScanner reads the link-values of one Link field value.
type linkScanner struct {
	s string
	i int
}

// next reads one link-value: its URI reference, its rel parameter
// (normalised), whether it was well-formed, and whether more follow.
func (p *linkScanner) next() (target, rel string, ok, more bool) {
	p.skip(func(c byte) bool { return c == ',' || isOWS(c) })
	if p.i >= len(p.s) {
		return "", "", false, false
	}
	if p.s[p.i] != '<' {
		return "", "", false, p.toComma()
	}
	end := strings.IndexByte(p.s[p.i+1:], '>')
	if end < 0 {
		return "", "", false, false
	}
	target = strings.TrimSpace(p.s[p.i+1 : p.i+1+end])
	p.i += end + 2
	relSeen := false
	for {
		p.skip(isOWS)
		if p.i >= len(p.s) {
			return target, rel, true, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			return target, rel, true, true
		case ';':
			p.i++
		default:
			// Junk after the URI or a parameter: the link-value is
			// malformed.
			return "", "", false, p.toComma()
		}
		p.skip(isOWS)
		start := p.i
		p.skip(isToken)
		name := p.s[start:p.i]
		p.skip(isOWS)
		var val string
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			p.skip(isOWS)
			if p.i < len(p.s) && p.s[p.i] == '"' {
				var closed bool
				if val, closed = p.quoted(); !closed {
					return "", "", false, false
				}
			} else {
				start := p.i
				p.skip(isToken)
				val = p.s[start:p.i]
			}
		}
		if name == "" {
			continue // a stray ";"
		}
		if strings.EqualFold(name, "rel") && !relSeen {
			relSeen = true
			rel = strings.Join(strings.Fields(strings.ToLower(val)), " ")
		}
	}
}

// quoted reads a quoted-string at p.i, unescaping quoted-pairs, and
// reports whether it was closed.
func (p *linkScanner) quoted() (string, bool) {
	p.i++ // the opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return b.String(), true
		case c == '\\' && p.i < len(p.s):
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

// toComma skips a malformed link-value: to the next comma outside a
// quoted string and outside <...>, and reports whether one was found.
func (p *linkScanner) toComma() bool {
	inQuote, inURI := false, false
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case inQuote && c == '\\':
			p.i++
		case c == '"' && !inURI:
			inQuote = !inQuote
		case c == '<' && !inQuote:
			inURI = true
		case c == '>' && !inQuote:
			inURI = false
		case c == ',' && !inQuote && !inURI:
			return true
		}
	}
	return false
}

func (p *linkScanner) skip(f func(byte) bool) {
	for p.i < len(p.s) && f(p.s[p.i]) {
		p.i++
	}
}

func isOWS(c byte) bool { return c == ' ' || c == '\t' }

// isToken reports whether c is a tchar of RFC 9110 §5.6.2 (or '*', which
// RFC 8187 extended parameters such as title* end with).
func isToken(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
