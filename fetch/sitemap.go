package fetch

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html/charset"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// Sitemap is the Parser for sitemaps (sitemaps.org protocol 0.9): XML
// urlsets, XML sitemap indexes, either of them gzip-compressed, and text
// sitemaps (one URL per line). The zero value is ready to use. A Sitemap is
// safe for concurrent use.
//
// Entries that are not absolute http or https URLs are skipped. Whether an
// entry may be crawled (same host as the sitemap, robots.txt) is for the
// URL filter to decide.
type Sitemap struct {
	// MaxSize caps the uncompressed size read, in bytes; the rest is
	// ignored and the result marked Truncated. Default 50 MiB (the
	// protocol's limit).
	MaxSize int64
	// MaxEntries caps the entries kept. Default 50000 (the protocol's
	// limit).
	MaxEntries int
}

var _ Parser = (*Sitemap)(nil)

// SitemapEntry is one <url> of a urlset, one <sitemap> of an index, or one
// line of a text sitemap.
type SitemapEntry struct {
	URL        *url.URL
	LastMod    time.Time // zero if absent or unparseable
	ChangeFreq string    // "always", "hourly", "daily", ... or ""
	Priority   float64   // 0.0–1.0; 0.5 (the protocol's default) if absent
}

// SitemapData is a parsed sitemap.
type SitemapData struct {
	// Index reports a sitemap index: the entries are sitemaps.
	Index bool
	// Entries in document order.
	Entries []SitemapEntry
	// Truncated reports that MaxSize or MaxEntries was reached.
	Truncated bool
}

// Parse implements Parser: each entry becomes a Link with Tag "loc" (Rel
// "sitemap" for the entries of an index).
func (s *Sitemap) Parse(resp *Response) (*Document, error) {
	sd, err := s.ParseBytes(resp.Body, resp.URL)
	if err != nil {
		return nil, &Error{Op: "parse", Kind: KindProtocol, URL: urlString(resp.URL), Err: err}
	}
	d := &Document{URL: resp.URL, Base: resp.URL, Truncated: sd.Truncated || resp.Truncated, Links: make([]Link, len(sd.Entries))}
	for i, e := range sd.Entries {
		d.Links[i] = Link{URL: e.URL, Tag: "loc"}
		if sd.Index {
			d.Links[i].Rel = "sitemap"
		}
	}
	return d, nil
}

// ParseBytes parses a sitemap; relative entries (not allowed by the
// protocol, but found) are resolved against base, which may be nil. Body may
// be gzip-compressed. It returns ErrNotSitemap for XML of another kind and
// the XML decoder's error for XML broken before the first entry; XML broken
// later yields the entries before the break. It costs O(len(body)) and
// allocates per entry.
func (s *Sitemap) ParseBytes(body []byte, base *url.URL) (*SitemapData, error) {
	maxSize, maxEntries := s.MaxSize, s.MaxEntries
	if maxSize <= 0 {
		maxSize = 50 << 20
	}
	if maxEntries <= 0 {
		maxEntries = 50000
	}
	sd := &SitemapData{}
	var r io.Reader = bytes.NewReader(body)
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		r = zr
	} else if int64(len(body)) > maxSize {
		body, sd.Truncated = body[:maxSize], true
		r = bytes.NewReader(body)
	}
	lr := &limitReader{r: r, n: maxSize}
	br := bufio.NewReader(lr)
	// Skip a BOM and leading whitespace to tell XML from text.
	for {
		b, err := br.Peek(1)
		if err != nil {
			return sd, nil // empty
		}
		if b[0] == 0xef {
			if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
				br.Discard(3)
				continue
			}
		}
		if !isSpace(b[0]) {
			break
		}
		br.Discard(1)
	}
	first, _ := br.Peek(1)
	var err error
	if first[0] == '<' {
		err = s.parseXML(br, base, sd, maxEntries)
	} else {
		s.parseText(br, base, sd, maxEntries)
	}
	if lr.hit {
		sd.Truncated = true
	}
	if err != nil && (len(sd.Entries) == 0 || errors.Is(err, ErrNotSitemap)) {
		return nil, err
	}
	return sd, nil
}

// limitReader is io.LimitReader that remembers whether the limit cut input.
type limitReader struct {
	r   io.Reader
	n   int64
	hit bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.hit = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

func (s *Sitemap) parseText(r *bufio.Reader, base *url.URL, sd *SitemapData, maxEntries int) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if !s.add(sd, base, line, maxEntries) {
			return
		}
	}
}

// add appends an entry for loc and reports whether there is room for more.
func (s *Sitemap) add(sd *SitemapData, base *url.URL, loc string, maxEntries int) bool {
	if len(sd.Entries) >= maxEntries {
		sd.Truncated = true
		return false
	}
	u, err := urlnorm.Resolve(base, loc)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return true
	}
	sd.Entries = append(sd.Entries, SitemapEntry{URL: u, Priority: 0.5})
	return true
}

func (s *Sitemap) parseXML(r io.Reader, base *url.URL, sd *SitemapData, maxEntries int) error {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.CharsetReader = charset.NewReaderLabel
	var (
		root    string
		field   string // loc, lastmod, changefreq, priority inside an entry
		inEntry bool
		val     []byte
		entry   SitemapEntry
		loc     string
	)
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			if root == "" {
				return ErrNotSitemap
			}
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			switch {
			case root == "":
				if name != "urlset" && name != "sitemapindex" {
					return ErrNotSitemap
				}
				root, sd.Index = name, name == "sitemapindex"
			case (name == "url" && !sd.Index) || (name == "sitemap" && sd.Index):
				inEntry, entry, loc = true, SitemapEntry{Priority: 0.5}, ""
			case inEntry && t.Name.Space == "" && (name == "loc" || name == "lastmod" || name == "changefreq" || name == "priority"):
				field, val = name, val[:0]
			}
		case xml.CharData:
			if field != "" && len(val) < 8<<10 {
				val = append(val, t...)
			}
		case xml.EndElement:
			name := strings.ToLower(t.Name.Local)
			if field != "" && name == field {
				v := strings.TrimSpace(string(val))
				switch field {
				case "loc":
					loc = v
				case "lastmod":
					entry.LastMod = parseW3CDate(v)
				case "changefreq":
					entry.ChangeFreq = strings.ToLower(v)
				case "priority":
					if p, err := strconv.ParseFloat(v, 64); err == nil && p >= 0 && p <= 1 {
						entry.Priority = p
					}
				}
				field = ""
			}
			if inEntry && ((name == "url" && !sd.Index) || (name == "sitemap" && sd.Index)) {
				inEntry = false
				if loc == "" {
					continue
				}
				n := len(sd.Entries)
				if !s.add(sd, base, loc, maxEntries) {
					return nil
				}
				if len(sd.Entries) > n {
					e := &sd.Entries[n]
					e.LastMod, e.ChangeFreq, e.Priority = entry.LastMod, entry.ChangeFreq, entry.Priority
				}
			}
		}
	}
}

// parseW3CDate parses the W3C Datetime forms sitemaps use.
func parseW3CDate(v string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02", "2006-01", "2006",
		"2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t
		}
	}
	return time.Time{}
}
