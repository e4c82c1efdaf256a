package urlnorm

import (
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// idnaProfile converts internationalized host names the way browsers do
// (UTS #46 non-transitional lookup) but, like browsers, allows the
// underscores and other ASCII that STD3 rules reject in real host names.
// It is immutable and safe for concurrent use.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false), // WHATWG: "-x.example" and "x-.example" are hosts
	idna.BidiRule(),
)

// Resolve resolves the reference ref, as found in an href, against base
// the way browsers do, and returns the absolute URL. The fragment of the
// result is the fragment of ref.
//
// When the result has a special scheme (http, https, ws, wss, ftp: ref has
// one, or has none and base has one), Resolve follows the WHATWG URL
// Standard's parser, which agrees with RFC 3986 §5.2 on ordinary links and
// adds the leniency browsers apply to real pages: leading and trailing C0
// controls and spaces are trimmed and tabs and newlines anywhere removed;
// backslashes before the query are slashes; any number of slashes may
// follow the scheme ("http:///www.example.com/x" is host www.example.com);
// "http:x" relative to an http base is a relative reference; "." and ".."
// segments, also written "%2e", are removed but empty segments are kept
// ("..//index.html" on /105/index.html is //index.html); the host is
// lower-cased, percent-decoded, converted to punycode (IDNA UTS #46) and,
// if it ends in a number, read as an IPv4 address ("0x7f.1" is 127.0.0.1);
// IPv6 literals are written in their compressed form; a default port is
// dropped; spaces, controls, non-ASCII bytes and the other characters
// browsers encode are percent-encoded (in a query also "'", as %27). Where
// net/url cannot hold the browser's spelling ("%" that starts no escape,
// "|" or "^" in a path, "#" and a few others in a fragment), it is
// percent-encoded: the server decodes both spellings to the same bytes.
// testdata/README.md lists the WHATWG test cases followed and not.
//
// Other schemes are resolved by RFC 3986 §5.2 with the same trimming and
// escaping. Resolve does not canonicalize beyond that: use Canonical for
// the duplicate-detection key. Keeping only http and https is the URL
// filter's job.
//
// base must be absolute; it may be nil, in which case ref must be absolute.
// Resolve does not modify base. It is safe for concurrent use; the common
// hrefs (relative paths, plain absolute http URLs) cost one allocation, the
// result, and any other one copy of ref and one url.Parse.
func Resolve(base *url.URL, ref string) (*url.URL, error) {
	return resolve(base, ref, true)
}

// resolve is Resolve; without shortcuts it always takes the general path
// (clean, url.Parse, url.ResolveReference), which FuzzResolve compares the
// shortcuts with.
func resolve(base *url.URL, ref string, shortcuts bool) (*url.URL, error) {
	if shortcuts {
		if u, ok := fastResolve(base, ref); ok {
			return u, nil
		}
	}
	if t, ok := specialTarget(ref, base); ok {
		u, err := parseSpecial(t, base)
		if err != nil {
			return nil, &Error{Op: "resolve", URL: ref, Err: err}
		}
		return u, nil
	}
	baseScheme := ""
	if base != nil {
		baseScheme = base.Scheme
	}
	s, err := clean(ref, baseScheme)
	if err != nil {
		return nil, &Error{Op: "resolve", URL: ref, Err: err}
	}
	r, err := url.Parse(s)
	if err != nil {
		return nil, &Error{Op: "resolve", URL: ref, Err: err}
	}
	if base == nil {
		if r.Scheme == "" {
			return nil, &Error{Op: "resolve", URL: ref, Err: ErrNoScheme}
		}
		return r, nil
	}
	if !base.IsAbs() {
		return nil, &Error{Op: "resolve", URL: ref, Err: ErrNoScheme}
	}
	var t *url.URL
	if shortcuts && r.Scheme != "" && r.Opaque == "" && r.RawPath == "" &&
		(r.Path == "" || r.Path[0] == '/' && !hasDotSegment(r.Path)) {
		t = r // an absolute reference without dot segments is its own target
	} else {
		t = base.ResolveReference(r)
	}
	if !validHostPort(t.Host) {
		// net/url accepts "//::" in a relative reference but not in the
		// absolute URL it resolves to.
		return nil, &Error{Op: "resolve", URL: ref, Err: ErrBadPort}
	}
	if t.Host == "" && strings.HasPrefix(t.Path, "//") {
		// "//" would start an authority when the URL is written out
		// (RFC 3986 §5.3); "/." keeps the path as it is.
		t.Path = "/." + t.Path
		if t.RawPath != "" {
			t.RawPath = "/." + t.RawPath
		}
	}
	// RFC 3986 §5.2.2: the target's fragment is always the reference's.
	// net/url keeps the base's fragment for an empty reference.
	t.Fragment, t.RawFragment = r.Fragment, r.RawFragment
	return t, nil
}

// specialTarget returns ref trimmed of C0 controls and spaces, tabs and
// newlines removed, and reports whether the URL it denotes has a special
// scheme, for parseSpecial: ref has one, or has none and base is a
// hierarchical URL with one.
func specialTarget(ref string, base *url.URL) (string, bool) {
	s := trimControl(ref)
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	if sch, ok := scheme(s); ok {
		return s, special(sch)
	}
	return s, base != nil && base.Host != "" && base.Opaque == "" && special(base.Scheme)
}

// fastChar marks the bytes for which a relative reference needs neither
// cleaning nor escaping and net/url keeps it as written: unreserved
// characters and the delimiters "/?#&=;:,+@$".
var fastChar = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = class[c]&clsUnreserved != 0
	}
	for _, c := range "/?#&=;:,+@$" {
		t[c] = true
	}
	return t
}()

// fastFragChar reports whether c, not a fastChar, may be in the fragment
// of a reference the shortcuts take: net/url keeps "!()*" there as
// written (javadoc anchors are "#method(java.lang.String)").
func fastFragChar(c byte) bool { return c == '!' || c == '(' || c == ')' || c == '*' }

// fastResolve resolves the common hrefs (a relative path, maybe with query
// and fragment, made of fastChar bytes and without dot segments but leading
// "./" and "../", against a plain hierarchical base) with one allocation, the result. It reports false
// when the general path must be taken; for the references it accepts its
// result equals that of url.ResolveReference (checked by FuzzResolve).
func fastResolve(base *url.URL, ref string) (*url.URL, bool) {
	if (base == nil || base.IsAbs()) && (strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://")) {
		return fastAbsolute(ref)
	}
	if base == nil || ref == "" || base.Scheme == "" || base.Opaque != "" || base.RawPath != "" || base.Host == "" || base.User != nil ||
		ref[0] == '?' || ref[0] == '#' || strings.HasPrefix(ref, "//") || !validHostPort(base.Host) {
		return nil, false
	}
	hash := false
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if !fastChar[c] && !(hash && fastFragChar(c)) || (c == '#' && hash) {
			return nil, false
		}
		hash = hash || c == '#'
	}
	if end := strings.IndexAny(ref, "/?#"); strings.IndexByte(ref[:max(end, 0)], ':') >= 0 ||
		(end < 0 && strings.IndexByte(ref, ':') >= 0) {
		return nil, false // a scheme, or a colon in the first segment
	}
	path, frag, _ := strings.Cut(ref, "#")
	path, query, hasQuery := strings.Cut(path, "?")
	if path == "" {
		return nil, false
	}
	if strings.Contains(base.Path, "/.") {
		return nil, false
	}
	if path[0] != '/' {
		dir := base.Path[:strings.LastIndexByte(base.Path, '/')+1]
		if dir == "" {
			dir = "/"
		}
		// Leading "./" and "../" (the usual relative links) move within
		// the base's directories, as RFC 3986 §5.2.4 would.
		for {
			if rest, ok := strings.CutPrefix(path, "../"); ok {
				path = rest
				if len(dir) > 1 {
					dir = dir[:strings.LastIndexByte(dir[:len(dir)-1], '/')+1]
				}
			} else if rest, ok := strings.CutPrefix(path, "./"); ok {
				path = rest
			} else {
				break
			}
		}
		if hasDotSegment(path) || strings.HasPrefix(path, "/") {
			return nil, false // net/url and RFC 3986 disagree on "..//"; take net/url's way
		}
		path = dir + path
	} else if hasDotSegment(path) {
		return nil, false
	}
	u := &url.URL{
		Scheme:     base.Scheme,
		User:       base.User,
		Host:       base.Host,
		Path:       path,
		RawQuery:   query,
		ForceQuery: hasQuery && query == "",
		Fragment:   frag,
	}
	return u, true
}

// fastAbsolute parses the common absolute hrefs, "http://" or "https://"
// and a lowercase host name (with a port maybe, not the default one)
// followed by fastChar bytes without dot segments, with one allocation. It reports false when the
// general path must be taken; what it accepts, it parses as the general
// path does (checked by FuzzResolve).
func fastAbsolute(ref string) (*url.URL, bool) {
	scheme, rest, _ := strings.Cut(ref, "://")
	i := 0
	for i < len(rest) && hostChar[rest[i]] {
		i++
	}
	host := rest[:i]
	if host == "" || host[0] == '.' || host[0] == '-' || endsInNumber(host) || strings.Contains(host, "xn--") {
		return nil, false // IPv4 forms and punycode need the host parser
	}
	if i < len(rest) && rest[i] == ':' {
		j := i + 1
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		if p := rest[i+1 : j]; p == "" || p[0] == '0' || len(p) > 5 || len(p) == 5 && p > "65535" || p == defaultPort(scheme) {
			return nil, false // the host parser drops or normalizes it
		}
		host, i = rest[:j], j
	}
	rest = rest[i:]
	if rest != "" && rest[0] != '/' && rest[0] != '?' && rest[0] != '#' {
		return nil, false // userinfo, an IPv6 literal, a bad port, ...
	}
	hash := false
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !fastChar[c] && !(hash && fastFragChar(c)) || (c == '#' && hash) {
			return nil, false
		}
		hash = hash || c == '#'
	}
	path, frag, _ := strings.Cut(rest, "#")
	path, query, hasQuery := strings.Cut(path, "?")
	if hasDotSegment(path) {
		return nil, false
	}
	if path == "" {
		path = "/" // a special URL's path is never empty
	}
	return &url.URL{Scheme: scheme, Host: host, Path: path, RawQuery: query, ForceQuery: hasQuery && query == "", Fragment: frag}, true
}

// hostChar marks the bytes fastAbsolute accepts in a host name: lowercase
// letters, digits, '-' and '.' (an uppercase host is left to the general
// path, which keeps its case as url.Parse does).
var hostChar = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t['-'], t['.'] = true, true
	return t
}()

// validHostPort reports whether the port of host, if any, is a decimal
// number and the host name holds no colon outside brackets.
func validHostPort(host string) bool {
	if strings.HasPrefix(host, "[") {
		end := strings.LastIndexByte(host, ']')
		if end < 0 {
			return false
		}
		host = "x" + host[end+1:]
	}
	i := strings.IndexByte(host, ':')
	if i < 0 {
		return true
	}
	for _, c := range []byte(host[i+1:]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// hasDotSegment reports whether path has a "." or ".." segment.
func hasDotSegment(path string) bool {
	for path != "" {
		seg := path
		if i := strings.IndexByte(path, '/'); i >= 0 {
			seg, path = path[:i], path[i+1:]
		} else {
			path = ""
		}
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// clean applies browser leniency to ref so that url.Parse accepts what
// browsers accept; baseScheme decides the backslash rule for a reference
// without a scheme.
func clean(ref, baseScheme string) (string, error) {
	if plain(ref) {
		return ref, nil
	}
	s := trimControl(ref)
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	sch, hasScheme := scheme(s)
	isSpecial := special(baseScheme)
	p := 0
	if hasScheme {
		isSpecial = special(sch)
		p = len(sch) + 1
	}
	if isSpecial {
		end := strings.IndexAny(s, "?#")
		if end < 0 {
			end = len(s)
		}
		if strings.IndexByte(s[:end], '\\') >= 0 {
			s = strings.ReplaceAll(s[:end], "\\", "/") + s[end:]
		}
	}

	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:p])
	rest := s[p:]
	if strings.HasPrefix(rest, "//") {
		b.WriteString("//")
		rest = rest[2:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		rest = rest[end:]
		hostport := auth
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			escapeInto(&b, auth[:at+1], false)
			hostport = auth[at+1:]
		}
		host, port := hostport, ""
		if !strings.HasPrefix(hostport, "[") {
			if c := strings.LastIndexByte(hostport, ':'); c >= 0 {
				host, port = hostport[:c], hostport[c:]
			}
			if h, err := asciiHost(host); err != nil {
				return "", err
			} else {
				host = h
			}
		}
		b.WriteString(host)
		b.WriteString(port)
	}
	escapeInto(&b, rest, true)
	return b.String(), nil
}

// plain reports whether ref needs no cleaning at all: no byte to trim,
// remove, escape or convert, no backslash, no "#" after the fragment's,
// no stray "%". Most hrefs are plain, and skip the copy.
func plain(ref string) bool {
	if ref == "" || ref[0] <= ' ' || ref[len(ref)-1] <= ' ' {
		return ref == ""
	}
	// An escape in the host must become punycode.
	auth := ref
	if sch, ok := scheme(ref); ok {
		auth = ref[len(sch)+1:]
	}
	if strings.HasPrefix(auth, "//") {
		auth = auth[2:]
		if end := strings.IndexAny(auth, "/?#"); end >= 0 {
			auth = auth[:end]
		}
		if strings.IndexByte(auth, '%') >= 0 {
			return false
		}
	}
	hash := false
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		switch {
		case c == '%':
			if _, ok := escapeAt(ref, i); !ok {
				return false
			}
		case c == '#':
			if hash {
				return false
			}
			hash = true
		case c == '\\' || class[c]&clsEscape != 0:
			return false
		}
	}
	return true
}

// escapeInto writes s percent-encoding what RFC 3986 does not allow, a "%"
// that starts no escape, and (if frag) every "#" after the first.
func escapeInto(b *strings.Builder, s string, frag bool) {
	seenHash := !frag
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if _, ok := escapeAt(s, i); ok {
				b.WriteByte(c)
			} else {
				b.WriteString("%25")
			}
		case c == '#':
			if seenHash {
				b.WriteString("%23")
			} else {
				seenHash = true
				b.WriteByte(c)
			}
		case class[c]&clsEscape != 0:
			b.WriteByte('%')
			b.WriteByte(upperhex[c>>4])
			b.WriteByte(upperhex[c&15])
		default:
			b.WriteByte(c)
		}
	}
}

// asciiHost returns a reg-name host with non-ASCII or percent-encoded bytes
// converted to punycode; ASCII hosts are returned unchanged.
func asciiHost(host string) (string, error) {
	ascii := true
	for i := 0; i < len(host); i++ {
		if c := host[i]; c >= 0x80 || c == '%' {
			ascii = false
			break
		}
	}
	if ascii {
		return host, nil
	}
	h, err := url.PathUnescape(host)
	if err != nil {
		return "", ErrBadHost
	}
	h, err = idnaProfile.ToASCII(h)
	if err != nil || h == "" {
		return "", ErrBadHost
	}
	return h, nil
}

// trimControl trims C0 controls and spaces from both ends, as the WHATWG
// URL parser does.
func trimControl(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}
