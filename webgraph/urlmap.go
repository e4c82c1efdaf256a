package webgraph

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// SortKey returns the key that orders URLs in a URLMap: urlnorm.SortKey,
// the host reversed ("http://www.stanford.edu/alchemy" →
// "edu.stanford.www/alchemy"), so a site's pages get neighbouring ids (book
// §20.4) and their link lists compress well. Strings that do not parse as
// URLs with a host sort after all URLs, by themselves.
func SortKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "\xff" + raw
	}
	return urlnorm.SortKey(u)
}

// CompareURLs orders URLs by SortKey, then by the URL itself (http and https
// versions of a page share a key).
func CompareURLs(a, b string) int {
	if c := strings.Compare(SortKey(a), SortKey(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// URLMap maps URLs to node ids and back: ids are positions in the
// host-reversed order of CompareURLs; the URLs are front coded, so a map of
// crawled URLs takes a fraction of their raw size.
//
// URL costs decoding one bucket (16 strings); ID costs a binary search over
// bucket heads (log2(n/16) key computations) and one bucket scan.
// A URLMap is safe for concurrent use.
type URLMap struct {
	fc       *FrontCodedList
	headKeys []string // SortKey of each bucket's first URL
}

// newURLMap checks that fc's URLs are distinct and in CompareURLs order,
// all of them, since ID's binary search over bucket heads and its bucket
// scan rely on it: in a map that breaks the order, ID would answer
// ErrUnknownURL for URLs the map holds. The check decodes every URL once;
// neighbours on one site compare without parsing (compareAdjacent).
func newURLMap(fc *FrontCodedList) (*URLMap, error) {
	m := &URLMap{fc: fc, headKeys: make([]string, len(fc.bucket))}
	var s, prev []byte
	pos, prevP := 0, -1
	for i := 0; i < fc.n; i++ {
		var err error
		if i%fc.k == 0 {
			s, pos, err = fc.head(i/fc.k, s)
		} else {
			s, pos, err = fc.next(pos, s)
		}
		if err != nil {
			return nil, err
		}
		if i%fc.k == 0 {
			m.headKeys[i/fc.k] = SortKey(string(s))
		}
		p := plainPrefix(s)
		if i > 0 && compareAdjacent(prev, s, prevP, p) >= 0 {
			return nil, formatErr("URL map is not in order at URL %d", i)
		}
		prev, prevP = append(prev[:0], s...), p
	}
	return m, nil
}

// compareAdjacent is CompareURLs(a, b), given pa = plainPrefix(a) and pb =
// plainPrefix(b), without parsing for the usual neighbours in a map: when
// a and b share their "scheme://authority" and both go on with a plain
// rest, SortKey(a) and SortKey(b) share the part the authority gives and
// end with those rests as written (or, if the authority does not parse,
// are a and b behind the same marker), so they compare as the rests do,
// and equal rests make a and b equal.
func compareAdjacent(a, b []byte, pa, pb int) int {
	if pa >= 0 && pa == pb && bytes.Equal(a[:pa], b[:pb]) {
		return bytes.Compare(a[pa:], b[pb:])
	}
	return CompareURLs(string(a), string(b))
}

// plainPrefix returns the length of u's "scheme://authority" when the rest
// of u is a path starting with / and an optional query, with no fragment,
// made of characters that need no escaping in a path and well-formed %
// escapes; -1 otherwise. url.Parse then keeps such a path's escaping
// (URL.EscapedPath returns it as written) and the query as written, so
// urlnorm.SortKey ends with the rest unchanged.
func plainPrefix(u []byte) int {
	i := bytes.Index(u, []byte("://"))
	if i < 0 {
		return -1
	}
	j := bytes.IndexByte(u[i+3:], '/')
	if j < 0 {
		return -1
	}
	p := i + 3 + j
	for _, c := range u[i+3 : p] {
		if c == '?' || c == '#' {
			return -1
		}
	}
	for k := p; k < len(u); k++ {
		switch c := u[k]; {
		case plain[c]:
		case c == '%' && k+2 < len(u) && isHex(u[k+1]) && isHex(u[k+2]):
			k += 2
		default:
			return -1
		}
	}
	return p
}

// plain holds the bytes a path may hold unescaped, / and ?: letters,
// digits, -._~ and the sub-delimiters !$&'()*+,;= with : and @.
var plain = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("-._~!$&'()*+,;=:@/?", byte(c)) >= 0
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// NewURLMap sorts and deduplicates urls in memory and builds the map. For
// inputs larger than memory use a Builder.
func NewURLMap(urls []string) (*URLMap, error) {
	type kv struct{ k, u string }
	s := make([]kv, len(urls))
	for i, u := range urls {
		s[i] = kv{SortKey(u), u}
	}
	slices.SortFunc(s, func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.u, b.u)
	})
	var buf bytes.Buffer
	w := NewFrontCodedWriter(&buf, 0)
	for i, e := range s {
		if i > 0 && e.u == s[i-1].u {
			continue
		}
		w.Add(e.u)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return ReadURLMap(buf.Bytes())
}

// ReadURLMap loads a map written by URLMap.WriteTo or a Builder. It checks
// that the URLs are distinct and in order, decoding each once, and refuses
// a map that is not with an error wrapping ErrFormat.
func ReadURLMap(p []byte) (*URLMap, error) {
	fc, err := NewFrontCodedList(p)
	if err != nil {
		return nil, err
	}
	return newURLMap(fc)
}

// OpenURLMap reads a map file.
func OpenURLMap(path string) (*URLMap, error) {
	p, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Op: "open", Subject: path, Err: err}
	}
	m, err := ReadURLMap(p)
	if err != nil {
		return nil, &Error{Op: "open", Subject: path, Err: err}
	}
	return m, nil
}

// WriteTo writes the map in its file format.
func (m *URLMap) WriteTo(w io.Writer) (int64, error) {
	fw := NewFrontCodedWriter(w, m.fc.k)
	for i := 0; i < m.fc.n; i++ {
		s, err := m.fc.Get(i)
		if err != nil {
			return 0, err
		}
		fw.Add(s)
	}
	return int64(fw.off), fw.Close()
}

// Len returns the number of URLs.
func (m *URLMap) Len() int { return m.fc.Len() }

// SizeBytes returns the memory held by the map.
func (m *URLMap) SizeBytes() int { return m.fc.SizeBytes() }

// URL returns the URL of node id.
func (m *URLMap) URL(id int) (string, error) {
	s, err := m.fc.Get(id)
	if err != nil {
		return "", &Error{Op: "url", Subject: fmt.Sprintf("node %d", id), Err: err}
	}
	return s, nil
}

// ID returns the node id of url, or an error wrapping ErrUnknownURL.
func (m *URLMap) ID(url string) (int, error) {
	key := SortKey(url)
	i, err := m.fc.search(url, func(b int, head []byte) int {
		if c := strings.Compare(m.headKeys[b], key); c != 0 {
			return c
		}
		return strings.Compare(string(head), url)
	})
	if err != nil {
		return -1, &Error{Op: "id", Subject: url, Err: err}
	}
	if i < 0 {
		return -1, &Error{Op: "id", Subject: url, Err: ErrUnknownURL}
	}
	return i, nil
}
