package fetch

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// ErrNotFeed is returned by Feed for XML whose root element is not rss,
// feed (Atom) or rdf:RDF (RSS 1.0).
var ErrNotFeed = errors.New("fetch: not an RSS or Atom feed")

// Feed is the Parser for news feeds: RSS 2.0 (and the 0.9x versions),
// RSS 1.0 (RDF) and Atom 1.0 (RFC 4287), so that a crawler can follow news
// feeds to their entries. The zero value is ready to use. A Feed is safe for
// concurrent use.
//
// Feeds found on the web are often broken, and the parser is lenient the
// way feed readers are: end tags that are missing are assumed, unknown
// entities (HTML's &nbsp; and friends are known) and stray ampersands are
// kept as text, invalid UTF-8 and control characters are replaced, the
// dates of RSS (RFC 822 with its many variants, US zone names) and of Atom
// and Dublin Core (RFC 3339, ISO 8601 dates) are read, and a date that
// cannot be read is left zero rather than failing the feed. XML that breaks
// off after the root element yields the entries before the break, with
// FeedData.Malformed set.
type Feed struct {
	// MaxSize caps the bytes read; the rest is ignored and the result
	// marked Truncated. Default 10 MiB.
	MaxSize int64
	// MaxEntries caps the entries kept. Default 10000.
	MaxEntries int
	// MaxText caps Document.Text and each entry's Summary, in bytes.
	// Default 1 MiB.
	MaxText int
	// MaxDepth caps element nesting; deeper input is treated as broken
	// off there (a defence against nesting bombs). Default 64.
	MaxDepth int
}

var _ Parser = (*Feed)(nil)

// FeedData is a parsed feed.
type FeedData struct {
	// Format is "rss" (RSS 0.9x and 2.0), "rdf" (RSS 1.0) or "atom".
	Format string
	// Title is the feed's title.
	Title string
	// Updated is the feed's lastBuildDate, pubDate or updated; zero if
	// absent or unreadable.
	Updated time.Time
	// Links are the feed's own links other than to its entries: the site
	// (Rel "alternate") and, in Atom, paging and archive links such as
	// "next" and "prev-archive" (RFC 5005). Links with Rel "self", "hub"
	// or "edit" are left out.
	Links []Link
	// Entries in document order.
	Entries []FeedEntry
	// Truncated reports that MaxSize or MaxEntries was reached.
	Truncated bool
	// Malformed reports that the XML broke off (a syntax error, nesting
	// beyond MaxDepth) after the root element; Entries holds those read
	// before.
	Malformed bool
}

// FeedEntry is one RSS item or Atom entry.
type FeedEntry struct {
	// URL is the entry's link: RSS <link> (or a permalink <guid>), Atom
	// <link rel="alternate">; nil if it has none that is an absolute
	// http(s) URL after resolution.
	URL *url.URL
	// Title is the entry's title, markup removed, whitespace collapsed.
	Title string
	// Summary is the text of the description, summary or content, markup
	// removed, whitespace collapsed, at most MaxText bytes.
	Summary string
	// ID is the RSS guid or Atom id.
	ID string
	// Published and Updated are the entry's dates (RSS pubDate or
	// dc:date is Published; Atom published and updated); zero if absent
	// or unreadable.
	Published, Updated time.Time
	// Enclosures are the media files attached (RSS <enclosure>, Atom
	// <link rel="enclosure">).
	Enclosures []*url.URL
}

func (f *Feed) limits() (maxSize int64, maxEntries, maxText, maxDepth int) {
	maxSize, maxEntries, maxText, maxDepth = f.MaxSize, f.MaxEntries, f.MaxText, f.MaxDepth
	if maxSize <= 0 {
		maxSize = 10 << 20
	}
	if maxEntries <= 0 {
		maxEntries = 10000
	}
	if maxText <= 0 {
		maxText = 1 << 20
	}
	if maxDepth <= 0 {
		maxDepth = 64
	}
	return
}

// Parse implements Parser. Each entry's link becomes a Link with the
// entry's title as Text, Rel "alternate" and Tag "item" (RSS) or "entry"
// (Atom); enclosures follow with Rel "enclosure". The feed's own links come
// first. Document.Title is the feed's title and Document.Text the feed
// title, then each entry's title and summary. Dates have no place in a
// Document: ParseBytes returns them.
func (f *Feed) Parse(resp *Response) (*Document, error) {
	fd, err := f.parse(resp.Body, resp.URL, resp.Charset != "")
	if err != nil {
		return nil, &Error{Op: "parse", Kind: KindProtocol, URL: urlString(resp.URL), Err: err}
	}
	_, maxEntries, maxText, _ := f.limits()
	d := &Document{URL: resp.URL, Base: resp.URL, Title: fd.Title, Truncated: fd.Truncated || resp.Truncated}
	d.Links = append(d.Links, fd.Links...)
	tag := "item"
	if fd.Format == "atom" {
		tag = "entry"
	}
	var text strings.Builder
	add := func(s string) {
		if s == "" || text.Len() >= maxText {
			return
		}
		if text.Len() > 0 {
			text.WriteByte(' ')
		}
		if room := maxText - text.Len(); len(s) > room {
			s = truncUTF8(s, room)
			d.Truncated = true
		}
		text.WriteString(s)
	}
	add(fd.Title)
	for _, e := range fd.Entries {
		add(e.Title)
		add(e.Summary)
		if e.URL != nil && len(d.Links) < maxEntries {
			d.Links = append(d.Links, Link{URL: e.URL, Text: e.Title, Rel: "alternate", Tag: tag})
		}
		for _, u := range e.Enclosures {
			if len(d.Links) < maxEntries {
				d.Links = append(d.Links, Link{URL: u, Text: e.Title, Rel: "enclosure", Tag: tag})
			}
		}
	}
	d.Text = text.String()
	return d, nil
}

// ParseBytes parses a feed at base (which may be nil; relative links are
// then dropped unless an xml:base makes them absolute). The body's encoding
// is taken from its XML declaration (UTF-8 if none). It returns ErrNotFeed
// for XML of another kind and an error wrapping the XML decoder's for input
// broken before the root element. It costs O(len(body)) and allocates per
// entry.
func (f *Feed) ParseBytes(body []byte, base *url.URL) (*FeedData, error) {
	return f.parse(body, base, false)
}

// feedState is the parser's state while walking the tokens.
type feedState struct {
	fd      *FeedData
	maxText int
	// stack holds the open elements: local name, namespace, base URL.
	stack []feedElem
	// entry is the open item or entry, nil outside one.
	entry *FeedEntry
	// text collects the character data of the field being read.
	text  strings.Builder
	field string // "title", "link", ... being collected; "" for none
	// fieldSpace is the field element's namespace.
	fieldSpace string
	isHTML     bool // the field's content is escaped HTML (Atom type="html", RSS description)
	guidURL    bool // the guid being read may serve as the link
	linkSet    bool // the entry has its link from <link>, guid does not override
}

type feedElem struct {
	local, space string
	base         *url.URL
}

const (
	nsAtom = "http://www.w3.org/2005/Atom"
	nsDC   = "http://purl.org/dc/elements/1.1/"
	nsXML  = "http://www.w3.org/XML/1998/namespace"
)

func (f *Feed) parse(body []byte, base *url.URL, utf8Already bool) (*FeedData, error) {
	maxSize, maxEntries, maxText, maxDepth := f.limits()
	fd := &FeedData{}
	if int64(len(body)) > maxSize {
		body, fd.Truncated = body[:maxSize], true
	}
	body = sanitizeXML(body)
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		if utf8Already {
			// fetch.HTTP converted the text body to UTF-8 already.
			return in, nil
		}
		return charset.NewReaderLabel(label, in)
	}
	st := &feedState{fd: fd, maxText: maxText}
	for {
		tok, err := d.Token()
		if err != nil {
			if err == io.EOF {
				if fd.Format == "" {
					return nil, ErrNotFeed
				}
				if len(st.stack) > 0 {
					fd.Malformed = true // the input ended inside elements
				}
				break
			}
			if fd.Format == "" {
				return nil, fmt.Errorf("fetch: feed: %w", err)
			}
			fd.Malformed = true
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if fd.Format == "" {
				switch t.Name.Local {
				case "rss":
					fd.Format = "rss"
				case "feed":
					fd.Format = "atom"
				case "RDF":
					fd.Format = "rdf"
				default:
					return nil, ErrNotFeed
				}
			}
			if len(st.stack) >= maxDepth {
				fd.Malformed = true
				return st.done(), nil
			}
			parent := base
			if n := len(st.stack); n > 0 {
				parent = st.stack[n-1].base
			}
			el := feedElem{local: t.Name.Local, space: t.Name.Space, base: parent}
			for _, a := range t.Attr {
				if a.Name.Local == "base" && a.Name.Space == nsXML {
					if u, err := resolveFeedURL(parent, a.Value, true); err == nil {
						el.base = u
					}
				}
			}
			st.stack = append(st.stack, el)
			if !st.start(t, el.base, maxEntries) {
				return st.done(), nil
			}
		case xml.EndElement:
			if len(st.stack) == 0 {
				continue
			}
			st.end()
			st.stack = st.stack[:len(st.stack)-1]
		case xml.CharData:
			if st.field != "" && st.text.Len() < 4*maxText {
				st.text.Write(t)
			}
		}
	}
	return st.done(), nil
}

// done finishes an entry left open by broken input and returns the data.
func (st *feedState) done() *FeedData {
	if st.entry != nil {
		st.fd.Entries = append(st.fd.Entries, *st.entry)
		st.entry = nil
	}
	return st.fd
}

func xmlAttr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name && (a.Name.Space == "" || a.Name.Space == t.Name.Space) {
			return a.Value
		}
	}
	return ""
}

// start handles an opening tag; it returns false when MaxEntries stops
// the parse.
func (st *feedState) start(t xml.StartElement, base *url.URL, maxEntries int) bool {
	depth := len(st.stack)
	name := t.Name.Local
	if st.field != "" {
		if t.Name.Space != st.fieldSpace || !feedFields[name] {
			return true // markup inside a field (Atom xhtml content): its text counts
		}
		// A field element inside a field: the field was never closed
		// (<title>a<link>...). Close it here, as feed readers do.
		st.finishField(base)
	}
	switch {
	case (name == "item" && st.fd.Format != "atom") || (name == "entry" && st.fd.Format == "atom"):
		if st.entry != nil {
			st.fd.Entries = append(st.fd.Entries, *st.entry) // an item never closed
		}
		if len(st.fd.Entries) >= maxEntries {
			st.entry = nil
			st.fd.Truncated = true
			return false
		}
		st.entry = &FeedEntry{}
		st.linkSet = false
		return true
	case name == "enclosure" && st.entry != nil:
		if u, err := resolveFeedURL(base, xmlAttr(t, "url"), false); err == nil {
			st.entry.Enclosures = append(st.entry.Enclosures, u)
		}
		return true
	case name == "link" && (t.Name.Space == nsAtom || st.fd.Format == "atom" || xmlAttr(t, "href") != ""):
		// Atom links, and atom:link elements inside RSS channels.
		st.atomLink(t, base)
		return true
	}
	inEntry := st.entry != nil
	inChannel := !inEntry && depth <= 3 // rss>channel>x, RDF>channel>x, feed>x
	if !inEntry && !inChannel {
		return true
	}
	if !feedFields[name] || name == "item" || name == "entry" || name == "enclosure" {
		return true
	}
	if name == "date" && t.Name.Space != nsDC && t.Name.Space != "dc" {
		return true
	}
	st.field, st.fieldSpace = name, t.Name.Space
	st.text.Reset()
	typ := xmlAttr(t, "type")
	st.isHTML = name == "description" || name == "encoded" || typ == "html" || typ == "text/html"
	st.guidURL = name == "guid" && !strings.EqualFold(xmlAttr(t, "isPermaLink"), "false")
	return true
}

// feedFields are the elements the parser reads: the entry containers and
// the fields of entries and channels.
var feedFields = map[string]bool{
	"item": true, "entry": true, "enclosure": true, "title": true, "link": true, "guid": true,
	"id": true, "pubDate": true, "lastBuildDate": true, "published": true, "updated": true,
	"date": true, "description": true, "summary": true, "content": true, "encoded": true,
}

// atomLink reads an Atom <link href rel>.
func (st *feedState) atomLink(t xml.StartElement, base *url.URL) {
	rel := strings.ToLower(strings.TrimSpace(xmlAttr(t, "rel")))
	if rel == "" {
		rel = "alternate"
	}
	u, err := resolveFeedURL(base, xmlAttr(t, "href"), false)
	if err != nil {
		return
	}
	if st.entry != nil {
		switch rel {
		case "alternate":
			if !st.linkSet {
				st.entry.URL, st.linkSet = u, true
			}
		case "enclosure":
			st.entry.Enclosures = append(st.entry.Enclosures, u)
		}
		return
	}
	switch rel {
	case "self", "hub", "edit":
		return
	}
	st.fd.Links = append(st.fd.Links, Link{URL: u, Text: xmlAttr(t, "title"), Rel: rel, Tag: "link"})
}

// end handles a closing tag.
func (st *feedState) end() {
	el := st.stack[len(st.stack)-1]
	name := el.local
	if st.field != "" && name == st.field {
		st.finishField(el.base)
		return
	}
	if st.field != "" {
		return
	}
	if st.entry != nil && ((name == "item" && st.fd.Format != "atom") || (name == "entry" && st.fd.Format == "atom")) {
		st.fd.Entries = append(st.fd.Entries, *st.entry)
		st.entry = nil
	}
}

func (st *feedState) finishField(base *url.URL) {
	field := st.field
	raw := st.text.String()
	st.field = ""
	st.text.Reset()
	var text string
	if st.isHTML {
		text = htmlText(raw, st.maxText)
	} else {
		text = truncUTF8(strings.Join(strings.Fields(raw), " "), st.maxText)
	}
	e := st.entry
	if e == nil {
		switch field {
		case "title":
			if st.fd.Title == "" {
				st.fd.Title = text
			}
		case "link":
			if u, err := resolveFeedURL(base, text, false); err == nil {
				st.fd.Links = append(st.fd.Links, Link{URL: u, Rel: "alternate", Tag: "link"})
			}
		case "lastBuildDate", "updated", "pubDate", "date":
			if t := parseFeedDate(text); !t.IsZero() && (st.fd.Updated.IsZero() || field == "lastBuildDate" || field == "updated") {
				st.fd.Updated = t
			}
		}
		return
	}
	switch field {
	case "title":
		if e.Title == "" {
			e.Title = text
		}
	case "link":
		if u, err := resolveFeedURL(base, text, false); err == nil && !st.linkSet {
			e.URL, st.linkSet = u, true
		}
	case "guid", "id":
		e.ID = text
		if st.guidURL && !st.linkSet {
			if u, err := resolveFeedURL(base, text, false); err == nil && u.IsAbs() {
				e.URL = u
			}
		}
	case "pubDate", "published", "date":
		if t := parseFeedDate(text); !t.IsZero() {
			e.Published = t
		}
	case "updated":
		e.Updated = parseFeedDate(text)
	case "description", "summary", "content", "encoded":
		if e.Summary == "" || field == "content" || field == "encoded" {
			if text != "" {
				e.Summary = text
			}
		}
	}
}

// resolveFeedURL resolves ref against base and keeps absolute http(s)
// URLs; with anyScheme, the result only has to be absolute (xml:base).
func resolveFeedURL(base *url.URL, ref string, anyScheme bool) (*url.URL, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, errNoURL
	}
	var u *url.URL
	var err error
	if base != nil {
		u, err = urlnorm.Resolve(base, ref)
	} else {
		u, err = url.Parse(ref)
	}
	if err != nil {
		return nil, err
	}
	if !u.IsAbs() || u.Host == "" || (!anyScheme && u.Scheme != "http" && u.Scheme != "https") {
		return nil, errNoURL
	}
	return u, nil
}

var errNoURL = errors.New("fetch: not an absolute http(s) URL")

// htmlText returns the text of an HTML fragment (escaped HTML in RSS
// descriptions and Atom type="html"), whitespace collapsed.
func htmlText(s string, max int) string {
	if !strings.ContainsAny(s, "<&") {
		return truncUTF8(strings.Join(strings.Fields(s), " "), max)
	}
	z := html.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	skip := 0
	for b.Len() < max {
		switch z.Next() {
		case html.ErrorToken:
			return truncUTF8(strings.Join(strings.Fields(b.String()), " "), max)
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
				b.WriteByte(' ')
			}
		case html.StartTagToken:
			if n, _ := z.TagName(); string(n) == "script" || string(n) == "style" {
				skip++
			}
		case html.EndTagToken:
			if n, _ := z.TagName(); (string(n) == "script" || string(n) == "style") && skip > 0 {
				skip--
			}
		}
	}
	return truncUTF8(strings.Join(strings.Fields(b.String()), " "), max)
}

// truncUTF8 cuts s to at most n bytes without splitting a character.
func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// sanitizeXML replaces what encoding/xml refuses even when not strict:
// control characters other than tab, newline and carriage return (found
// in feeds pasted from word processors) become spaces, and invalid UTF-8
// in a body that declares no other encoding becomes U+FFFD. The body is
// copied only when it needs a change.
func sanitizeXML(b []byte) []byte {
	bad := false
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			bad = true
			break
		}
	}
	fixUTF8 := !utf8.Valid(b)
	if fixUTF8 && bytes.HasPrefix(b, []byte("<?xml")) {
		decl := b[:min(len(b), 200)]
		if i := bytes.Index(decl, []byte("?>")); i > 0 {
			decl = decl[:i]
		}
		if _, enc, ok := bytes.Cut(decl, []byte("encoding")); ok {
			enc = bytes.Trim(enc, " \t\r\n=\"'")
			if i := bytes.IndexAny(enc, "\"' \t"); i >= 0 {
				enc = enc[:i]
			}
			// A declared legacy encoding is decoded by the CharsetReader.
			fixUTF8 = bytes.EqualFold(enc, []byte("utf-8")) || bytes.EqualFold(enc, []byte("utf8")) || len(enc) == 0
		}
	}
	if !bad && !fixUTF8 {
		return b
	}
	if fixUTF8 {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	} else {
		b = bytes.Clone(b)
	}
	for i, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			b[i] = ' '
		}
	}
	return b
}

// feedDateLayouts are the date forms found in feeds: RFC 822 and its
// variants for RSS, RFC 3339 and ISO 8601 for Atom and Dublin Core.
var feedDateLayouts = []string{
	time.RFC1123Z,
	time.RFC1123,
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04:05 MST",
	"Mon, 2 Jan 2006 15:04 -0700",
	"Mon, 2 Jan 2006 15:04 MST",
	"2 Jan 2006 15:04:05 -0700",
	"2 Jan 2006 15:04:05 MST",
	"2 Jan 2006 15:04 -0700",
	"Mon, 2 Jan 06 15:04:05 -0700",
	"Mon, 2 Jan 06 15:04:05 MST",
	"Mon, 2 January 2006 15:04:05 -0700",
	"Monday, 2 Jan 2006 15:04:05 -0700",
	"Monday, 2 Jan 2006 15:04:05 MST",
	"Mon, 2 Jan 2006",
	"2 Jan 2006",
	time.RFC3339Nano,
	time.RFC3339,
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05",
	"2006-01-02",
}

// feedZones are the zone names of RFC 822 (and the usual extras) with
// their offsets, which time.Parse does not know outside their location.
var feedZones = map[string]string{
	"UT": "+0000", "UTC": "+0000", "GMT": "+0000", "Z": "+0000",
	"EST": "-0500", "EDT": "-0400", "CST": "-0600", "CDT": "-0500",
	"MST": "-0700", "MDT": "-0600", "PST": "-0800", "PDT": "-0700",
	"CET": "+0100", "CEST": "+0200", "BST": "+0100", "IST": "+0530", "JST": "+0900",
}

// parseFeedDate reads a feed date in any of feedDateLayouts; the zero
// time if none fits or the year is outside 1970..9999.
func parseFeedDate(s string) time.Time {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" || len(s) > 64 {
		return time.Time{}
	}
	if i := strings.IndexByte(s, '('); i > 0 {
		s = strings.TrimSpace(s[:i]) // "... -0500 (EST)"
	}
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		if off, ok := feedZones[strings.ToUpper(s[i+1:])]; ok {
			s = s[:i+1] + off
		}
	}
	for _, l := range feedDateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			if t.Year() < 1970 || t.Year() > 9999 {
				return time.Time{}
			}
			return t
		}
	}
	return time.Time{}
}
