package urlnorm

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
	"unsafe"
)

// Canonicalizer computes canonical URLs, the key of duplicate-URL
// elimination (book §20.2.1, RFC 3986 §6.2.2 and §6.2.3). The zero value
// applies exactly the rules of Canonical; the fields enable rewrites that are
// not safe for every site and are therefore off by default.
//
// A Canonicalizer is safe for concurrent use as long as its fields are not
// modified.
type Canonicalizer struct {
	// SortQuery sorts the query parameters by name (stable, so repeated
	// names keep their order) and drops empty parameters ("a=1&&b=2").
	// Default false: the order of parameters can matter to the server.
	SortQuery bool

	// StripParams names query parameters to remove, compared without
	// regard to ASCII case; a name ending in "*" is a prefix ("utm_*").
	// A query left empty is dropped with its "?". Default none; see
	// TrackingParams for a common list.
	StripParams []string

	// FoldWWW removes leading "www." labels from the host as long as the
	// rest still contains a dot, so www.example.com and example.com share a
	// key. Default false: the two are different hosts in DNS.
	FoldWWW bool
}

// TrackingParams returns a new slice of the session and tracking parameters
// commonly stripped with Canonicalizer.StripParams.
func TrackingParams() []string {
	return []string{
		"utm_*", "gclid", "fbclid", "msclkid", "mc_cid", "mc_eid", "_ga",
		"jsessionid", "phpsessid", "sessionid", "sid", "aspsessionid",
	}
}

// Canonical returns the canonical form of the absolute URL raw with the
// default rules:
//
//   - scheme and host are lowercased, trailing dots of the host dropped, an
//     internationalized host converted to punycode;
//   - a default port (http 80, https 443, ws 80, wss 443, ftp 21) and an
//     empty port are dropped;
//   - percent-escapes get uppercase hex, escapes of unreserved characters
//     (ALPHA DIGIT - . _ ~) are decoded, escapes of reserved characters are
//     kept, characters RFC 3986 does not allow and a stray "%" are
//     percent-encoded, and so is "'" in the query of an http, https, ws,
//     wss or ftp URL, as browsers send it (%27);
//   - a special scheme (http, https, ws, wss, ftp) is followed by a host
//     whatever the slashes after it, as browsers read it: "http:///x" and
//     "http:x" are http://x/;
//   - dot segments are removed (RFC 3986 §5.2.4) and an empty path with a
//     host becomes "/";
//   - the fragment is dropped.
//
// Nothing else changes: https is never rewritten to http, the query keeps its
// order. Canonical is idempotent. It needs an absolute URL (resolve links
// with Resolve first); http, https, ws, wss and ftp URLs need a host.
//
// Canonical is safe for concurrent use; it makes one allocation (the result)
// for an ASCII URL and runs in O(len(raw)).
func Canonical(raw string) (string, error) {
	var c Canonicalizer
	return c.Canonical(raw)
}

// Canonical returns the canonical form of raw: the rules of the package-level
// Canonical plus the rewrites enabled in c.
func (c *Canonicalizer) Canonical(raw string) (string, error) {
	s, err := c.canonical(raw)
	if err != nil {
		return "", &Error{Op: "canonical", URL: raw, Err: err}
	}
	return s, nil
}

func (c *Canonicalizer) canonical(raw string) (string, error) {
	s := trimControl(raw)
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}
	sch, ok := scheme(s)
	if !ok {
		if strings.IndexByte(s, ':') > 0 {
			return "", ErrBadScheme
		}
		return "", ErrNoScheme
	}
	lsch := sch
	for i := 0; i < len(sch); i++ {
		if 'A' <= sch[i] && sch[i] <= 'Z' {
			lsch = strings.ToLower(sch)
			break
		}
	}
	sp := special(lsch)
	isSep := func(c byte) bool { return c == '/' || (sp && c == '\\') }

	buf := make([]byte, 0, len(s)+8)
	buf = append(buf, lsch...)
	buf = append(buf, ':')
	rest := s[len(sch)+1:]

	// A special scheme is followed by an authority whatever the slashes
	// ("http:///x" and "http:x" are host x, as browsers read them).
	hasAuth := sp || len(rest) >= 2 && isSep(rest[0]) && isSep(rest[1])
	if hasAuth {
		if sp {
			for rest != "" && isSep(rest[0]) {
				rest = rest[1:]
			}
		} else {
			rest = rest[2:]
		}
		end := len(rest)
		for i := 0; i < len(rest); i++ {
			if c := rest[i]; c == '?' || c == '#' || isSep(c) {
				end = i
				break
			}
		}
		buf = append(buf, '/', '/')
		var err error
		buf, err = c.appendAuthority(buf, rest[:end], lsch, sp)
		if err != nil {
			return "", err
		}
		rest = rest[end:]
	}

	pathEnd := strings.IndexAny(rest, "?#")
	if pathEnd < 0 {
		pathEnd = len(rest)
	}
	path := rest[:pathEnd]
	switch {
	case path == "" && hasAuth:
		buf = append(buf, '/')
	case path != "" && isSep(path[0]):
		pathStart := len(buf)
		buf = appendPath(buf, path, isSep)
		if !hasAuth && len(buf)-pathStart >= 2 && buf[pathStart+1] == '/' {
			// "//" would start an authority (RFC 3986 §5.3).
			buf = slices.Insert(buf, pathStart, '/', '.')
		}
	default:
		buf = appendNorm(buf, path)
	}

	rest = rest[pathEnd:]
	if rest != "" && rest[0] == '?' {
		q := rest[1:]
		if h := strings.IndexByte(q, '#'); h >= 0 {
			q = q[:h]
		}
		if c.SortQuery || len(c.StripParams) > 0 {
			buf = c.appendParams(buf, q, sp)
		} else {
			buf = append(buf, '?')
			buf = appendQuery(buf, q, sp)
		}
	}
	// buf is never written again: share its bytes instead of copying them.
	return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
}

// appendAuthority appends the canonical userinfo, host and port of auth.
func (c *Canonicalizer) appendAuthority(buf []byte, auth, lsch string, sp bool) ([]byte, error) {
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		// RFC 3986 §3.2.1: userinfo allows no gen-delims but ":".
		ui := auth[:at]
		for {
			i := strings.IndexAny(ui, "@[]")
			if i < 0 {
				buf = appendNorm(buf, ui)
				break
			}
			buf = appendNorm(buf, ui[:i])
			buf = append(buf, '%', upperhex[ui[i]>>4], upperhex[ui[i]&15])
			ui = ui[i+1:]
		}
		buf = append(buf, '@')
		auth = auth[at+1:]
	}
	host, port := auth, ""
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return nil, ErrBadHost
		}
		host, port = auth[:end+1], auth[end+1:]
		if port != "" && port[0] != ':' {
			return nil, ErrBadHost
		}
		lit := host[1:end]
		if z := strings.Index(lit, "%25"); z >= 0 {
			lit = lit[:z] // RFC 6874 zone identifier
		}
		// A zone is written %25 (RFC 6874); netip takes "%0" too.
		if a, err := netip.ParseAddr(lit); err != nil || !a.Is6() || strings.IndexByte(lit, '%') >= 0 {
			return nil, ErrBadHost
		}
		for i := 0; i < len(host); i++ {
			buf = append(buf, lower(host[i]))
		}
	} else {
		if i := strings.LastIndexByte(auth, ':'); i >= 0 {
			host, port = auth[:i], auth[i:]
		}
		plain := true
		for i := 0; i < len(host); i++ {
			if class[host[i]]&clsHost == 0 {
				plain = false
				break
			}
		}
		if !plain {
			h, err := asciiHost(host)
			if err != nil {
				return nil, err
			}
			for i := 0; i < len(h); i++ {
				if class[h[i]]&clsHost == 0 {
					return nil, ErrBadHost
				}
			}
			host = h
		}
		host = strings.TrimRight(host, ".")
		if c.FoldWWW {
			for len(host) > 4 && equalFold(host[:4], "www.") && strings.IndexByte(host[4:], '.') >= 0 {
				host = host[4:]
			}
		}
		if host == "" && sp {
			return nil, ErrBadHost
		}
		for i := 0; i < len(host); i++ {
			buf = append(buf, lower(host[i]))
		}
	}
	if len(port) > 1 {
		p := port[1:]
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return nil, ErrBadPort
			}
		}
		p = strings.TrimLeft(p, "0")
		if len(p) > 5 || (len(p) == 5 && p > "65535") {
			return nil, ErrBadPort
		}
		if p == "" {
			p = "0"
		}
		if p != defaultPort(lsch) {
			buf = append(buf, ':')
			buf = append(buf, p...)
		}
	}
	return buf, nil
}

// appendPath appends the normalized absolute path with dot segments removed
// (RFC 3986 §5.2.4) in one pass: each segment is normalized into buf first,
// so "%2E%2E" counts as "..", then dropped if it is a dot segment.
func appendPath(buf []byte, path string, isSep func(byte) bool) []byte {
	pathStart := len(buf)
	i := 1
	for {
		j := i
		for j < len(path) && !isSep(path[j]) {
			j++
		}
		last := j >= len(path)
		buf = append(buf, '/')
		segStart := len(buf)
		buf = appendNorm(buf, path[i:j])
		seg := buf[segStart:]
		switch {
		case len(seg) == 1 && seg[0] == '.':
			buf = buf[:segStart-1]
			if last {
				buf = append(buf, '/')
			}
		case len(seg) == 2 && seg[0] == '.' && seg[1] == '.':
			buf = buf[:segStart-1]
			k := pathStart
			for n := len(buf) - 1; n >= pathStart; n-- {
				if buf[n] == '/' {
					k = n
					break
				}
			}
			buf = buf[:k]
			if last {
				buf = append(buf, '/')
			}
		}
		if last {
			return buf
		}
		i = j + 1
	}
}

// appendNorm appends s with percent-escapes normalized: unreserved
// characters decoded, other escapes in uppercase hex, disallowed bytes and
// stray "%" encoded.
func appendNorm(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if v, ok := escapeAt(s, i); ok {
				if class[v]&clsUnreserved != 0 {
					buf = append(buf, v)
				} else {
					buf = append(buf, '%', upperhex[v>>4], upperhex[v&15])
				}
				i += 2
			} else {
				buf = append(buf, '%', '2', '5')
			}
		case class[c]&clsEscape != 0:
			buf = append(buf, '%', upperhex[c>>4], upperhex[c&15])
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

// appendQuery appends the query q normalized as appendNorm does and, if
// special (the URL's scheme is), with "'" percent-encoded: browsers send
// it as %27 in the query of such URLs (the WHATWG special-query
// percent-encode set), so "?q='x'" and "?q=%27x%27" are one request. The
// rest of that set (controls, space, '"', '#', '<', '>', non-ASCII) is
// encoded by appendNorm already.
func appendQuery(buf []byte, q string, special bool) []byte {
	if !special || strings.IndexByte(q, '\'') < 0 {
		return appendNorm(buf, q)
	}
	for {
		i := strings.IndexByte(q, '\'')
		if i < 0 {
			return appendNorm(buf, q)
		}
		buf = appendNorm(buf, q[:i])
		buf = append(buf, "%27"...)
		q = q[i+1:]
	}
}

// appendParams appends the query q filtered and sorted as c says, with its
// "?" unless nothing is left; special is appendQuery's.
func (c *Canonicalizer) appendParams(buf []byte, q string, special bool) []byte {
	type param struct{ name, all string }
	params := make([]param, 0, 8)
	for more := true; more; {
		var p string
		p, q, more = strings.Cut(q, "&")
		norm := string(appendQuery(nil, p, special))
		name, _, _ := strings.Cut(norm, "=")
		if (norm == "" && c.SortQuery) || c.strip(name) {
			continue
		}
		params = append(params, param{name, norm})
	}
	if len(params) == 0 {
		return buf
	}
	if c.SortQuery {
		slices.SortStableFunc(params, func(a, b param) int { return cmp.Compare(a.name, b.name) })
	}
	buf = append(buf, '?')
	for i, p := range params {
		if i > 0 {
			buf = append(buf, '&')
		}
		buf = append(buf, p.all...)
	}
	return buf
}

func (c *Canonicalizer) strip(name string) bool {
	for _, s := range c.StripParams {
		if prefix, ok := strings.CutSuffix(s, "*"); ok {
			if len(name) >= len(prefix) && equalFold(name[:len(prefix)], prefix) {
				return true
			}
		} else if equalFold(name, s) {
			return true
		}
	}
	return false
}
