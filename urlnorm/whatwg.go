package urlnorm

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is the WHATWG URL Standard's basic URL parser
// (https://url.spec.whatwg.org/#concept-basic-url-parser) for the special
// schemes a crawler follows (http, https, ws, wss, ftp): what browsers do
// with an href. It writes the URL in the standard's serialization and hands
// it to net/url, which holds it; the few spellings net/url cannot hold (a
// "%" that starts no escape, some raw characters in a path or fragment) are
// percent-encoded on the way, which a server decodes to the same bytes.

// Percent-encode sets of the WHATWG URL Standard (§1.3), as bits.
const (
	encFragment = 1 << iota
	encQuery
	encSpecialQuery
	encPath
	encUserinfo
	// encNetPath and encNetFragment are the characters net/url cannot
	// hold raw in a path or a fragment (the standard leaves them raw):
	// one of them would make it re-encode the whole path or fragment,
	// "!" and "(" included.
	encNetPath
	encNetFragment
)

// encodeSet marks, per byte, the percent-encode sets it belongs to. Every
// set holds the C0 control percent-encode set: C0 controls and bytes above
// "~" (so every byte of a non-ASCII character).
var encodeSet = func() (t [256]uint8) {
	const all = encFragment | encQuery | encSpecialQuery | encPath | encUserinfo
	for c := 0; c < 256; c++ {
		if c < 0x20 || c > 0x7e {
			t[c] = all
		}
	}
	for _, c := range " \"<>" {
		t[c] = all
	}
	t['`'] |= encFragment | encPath | encUserinfo
	t['#'] |= encQuery | encSpecialQuery | encPath | encUserinfo
	t['\''] |= encSpecialQuery
	for _, c := range "?{}" {
		t[c] |= encPath | encUserinfo
	}
	for _, c := range "/:;=@[\\]^|" {
		t[c] |= encUserinfo
	}
	t['|'] |= encNetPath | encNetFragment
	t['^'] |= encNetPath | encNetFragment
	for _, c := range "#\\{}" {
		t[c] |= encNetFragment
	}
	return t
}()

// forbiddenDomain marks the forbidden domain code points (§3.2) in ASCII:
// the forbidden host code points, C0 controls, "%" and DEL.
var forbiddenDomain = func() (t [256]bool) {
	for c := 0; c <= 0x20; c++ {
		t[c] = true
	}
	for _, c := range "#/:<>?@[\\]^|%\x7f" {
		t[c] = true
	}
	return t
}()

// appendEncoded appends s with the bytes of set percent-encoded. A "%"
// that starts no escape becomes "%25" unless keepPercent (net/url rejects
// it everywhere but the query, which it keeps as written).
func appendEncoded(b []byte, s string, set uint8, keepPercent bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case encodeSet[c]&set != 0:
			b = append(b, '%', upperhex[c>>4], upperhex[c&15])
		case c == '%' && !keepPercent:
			if _, ok := escapeAt(s, i); ok {
				b = append(b, c)
			} else {
				b = append(b, "%25"...)
			}
		default:
			b = append(b, c)
		}
	}
	return b
}

// isSlash reports whether c separates path segments in a special URL.
func isSlash(c byte) bool { return c == '/' || c == '\\' }

// parseSpecial parses s (trimmed, without tabs and newlines) as the WHATWG
// URL parser does when the result has a special scheme: s has one, or has
// none and base has one (and a host). It returns the URL as net/url
// holds it.
func parseSpecial(s string, base *url.URL) (*url.URL, error) {
	sch, hasScheme := scheme(s)
	rest := s
	lsch := ""
	if hasScheme {
		lsch = strings.ToLower(sch)
		rest = s[len(sch)+1:]
	}
	// A scheme other than the base's starts an authority whatever the
	// slashes ("http:example.com", "http:///example.com"); the base's own
	// scheme, or none, makes a relative reference unless two slashes follow.
	relative := base != nil && base.Host != "" && (!hasScheme || equalFold(base.Scheme, lsch))
	if !hasScheme {
		lsch = strings.ToLower(base.Scheme)
	}
	b := make([]byte, 0, len(s)+len(lsch)+16)
	b = append(b, lsch...)
	b = append(b, "://"...)
	if relative && !(len(rest) >= 2 && isSlash(rest[0]) && isSlash(rest[1])) {
		return parseRelative(b, rest, base)
	}
	for rest != "" && isSlash(rest[0]) {
		rest = rest[1:]
	}
	end := len(rest)
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; isSlash(c) || c == '?' || c == '#' {
			end = i
			break
		}
	}
	var err error
	if b, err = appendAuthority(b, rest[:end], lsch); err != nil {
		return nil, err
	}
	rest = rest[end:]
	if rest != "" && isSlash(rest[0]) {
		rest = rest[1:]
	}
	return finishSpecial(appendPathSegments(b, len(b), rest))
}

// parseRelative resolves rest, a reference without an authority, against
// base (the WHATWG "relative state"); b holds the scheme and "://".
func parseRelative(b []byte, rest string, base *url.URL) (*url.URL, error) {
	if base.User != nil {
		b = append(b, base.User.String()...)
		b = append(b, '@')
	}
	b = append(b, base.Host...)
	pathStart := len(b)
	basePath := base.EscapedPath()
	if basePath == "" || basePath[0] != '/' {
		basePath = "/" + basePath
	}
	switch {
	case rest == "":
		b = append(b, basePath...)
		if base.RawQuery != "" || base.ForceQuery {
			b = append(b, '?')
			b = append(b, base.RawQuery...)
		}
		return finishSpecial(b, "")
	case isSlash(rest[0]):
		return finishSpecial(appendPathSegments(b, pathStart, rest[1:]))
	case rest[0] == '?':
		b = append(b, basePath...)
		return finishSpecial(b, rest)
	case rest[0] == '#':
		b = append(b, basePath...)
		if base.RawQuery != "" || base.ForceQuery {
			b = append(b, '?')
			b = append(b, base.RawQuery...)
		}
		return finishSpecial(b, rest)
	}
	// The base's path without its last segment, then rest's segments.
	b = append(b, basePath[:strings.LastIndexByte(basePath, '/')]...)
	return finishSpecial(appendPathSegments(b, pathStart, rest))
}

// appendPathSegments runs the WHATWG path state over rest, appending its
// segments to the path in b[pathStart:] (a list written as "/seg" each);
// "." and ".." segments (also spelled "%2e") are applied as they come,
// which keeps empty segments ("..//x" keeps "//x"). It returns b with the
// path written out ("/" at least) and what follows the path in rest.
func appendPathSegments(b []byte, pathStart int, rest string) ([]byte, string) {
	i := 0
	for {
		j := i
		for j < len(rest) && !isSlash(rest[j]) && rest[j] != '?' && rest[j] != '#' {
			j++
		}
		seg := rest[i:j]
		more := j < len(rest) && isSlash(rest[j])
		switch {
		case isDoubleDot(seg):
			if k := lastSlash(b, pathStart); k >= 0 {
				b = b[:k]
			}
			if !more {
				b = append(b, '/')
			}
		case isSingleDot(seg):
			if !more {
				b = append(b, '/')
			}
		default:
			b = append(b, '/')
			b = appendEncoded(b, seg, encPath|encNetPath, false)
		}
		if !more {
			return b, rest[j:]
		}
		i = j + 1
	}
}

func lastSlash(b []byte, from int) int {
	for k := len(b) - 1; k >= from; k-- {
		if b[k] == '/' {
			return k
		}
	}
	return -1
}

func isSingleDot(seg string) bool { return seg == "." || equalFold(seg, "%2e") }

func isDoubleDot(seg string) bool {
	switch len(seg) {
	case 2:
		return seg == ".."
	case 4:
		return equalFold(seg, ".%2e") || equalFold(seg, "%2e.")
	case 6:
		return equalFold(seg, "%2e%2e")
	}
	return false
}

// finishSpecial appends the query and fragment in rest (which starts with
// "?" or "#", or is empty) to b and parses the result with net/url.
func finishSpecial(b []byte, rest string) (*url.URL, error) {
	if rest != "" && rest[0] == '?' {
		q := rest[1:]
		rest = ""
		if h := strings.IndexByte(q, '#'); h >= 0 {
			q, rest = q[:h], q[h:]
		}
		b = append(b, '?')
		b = appendEncoded(b, q, encSpecialQuery, true)
	}
	if rest != "" {
		b = append(b, '#')
		b = appendEncoded(b, rest[1:], encFragment|encNetFragment, false)
	}
	return url.Parse(string(b))
}

// appendAuthority appends the userinfo, host and port of the authority
// auth of a URL with the special scheme lsch, as the WHATWG authority,
// host and port states parse and serialize them.
func appendAuthority(b []byte, auth, lsch string) ([]byte, error) {
	hostport := auth
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		user, pass, hasPass := strings.Cut(auth[:at], ":")
		hostport = auth[at+1:]
		if hostport == "" {
			return nil, ErrBadHost
		}
		if user != "" || pass != "" {
			b = appendEncoded(b, user, encUserinfo, false)
			if pass != "" && hasPass {
				b = append(b, ':')
				b = appendEncoded(b, pass, encUserinfo, false)
			}
			b = append(b, '@')
		}
	}
	host, port := hostport, ""
	inBrackets := false
	for i := 0; i < len(hostport); i++ {
		switch hostport[i] {
		case '[':
			inBrackets = true
		case ']':
			inBrackets = false
		case ':':
			if !inBrackets {
				host, port = hostport[:i], hostport[i+1:]
				i = len(hostport)
			}
		}
	}
	if host == "" {
		return nil, ErrBadHost
	}
	h, err := whatwgHost(host)
	if err != nil {
		return nil, err
	}
	b = append(b, h...)
	if port != "" {
		for i := 0; i < len(port); i++ {
			if port[i] < '0' || port[i] > '9' {
				return nil, ErrBadPort
			}
		}
		port = strings.TrimLeft(port, "0")
		if port == "" {
			port = "0"
		}
		if len(port) > 5 || len(port) == 5 && port > "65535" {
			return nil, ErrBadPort
		}
		if port != defaultPort(lsch) {
			b = append(b, ':')
			b = append(b, port...)
		}
	}
	return b, nil
}

// whatwgHost parses the host of a special URL (WHATWG host parser): an IPv6
// literal in brackets, or a domain, percent-decoded and converted to ASCII
// (UTS #46, as browsers do), then read as an IPv4 address if it ends in a
// number ("0x7f.1" is 127.0.0.1). It returns the serialized host.
func whatwgHost(host string) (string, error) {
	if host[0] == '[' {
		if len(host) < 2 || host[len(host)-1] != ']' {
			return "", ErrBadHost
		}
		return ipv6Host(host[1 : len(host)-1])
	}
	ascii := true
	for i := 0; i < len(host); i++ {
		if c := host[i]; c >= 0x80 || c == '%' {
			ascii = false
			break
		}
	}
	var d string
	if ascii && !hasACELabel(host) {
		// UTS #46 maps ASCII to lower case and keeps it: the forbidden
		// code points are checked below.
		d = strings.ToLower(host)
	} else {
		u, err := url.PathUnescape(host)
		if err != nil {
			u = percentDecodeLenient(host)
		}
		if !utf8.ValidString(u) {
			return "", ErrBadHost // U+FFFD after UTF-8 decoding, which IDNA rejects
		}
		if d, err = idnaProfile.ToASCII(u); err != nil || d == "" {
			return "", ErrBadHost
		}
	}
	for i := 0; i < len(d); i++ {
		if forbiddenDomain[d[i]] || d[i] >= 0x80 {
			return "", ErrBadHost
		}
	}
	if endsInNumber(d) {
		return ipv4Host(d)
	}
	return d, nil
}

// hasACELabel reports whether a label of the ASCII host starts with "xn--",
// which IDNA must decode and check.
func hasACELabel(host string) bool {
	for len(host) >= 4 {
		if equalFold(host[:4], "xn--") {
			return true
		}
		i := strings.IndexByte(host, '.')
		if i < 0 {
			return false
		}
		host = host[i+1:]
	}
	return false
}

// percentDecodeLenient decodes the escapes of s that are well formed and
// keeps the rest, as the WHATWG percent-decode does.
func percentDecodeLenient(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if v, ok := escapeAt(s, i); s[i] == '%' && ok {
			b = append(b, v)
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// endsInNumber is the WHATWG "ends in a number" checker: the last label
// (a trailing dot aside) is decimal digits or "0x" and hex digits.
func endsInNumber(d string) bool {
	d = strings.TrimSuffix(d, ".")
	last := d[strings.LastIndexByte(d, '.')+1:]
	if last == "" {
		return false
	}
	digits := true
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		return true
	}
	if len(last) < 2 || last[0] != '0' || last[1]|0x20 != 'x' {
		return false
	}
	for i := 2; i < len(last); i++ {
		if _, ok := unhex(last[i]); !ok {
			return false
		}
	}
	return true
}

// ipv4Host parses d as the WHATWG IPv4 parser does: up to four parts,
// each decimal, octal ("0" prefix) or hex ("0x" prefix), the last filling
// the remaining bytes. It returns the dotted-decimal form.
func ipv4Host(d string) (string, error) {
	parts := strings.Split(d, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return "", ErrBadHost
	}
	var addr uint64
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return "", ErrBadHost
		}
		if i < len(parts)-1 {
			if n > 255 {
				return "", ErrBadHost
			}
			addr |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return "", ErrBadHost
		}
		addr += n
	}
	a := netip.AddrFrom4([4]byte{byte(addr >> 24), byte(addr >> 16), byte(addr >> 8), byte(addr)})
	return a.String(), nil
}

// ipv4Number parses one part of an IPv4 address; values beyond 2^32 are
// reported as 2^32, which every caller rejects.
func ipv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && p[1]|0x20 == 'x':
		base, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	var n uint64
	for i := 0; i < len(p); i++ {
		v, ok := unhex(p[i])
		if !ok || uint64(v) >= base {
			return 0, false
		}
		n = min(n*base+uint64(v), 1<<32)
	}
	return n, true
}

// ipv6Host parses an IPv6 literal (without brackets) and writes it as the
// WHATWG serializer does: lower-case hex pieces, the first longest run of
// two or more zero pieces compressed to "::", no embedded IPv4 form.
func ipv6Host(lit string) (string, error) {
	if strings.IndexByte(lit, '%') >= 0 {
		return "", ErrBadHost // no zone identifiers
	}
	a, err := netip.ParseAddr(lit)
	if err != nil || !a.Is6() {
		return "", ErrBadHost
	}
	raw := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(raw[2*i])<<8 | uint16(raw[2*i+1])
	}
	start, length := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > length {
			start, length = i, j-i
		}
		i = j
	}
	b := make([]byte, 0, 41)
	b = append(b, '[')
	for i := 0; i < 8; i++ {
		if i == start {
			b = append(b, "::"...)
			i += length - 1
			continue
		}
		if i > 0 && b[len(b)-1] != ':' {
			b = append(b, ':')
		}
		b = strconv.AppendUint(b, uint64(pieces[i]), 16)
	}
	return string(append(b, ']')), nil
}
