package urlnorm

// Byte classes of RFC 3986 §2, as 256-entry tables so the hot loops of
// Canonical cost one load per byte.

const (
	clsUnreserved = 1 << iota // ALPHA / DIGIT / "-" / "." / "_" / "~"
	clsReserved               // gen-delims / sub-delims
	clsEscape                 // not allowed anywhere in a URI: percent-encode
	clsHost                   // allowed in a reg-name host (besides pct-encoded)
)

// class is initialized by a function, not init, so that package-level
// tables built from it (fastChar) see it filled in.
var class = func() (class [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~':
			class[c] = clsUnreserved | clsHost
		case c == ':', c == '/', c == '?', c == '#', c == '[', c == ']', c == '@':
			class[c] = clsReserved
		case c == '!', c == '$', c == '&', c == '\'', c == '(', c == ')',
			c == '*', c == '+', c == ',', c == ';', c == '=':
			class[c] = clsReserved | clsHost
		case c == '%':
		default:
			class[c] = clsEscape
		}
	}
	return class
}()

const upperhex = "0123456789ABCDEF"

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

// escapeAt reports whether s[i] starts a well-formed escape %XX and returns
// the decoded byte.
func escapeAt(s string, i int) (byte, bool) {
	if i+2 >= len(s) {
		return 0, false
	}
	h, ok1 := unhex(s[i+1])
	l, ok2 := unhex(s[i+2])
	return h<<4 | l, ok1 && ok2
}

// scheme returns the scheme of s (without the colon) if s starts with one.
func scheme(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9', c == '+', c == '-', c == '.':
			if i == 0 {
				return "", false
			}
		case c == ':':
			return s[:i], i > 0
		default:
			return "", false
		}
	}
	return "", false
}

// special reports whether scheme is one of those for which browsers treat a
// backslash as a slash and require a host (WHATWG URL "special schemes",
// without file).
func special(scheme string) bool {
	return equalFold(scheme, "http") || equalFold(scheme, "https") ||
		equalFold(scheme, "ws") || equalFold(scheme, "wss") || equalFold(scheme, "ftp")
}

// defaultPort returns the default port of a lowercase scheme, or "".
func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	case "ftp":
		return "21"
	}
	return ""
}

// equalFold is ASCII-only strings.EqualFold.
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
