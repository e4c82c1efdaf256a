package cluster

import (
	"encoding/binary"

	"math"

	"github.com/crawlkit/crawlkit/frontier"
)

// Wire formats. Every message starts with a kind byte so that a message on
// the wrong subject is rejected, not misread; integers are unsigned
// varints, strings a varint length and the bytes.
const (
	kindURLs    = 'U' // a batch of URLs, as nodes before sitemaps wrote it
	kindURLs2   = 'V' // the same with each URL's Sitemap level and ChangeFreq
	kindSeen    = 'S'
	kindSeenAns = 's'
	kindForget  = 'F'
	kindStatus  = 'T'
	kindLeave   = 'L'
)

// maxWireString bounds one string of a message (a URL, an anchor).
const maxWireString = 1 << 20

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n > 1 && r.b[n-1] == 0 { // overflow, truncated, or padded (not canonical)
		r.err = ErrCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > maxWireString || n > uint64(len(r.b)) {
		r.err = ErrCorrupt
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.err = ErrCorrupt
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// count reads an element count and checks it against the bytes left,
// given that each element takes at least min bytes.
func (r *reader) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = ErrCorrupt
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

func (r *reader) kind(k byte) {
	if len(r.b) == 0 || r.b[0] != k {
		r.err = ErrCorrupt
		return
	}
	r.b = r.b[1:]
}

func (r *reader) finish(op string) error {
	if r.err == nil && len(r.b) != 0 {
		r.err = ErrCorrupt
	}
	if r.err != nil {
		return &Error{Op: op, Err: r.err}
	}
	return nil
}

// AppendURLs appends the wire form of a batch of URLs (URL, Depth,
// Priority hint, Source, Anchor, Sitemap level, ChangeFreq: what
// Crawler.Add needs) to b. A sitemap's URL keeps its level, so the node
// that owns its host reads it as a sitemap, not as a page.
func AppendURLs(b []byte, urls []frontier.URL) []byte {
	b = append(b, kindURLs2)
	b = binary.AppendUvarint(b, uint64(len(urls)))
	for i := range urls {
		u := &urls[i]
		b = appendString(b, u.URL)
		b = binary.AppendUvarint(b, uint64(max(u.Depth, 0)))
		b = binary.AppendUvarint(b, uint64(max(u.Priority, 0)))
		b = appendString(b, u.Source)
		b = appendString(b, u.Anchor)
		b = append(b, byte(min(max(u.Sitemap, 0), 255)), byte(u.ChangeFreq))
	}
	return b
}

// DecodeURLs decodes a batch written by AppendURLs. A malformed message
// is an *Error wrapping ErrCorrupt; it never panics.
func DecodeURLs(data []byte) ([]frontier.URL, error) {
	r := reader{b: data}
	v2 := len(data) > 0 && data[0] == kindURLs2
	if v2 {
		r.kind(kindURLs2)
	} else {
		r.kind(kindURLs)
	}
	n := r.count(5)
	if r.err != nil {
		return nil, r.finish("decode urls")
	}
	urls := make([]frontier.URL, 0, n)
	for range n {
		u := frontier.URL{URL: r.string()}
		d, p := r.uvarint(), r.uvarint()
		if d > math.MaxInt32 || p > math.MaxInt32 {
			r.err = ErrCorrupt
		}
		u.Depth, u.Priority = int(d), int(p)
		u.Source = r.string()
		u.Anchor = r.string()
		if v2 {
			u.Sitemap = int(r.byte())
			if u.ChangeFreq = frontier.ChangeFreq(r.byte()); !u.ChangeFreq.Valid() {
				r.err = ErrCorrupt
			}
		}
		if r.err != nil {
			break
		}
		urls = append(urls, u)
	}
	if err := r.finish("decode urls"); err != nil {
		return nil, err
	}
	return urls, nil
}

// seenItem is one "content seen?" lookup: the fingerprint and the URL to
// record with it if it is new.
type seenItem struct {
	fp  uint64
	url string
}

func appendSeen(b []byte, items []seenItem) []byte {
	b = append(b, kindSeen)
	b = binary.AppendUvarint(b, uint64(len(items)))
	for _, it := range items {
		b = binary.LittleEndian.AppendUint64(b, it.fp)
		b = appendString(b, it.url)
	}
	return b
}

func decodeSeen(data []byte) ([]seenItem, error) {
	r := reader{b: data}
	r.kind(kindSeen)
	n := r.count(9)
	items := make([]seenItem, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		fp := r.u64()
		items = append(items, seenItem{fp: fp, url: r.string()})
	}
	if err := r.finish("decode seen"); err != nil {
		return nil, err
	}
	return items, nil
}

// appendSeenAnswer writes the answer to a lookup of n fingerprints: a
// bitmap of n bits (bit i set: item i was seen before), then the first
// URL of every seen item in order.
func appendSeenAnswer(b []byte, seen []bool, urls []string) []byte {
	b = append(b, kindSeenAns)
	b = binary.AppendUvarint(b, uint64(len(seen)))
	start := len(b)
	b = append(b, make([]byte, (len(seen)+7)/8)...)
	for i, s := range seen {
		if s {
			b[start+i/8] |= 1 << (i % 8)
		}
	}
	for i, s := range seen {
		if s {
			b = appendString(b, urls[i])
		}
	}
	return b
}

func decodeSeenAnswer(data []byte) (seen []bool, urls []string, err error) {
	r := reader{b: data}
	r.kind(kindSeenAns)
	n := r.uvarint()
	if r.err == nil && n > 8*uint64(len(r.b)) { // not (n+7)/8: it overflows
		r.err = ErrCorrupt
	}
	if r.err != nil {
		return nil, nil, r.finish("decode seen answer")
	}
	bits := r.b[:(n+7)/8]
	r.b = r.b[(n+7)/8:]
	seen, urls = make([]bool, n), make([]string, n)
	for i := range seen {
		seen[i] = bits[i/8]&(1<<(i%8)) != 0
	}
	if n%8 != 0 && bits[len(bits)-1]>>(n%8) != 0 {
		r.err = ErrCorrupt // bits past the end
	}
	for i := range seen {
		if seen[i] {
			urls[i] = r.string()
		}
	}
	if err := r.finish("decode seen answer"); err != nil {
		return nil, nil, err
	}
	return seen, urls, nil
}

// Status is what a node reports for cluster-wide quiescence: work it
// still has (queued or being fetched URLs, URLs buffered for other
// nodes).
type Status struct {
	// Busy is the node's local work: frontier pending plus in flight plus
	// URLs buffered by its splitter and not yet published.
	Busy uint64
	// Received is the number of inbox messages the node acknowledged.
	Received uint64
	// Leaving is set once the node is closing: it said farewell, and
	// the Status it sent then stands for it after it is gone.
	Leaving bool
}

func appendStatus(b []byte, s Status) []byte {
	b = append(b, kindStatus)
	b = binary.AppendUvarint(b, s.Busy)
	b = binary.AppendUvarint(b, s.Received)
	flags := byte(0)
	if s.Leaving {
		flags = 1
	}
	return append(b, flags)
}

func (r *reader) status() Status {
	r.kind(kindStatus)
	s := Status{Busy: r.uvarint(), Received: r.uvarint()}
	switch f := r.byte(); f {
	case 0:
	case 1:
		s.Leaving = true
	default:
		r.err = ErrCorrupt
	}
	return s
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = ErrCorrupt
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func decodeStatus(data []byte) (Status, error) {
	r := reader{b: data}
	s := r.status()
	return s, r.finish("decode status")
}

// appendLeave appends a node's farewell: its name and its final Status,
// which the others use for it once it is gone.
func appendLeave(b []byte, node string, s Status) []byte {
	b = appendString(append(b, kindLeave), node)
	return appendStatus(b, s)
}

func decodeLeave(data []byte) (string, Status, error) {
	r := reader{b: data}
	r.kind(kindLeave)
	node := r.string()
	s := r.status()
	if r.err == nil && !validToken(node) {
		r.err = ErrCorrupt
	}
	return node, s, r.finish("decode leave")
}

func appendForget(b []byte, fp uint64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, kindForget), fp)
}

func decodeForget(data []byte) (uint64, error) {
	r := reader{b: data}
	r.kind(kindForget)
	fp := r.u64()
	return fp, r.finish("decode forget")
}
