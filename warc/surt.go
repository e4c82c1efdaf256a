package warc

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ErrSURT is wrapped by the error SURT returns for a URL it cannot key:
// one that does not parse, or has no host.
var ErrSURT = errors.New("warc: URL cannot be SURT-keyed")

// SURT returns the sort key of rawURL in a CDXJ index: the URL
// canonicalised and written host-reversed ("Sort-friendly URI Reordering
// Transform"), the key pywb and OpenWayback look captures up by, as the
// Python surt package's default makes it:
//
//	http://www.Example.com:80/A/b/?z=1&a=2#top → com,example)/a/b?a=2&z=1
//
// The scheme, user information, fragment, a "www" label (www, www2, ...)
// in front of the host and the scheme's default port are dropped; the host
// is lower-cased and its labels reversed, joined by commas (an IPv4
// address too); path and query are lower-cased, the path's dot segments
// resolved and a trailing slash removed (but for the root), the query's
// session identifiers (jsessionid, phpsessid, sid, ASPSESSIONID,
// cfid&cftoken) removed and its arguments sorted; a port that is not the
// default stays, after the host ("org,archive:8080)/").
//
// The key matches the surt package's for URLs whose percent-encoding is
// already minimal and whose host is in ASCII, as crawlkit's canonical
// URLs (urlnorm) are. The surt package also decodes and re-encodes percent
// escapes and turns numeric hosts into dotted quads; SURT leaves both as
// they are, so such URLs may key differently in pywb than here (a lookup
// through Index uses SURT on both sides and is not affected). Bytes that
// are controls, spaces or not ASCII are percent-encoded, so a key holds no
// byte at or below the space: sorting whole CDXJ lines as bytes sorts
// them by key, then timestamp. Safe for concurrent use; one url.Parse.
func SURT(rawURL string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrSURT, err)
	}
	host := strings.Trim(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", fmt.Errorf("%w: %q has no host", ErrSURT, rawURL)
	}
	if m := wwwLabel.FindString(host); m != "" && len(m) < len(host) {
		host = host[len(m):]
	}
	port := u.Port()
	if port == defaultPort(strings.ToLower(u.Scheme)) {
		port = ""
	}
	var b strings.Builder
	labels := strings.Split(host, ".")
	slices.Reverse(labels)
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		writeKeyBytes(&b, l)
	}
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	b.WriteByte(')')

	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	p = strings.ToLower(p)
	if strings.Contains(p, "/.") || strings.Contains(p, "//") {
		// path.Clean also collapses "//", as the surt package does.
		trailing := strings.HasSuffix(p, "/")
		p = path.Clean(p)
		if trailing && p != "/" {
			p += "/"
		}
	}
	p = stripPathSession(p)
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	writeKeyBytes(&b, p)
	if q := u.RawQuery; q != "" {
		q = strings.ToLower(stripQuerySession(q))
		if q != "" {
			b.WriteByte('?')
			writeKeyBytes(&b, sortQuery(q))
		}
	}
	return b.String(), nil
}

var wwwLabel = regexp.MustCompile(`^www\d*\.`)

func defaultPort(scheme string) string {
	switch scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// writeKeyBytes writes s, percent-encoding the bytes that may not appear in
// a key: controls, space, DEL and non-ASCII.
func writeKeyBytes(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
}

// The session identifiers the surt package removes (after Heritrix's
// URLRegexTransformer), matched case-insensitively.
var (
	pathSession = []*regexp.Regexp{
		regexp.MustCompile(`(?i)^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^?]+\.aspx.*)$`),
		regexp.MustCompile(`(?i)^(.*/)(\([0-9a-z]{24}\)/)([^?]+\.aspx.*)$`),
	}
	querySession = []*regexp.Regexp{
		regexp.MustCompile(`(?i)^(.*)(?:jsessionid=[0-9a-z]{32})(?:&(.*))?$`),
		regexp.MustCompile(`(?i)^(.*)(?:phpsessid=[0-9a-z]{32})(?:&(.*))?$`),
		regexp.MustCompile(`(?i)^(.*)(?:sid=[0-9a-z]{32})(?:&(.*))?$`),
		regexp.MustCompile(`(?i)^(.*)(?:aspsessionid[a-z]{8}=[a-z]{24})(?:&(.*))?$`),
		regexp.MustCompile(`(?i)^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$`),
	}
)

func stripPathSession(p string) string {
	for _, re := range pathSession {
		if m := re.FindStringSubmatch(p); m != nil {
			p = m[1] + m[3]
		}
	}
	return p
}

func stripQuerySession(q string) string {
	for _, re := range querySession {
		if m := re.FindStringSubmatch(q); m != nil {
			q = m[1] + m[2]
		}
	}
	return q
}

// sortQuery sorts a query's arguments by name, then value, an argument
// without "=" before one with a value, as the surt package does (it
// keeps "a" and "a=" apart).
func sortQuery(q string) string {
	if !strings.Contains(q, "&") {
		return q
	}
	args := strings.Split(q, "&")
	slices.SortStableFunc(args, func(a, b string) int {
		an, av, aok := strings.Cut(a, "=")
		bn, bv, bok := strings.Cut(b, "=")
		if c := strings.Compare(an, bn); c != 0 {
			return c
		}
		if aok != bok {
			if !aok {
				return -1
			}
			return 1
		}
		return strings.Compare(av, bv)
	})
	return strings.Join(args, "&")
}

// timestamp14 returns the 14-digit CDXJ timestamp (YYYYMMDDhhmmss, UTC)
// of a WARC-Date: the digits of the date, as pywb's indexer keeps them,
// cut to 14, or "" when the date holds fewer than 4.
func timestamp14(date string) string {
	var b []byte
	for i := 0; i < len(date) && len(b) < 14; i++ {
		if c := date[i]; c >= '0' && c <= '9' {
			b = append(b, c)
		} else if c == '.' || c == '+' || c == 'Z' {
			break // fractions and zones are not part of the timestamp
		}
	}
	if len(b) < 4 {
		return ""
	}
	return string(b)
}

// httpStatus returns the status code of an HTTP response block, 0 if it
// does not start with a status line.
func httpStatus(block []byte) int {
	line := block
	if i := indexCRLF(block); i >= 0 {
		line = block[:i]
	}
	rest, ok := strings.CutPrefix(string(line[:min(len(line), 64)]), "HTTP/")
	if !ok {
		return 0
	}
	_, code, ok := strings.Cut(rest, " ")
	if !ok || len(code) < 3 {
		return 0
	}
	n, err := strconv.Atoi(code[:3])
	if err != nil || n < 100 || n > 999 {
		return 0
	}
	return n
}

// httpHeader returns the value of the first header field called name in
// an HTTP message block, "" if none.
func httpHeader(block []byte, name string) string {
	end := len(block)
	if p := HTTPPayload(block); p != nil {
		end -= len(p)
	}
	head := string(block[:end])
	_, head, _ = strings.Cut(head, "\n") // the start line
	for line := range strings.SplitSeq(head, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func indexCRLF(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return -1
}
