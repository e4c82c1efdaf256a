package fetch

import (
	"bytes"
	"encoding/binary"
	"html"
	"math/bits"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	xhtml "golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// HTML is the HTML Parser. It runs the golang.org/x/net/html tokenizer (no
// tree is built) and reads tag names and attributes from the raw token bytes
// itself, so that it allocates per link and per document, not per token.
// The zero value is ready to use. An HTML is safe for concurrent use.
//
// It reads a page as a browser with scripting disabled does, since a
// crawler runs no scripts: the content of <noscript> is markup, its links
// are links and its text is visible (old javadoc pages reach their class
// index only through <NOSCRIPT><A HREF=...>). Set Scripting for the DOM of
// a rendering fetcher, where scripts ran.
//
// Input is expected in UTF-8, as the HTTP fetcher delivers it (see
// ToUTF8); other bytes pass through unchanged. Parsing costs O(len(body)):
// on the testdata pages about 140–155 MB per CPU-second, about 1.45 times the
// CPU time of a bare x/net/html tokenizer loop over the same bytes (see
// BenchmarkHTMLVsTokenizer). Scratch buffers are pooled; a kept link costs
// about 400 bytes of heap in six allocations (its Link, *url.URL and
// strings; BenchmarkHTMLIndexPage).
type HTML struct {
	// MaxLinks caps the links kept per page; the links past it are not
	// collected, and the Document counts them in LinksDropped and is
	// marked Truncated. Default DefaultMaxLinks, 100000: large enough for
	// real index pages (javadoc and Sphinx index pages run past 10000
	// links), low enough to bound a hostile page at about 40 MB of links.
	// The cap itself costs nothing: memory grows with the links a page
	// has, not with MaxLinks.
	MaxLinks int
	// MaxText caps Document.Text, in bytes. Default 1 MiB.
	MaxText int
	// Scripting parses as a browser with scripting enabled: the content of
	// <noscript> is raw text, hidden, and its links are not extracted.
	// Default false: the content of <noscript> is markup, as a browser
	// with scripting disabled (a crawler) parses it. Parse sets it for a
	// Response that is Rendered.
	Scripting bool
}

// DefaultMaxLinks is the default of HTML.MaxLinks.
const DefaultMaxLinks = 100000

var _ Parser = (*HTML)(nil)

// Parse implements Parser: it parses resp.Body as HTML at resp.URL, taking
// X-Robots-Tag and Content-Language from resp.Header.
func (p *HTML) Parse(resp *Response) (*Document, error) {
	if resp.URL == nil {
		return nil, &Error{Op: "parse", Kind: KindBadURL, Err: ErrScheme}
	}
	pp := p
	if resp.Rendered && !p.Scripting {
		// The DOM a browser left ran its scripts: <noscript> is text
		// there, as the browser read it.
		q := *p
		q.Scripting = true
		pp = &q
	}
	d := pp.ParseBytes(resp.Body, resp.URL)
	d.Truncated = d.Truncated || resp.Truncated
	if resp.Header != nil {
		for _, v := range resp.Header.Values("X-Robots-Tag") {
			robotsDirectives(v, d)
		}
		if d.Lang == "" {
			d.Lang = firstToken(resp.Header.Get("Content-Language"))
		}
	}
	return d, nil
}

// Flags of the elements the parser treats specially.
const (
	// tagBlock elements separate words: their tags count as whitespace.
	tagBlock = 1 << iota
	// tagHidden elements have no visible text. All but template and head
	// are raw-text elements, which the tokenizer ends at their end tag, so
	// an unclosed one cannot hide the rest of the page.
	tagHidden
)

// Elements the parser acts on, by id; other known elements only have flags.
const (
	tagOther uint8 = iota
	tagA
	tagArea
	tagLink
	tagIframe
	tagFrame
	tagImg
	tagMeta
	tagBase
	tagHTML
	tagHead
	tagBody
	tagTitle
	tagScript
	tagStyle
	tagTemplate
	tagNoscript
	tagNoembed
	tagNoframes
	tagXmp
)

// tagInfo is a known element: its id and flags.
type tagInfo struct {
	id    uint8
	flags uint8
}

// knownTags are the elements the parser looks at.
var knownTags = []struct {
	name string
	info tagInfo
}{
	{"a", tagInfo{tagA, 0}},
	{"link", tagInfo{tagLink, 0}},
	{"meta", tagInfo{tagMeta, 0}},
	{"base", tagInfo{tagBase, 0}},
	{"html", tagInfo{tagHTML, 0}},
	{"script", tagInfo{tagScript, tagHidden}},
	{"style", tagInfo{tagStyle, tagHidden}},
	{"template", tagInfo{tagTemplate, tagHidden}},
	{"noscript", tagInfo{tagNoscript, tagHidden}},
	{"noembed", tagInfo{tagNoembed, tagHidden}},
	{"noframes", tagInfo{tagNoframes, tagHidden}},
	{"iframe", tagInfo{tagIframe, tagHidden | tagBlock}},
	{"xmp", tagInfo{tagXmp, tagHidden}},
	{"head", tagInfo{tagHead, tagHidden}},
	{"p", tagInfo{tagOther, tagBlock}},
	{"div", tagInfo{tagOther, tagBlock}},
	{"br", tagInfo{tagOther, tagBlock}},
	{"li", tagInfo{tagOther, tagBlock}},
	{"ul", tagInfo{tagOther, tagBlock}},
	{"ol", tagInfo{tagOther, tagBlock}},
	{"dl", tagInfo{tagOther, tagBlock}},
	{"dt", tagInfo{tagOther, tagBlock}},
	{"dd", tagInfo{tagOther, tagBlock}},
	{"tr", tagInfo{tagOther, tagBlock}},
	{"td", tagInfo{tagOther, tagBlock}},
	{"th", tagInfo{tagOther, tagBlock}},
	{"table", tagInfo{tagOther, tagBlock}},
	{"thead", tagInfo{tagOther, tagBlock}},
	{"tbody", tagInfo{tagOther, tagBlock}},
	{"tfoot", tagInfo{tagOther, tagBlock}},
	{"h1", tagInfo{tagOther, tagBlock}},
	{"h2", tagInfo{tagOther, tagBlock}},
	{"h3", tagInfo{tagOther, tagBlock}},
	{"h4", tagInfo{tagOther, tagBlock}},
	{"h5", tagInfo{tagOther, tagBlock}},
	{"h6", tagInfo{tagOther, tagBlock}},
	{"hr", tagInfo{tagOther, tagBlock}},
	{"section", tagInfo{tagOther, tagBlock}},
	{"article", tagInfo{tagOther, tagBlock}},
	{"header", tagInfo{tagOther, tagBlock}},
	{"footer", tagInfo{tagOther, tagBlock}},
	{"nav", tagInfo{tagOther, tagBlock}},
	{"aside", tagInfo{tagOther, tagBlock}},
	{"main", tagInfo{tagOther, tagBlock}},
	{"blockquote", tagInfo{tagOther, tagBlock}},
	{"pre", tagInfo{tagOther, tagBlock}},
	{"form", tagInfo{tagOther, tagBlock}},
	{"fieldset", tagInfo{tagOther, tagBlock}},
	{"legend", tagInfo{tagOther, tagBlock}},
	{"figure", tagInfo{tagOther, tagBlock}},
	{"figcaption", tagInfo{tagOther, tagBlock}},
	{"address", tagInfo{tagOther, tagBlock}},
	{"option", tagInfo{tagOther, tagBlock}},
	{"select", tagInfo{tagOther, tagBlock}},
	{"textarea", tagInfo{tagOther, tagBlock}},
	{"button", tagInfo{tagOther, tagBlock}},
	{"label", tagInfo{tagOther, tagBlock}},
	{"caption", tagInfo{tagOther, tagBlock}},
	{"body", tagInfo{tagBody, tagBlock}},
	{"title", tagInfo{tagTitle, tagBlock}},
	{"img", tagInfo{tagImg, tagBlock}},
	{"input", tagInfo{tagOther, tagBlock}},
	{"center", tagInfo{tagOther, tagBlock}},
	{"details", tagInfo{tagOther, tagBlock}},
	{"summary", tagInfo{tagOther, tagBlock}},
	{"dialog", tagInfo{tagOther, tagBlock}},
	{"frameset", tagInfo{tagOther, tagBlock}},
	{"frame", tagInfo{tagFrame, tagBlock}},
	{"area", tagInfo{tagArea, tagBlock}},
	{"map", tagInfo{tagOther, tagBlock}},
	{"video", tagInfo{tagOther, tagBlock}},
	{"audio", tagInfo{tagOther, tagBlock}},
}

// tagTable holds the known elements by tagHash of their names, one per
// slot: the hash multiplier is chosen so that no two collide (a test checks
// it), so a lookup is one hash and one comparison.
var tagTable = func() (t [256]struct {
	name string
	info tagInfo
}) {
	for _, k := range knownTags {
		h := tagHash([]byte(k.name))
		t[h].name, t[h].info = k.name, k.info
	}
	return t
}()

// tagHash hashes the length, the first two and the last byte of a
// non-empty name, ASCII case folded (imprecisely: lookupTag compares).
func tagHash(name []byte) uint8 {
	n := len(name)
	c1 := name[0]
	if n > 1 {
		c1 = name[1]
	}
	k := uint32(name[0]|0x20) | uint32(c1|0x20)<<8 | uint32(name[n-1]|0x20)<<16 | uint32(n)<<24
	return uint8((k * 0xfea1daeb) >> 24)
}

// lookupTag returns the info of the element named name, in any ASCII case;
// the zero tagInfo for elements the parser does not look at. It does not
// allocate.
func lookupTag(name []byte) tagInfo {
	if len(name) == 0 || len(name) > 10 {
		return tagInfo{}
	}
	e := &tagTable[tagHash(name)]
	if len(e.name) != len(name) || !equalFoldBytes(name, e.name) {
		return tagInfo{}
	}
	return e.info
}

// pendingLink is a link whose href is resolved once the base is known.
type pendingLink struct {
	href, text, rel, tag, hreflang string
}

// statePool recycles the buffers of ParseBytes between documents, so that
// a document costs its results, not its scratch space.
var statePool = sync.Pool{New: func() any { return new(htmlState) }}

// release resets s, keeping its buffers unless they grew huge, and puts it
// back in the pool.
func (s *htmlState) release() {
	if cap(s.text) > 4<<20 {
		s.text = nil
	}
	*s = htmlState{
		text: s.text[:0], title: s.title[:0], anchor: s.anchor[:0],
		hidden: s.hidden[:0], links: clear0(s.links),
	}
	statePool.Put(s)
}

func clear0(l []pendingLink) []pendingLink {
	if cap(l) > 1<<16 {
		return nil
	}
	clear(l)
	return l[:0]
}

// htmlState is the per-document state of ParseBytes.
type htmlState struct {
	reader     bytes.Reader
	text       []byte
	title      []byte
	anchor     []byte
	inAnchor   bool
	anchorLink int // index in links of the open anchor
	inTitle    bool
	titleDone  bool
	hidden     []uint8 // stack of open invisible elements, by tag id
	links      []pendingLink
	base       string
	hasBase    bool
	lang       string
	metaLang   string
	doc        *Document
	maxLinks   int
	maxText    int
	scripting  bool
}

// ParseBytes parses body as an HTML page at pageURL. It never fails: broken
// HTML yields what a browser would show. With a nil pageURL no links are
// kept. The Document does not share memory with body.
func (p *HTML) ParseBytes(body []byte, pageURL *url.URL) *Document {
	s := statePool.Get().(*htmlState)
	defer s.release()
	s.doc = &Document{URL: pageURL, Base: pageURL}
	s.maxLinks, s.maxText, s.scripting = p.MaxLinks, p.MaxText, p.Scripting
	if s.maxLinks <= 0 {
		s.maxLinks = DefaultMaxLinks
	}
	if s.maxText <= 0 {
		s.maxText = 1 << 20
	}
	s.reader.Reset(body)
	z := xhtml.NewTokenizer(&s.reader)
	for {
		tt := z.Next()
		switch tt {
		case xhtml.ErrorToken:
			s.finish()
			return s.doc
		case xhtml.TextToken:
			if len(s.hidden) > 0 && !s.inTitle {
				continue
			}
			// The raw bytes of a text token are its text; only entities
			// need Text's decoding (its newline conversion is moot once
			// whitespace is collapsed). Skipping it saves two passes.
			t := z.Raw()
			var ok bool
			if s.inTitle {
				if !s.titleDone {
					if s.title, ok = appendRawText(s.title, t, 1<<12); !ok {
						s.title = appendCollapsed(s.title, z.Text(), 1<<12)
					}
				}
				continue
			}
			if allSpace(t) {
				// Whitespace between tags, the most common text token.
				s.space()
				continue
			}
			if s.text, ok = appendRawText(s.text, t, s.maxText); !ok {
				t = z.Text()
				s.text = appendCollapsed(s.text, t, s.maxText)
			}
			if len(s.text) >= s.maxText-utf8.UTFMax {
				s.doc.Truncated = true
			}
			if s.inAnchor {
				s.anchor = appendCollapsed(s.anchor, t, 1<<12)
			}
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			if s.startTag(z.Raw(), tt == xhtml.SelfClosingTagToken) == tagNoscript && !s.scripting {
				// With scripting disabled the HTML tree builder keeps
				// the tokenizer out of raw text mode for <noscript>
				// (HTML §13.2.6.4.4 and .7); x/net/html's tokenizer
				// leaves that decision to its caller.
				z.NextIsNotRawText()
			}
		case xhtml.EndTagToken:
			s.endTag(z.Raw())
		}
	}
}

// startTag handles a start tag and returns the id of its element.
func (s *htmlState) startTag(raw []byte, selfClosing bool) uint8 {
	id, flags, rest := tagName(raw)
	switch id {
	case tagA:
		s.closeAnchor()
		a := scanAttrs(rest, "href", "rel")
		href, ok := linkHref(a.val[0], a.ok&1 != 0)
		if !ok {
			return id
		}
		s.inAnchor = s.addLink(pendingLink{href: href, rel: lowerAttr(a.val[1]), tag: "a"})
		s.anchorLink = len(s.links) - 1 // links inside the anchor (area, iframe) come after it
		s.anchor = s.anchor[:0]
	case tagArea:
		a := scanAttrs(rest, "href", "rel", "alt")
		if href, ok := linkHref(a.val[0], a.ok&1 != 0); ok {
			s.addLink(pendingLink{href: href, rel: lowerAttr(a.val[1]), text: collapse(unescapeAttr(a.val[2])), tag: "area"})
		}
	case tagLink:
		a := scanAttrs(rest, "rel", "href", "hreflang")
		rel := lowerAttr(a.val[0])
		if linkRel(rel) {
			if href, ok := linkHref(a.val[1], a.ok&2 != 0); ok {
				s.addLink(pendingLink{href: href, rel: rel, tag: "link", hreflang: strings.TrimSpace(unescapeAttr(a.val[2]))})
			}
		}
	case tagIframe, tagFrame:
		a := scanAttrs(rest, "src", "title")
		if src, ok := linkHref(a.val[0], a.ok&1 != 0); ok {
			tag := "iframe"
			if id == tagFrame {
				tag = "frame"
			}
			s.addLink(pendingLink{href: src, text: collapse(unescapeAttr(a.val[1])), tag: tag})
		}
	case tagImg:
		if s.inAnchor {
			if alt, ok := attr(rest, "alt"); ok {
				s.anchor = appendCollapsed(s.anchor, []byte(alt), 1<<12)
				s.anchor = append(s.anchor, ' ')
			}
		}
	case tagMeta:
		s.meta(rest)
	case tagBase:
		if href, ok := attr(rest, "href"); ok && !s.hasBase {
			s.base, s.hasBase = href, true
		}
	case tagHTML:
		if lang, ok := attr(rest, "lang"); ok && s.lang == "" {
			s.lang = strings.TrimSpace(lang)
		}
	case tagTitle:
		if !selfClosing {
			s.inTitle = true // a title is never visible text, but only the first is the title
		}
	}
	if selfClosing {
		if flags&tagBlock != 0 {
			s.space()
		}
		return id
	}
	if flags&tagHidden != 0 && (id != tagNoscript || s.scripting) {
		if id != tagHead || len(s.hidden) == 0 {
			s.hidden = append(s.hidden, id)
		}
		if len(s.hidden) > 64 {
			s.hidden = s.hidden[1:]
		}
	} else if id == tagBody && len(s.hidden) > 0 && s.hidden[0] == tagHead {
		s.hidden = s.hidden[:0] // <body> ends an unclosed <head>
	}
	if flags&tagBlock != 0 {
		s.space()
	}
	return id
}

// linkRel reports whether a <link> with the lowercase rel leads to a page
// a crawler wants: canonical, alternate (translations with hreflang,
// feeds) and the pagination links next and prev (also spelled previous),
// which some paginated listings are reachable by alone.
func linkRel(rel string) bool {
	return hasToken(rel, "canonical") || hasToken(rel, "alternate") ||
		hasToken(rel, "next") || hasToken(rel, "prev") || hasToken(rel, "previous")
}

func (s *htmlState) endTag(raw []byte) {
	id, flags, _ := tagName(raw)
	switch id {
	case tagA:
		s.closeAnchor()
	case tagTitle:
		if s.inTitle {
			s.inTitle, s.titleDone = false, s.titleDone || len(s.title) > 0
		}
	}
	// Close the innermost matching invisible element, and any opened after
	// it (unclosed tags inside it).
	for i := len(s.hidden) - 1; i >= 0 && id != tagOther; i-- {
		if s.hidden[i] == id {
			s.hidden = s.hidden[:i]
			break
		}
	}
	if flags&tagBlock != 0 {
		s.space()
	}
}

// allSpace reports whether t is only ASCII whitespace.
func allSpace(t []byte) bool {
	for _, c := range t {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// addLink collects a link, whose href linkHref accepted, unless MaxLinks is
// reached, and reports whether it did; a link past the cap is counted.
func (s *htmlState) addLink(l pendingLink) bool {
	if len(s.links) >= s.maxLinks {
		s.doc.Truncated = true
		s.doc.LinksDropped++
		return false
	}
	s.links = append(s.links, l)
	return true
}

// linkHref returns the href whose raw attribute value is raw, unescaped and
// trimmed, and whether Document keeps links with it: present, not empty,
// not a same-page fragment, not a skipped scheme. It allocates only for
// hrefs it keeps.
func linkHref(raw []byte, present bool) (string, bool) {
	if !present {
		return "", false
	}
	if plainAttr(raw) {
		h := bytes.TrimSpace(raw)
		if skipHref(h) {
			return "", false
		}
		return string(h), true
	}
	h := strings.TrimSpace(unescapeAttr(raw))
	return h, !skipHref(h)
}

// skipHref reports whether Document leaves out links with the trimmed href
// h: empty, a same-page fragment, or a skipped scheme.
func skipHref[T string | []byte](h T) bool {
	if len(h) == 0 || h[0] == '#' {
		return true
	}
	for i := 0; i < len(h) && i < 12; i++ {
		c := h[i]
		if c == ':' && i > 0 {
			for _, s := range skippedSchemes {
				if equalFoldBytes(h[:i], s) {
					return true
				}
			}
			return false
		}
		if c|0x20 < 'a' || c|0x20 > 'z' {
			return false
		}
	}
	return false
}

func (s *htmlState) space() {
	if n := len(s.text); n > 0 && s.text[n-1] != ' ' && n < s.maxText {
		s.text = append(s.text, ' ')
	}
	if s.inAnchor {
		if n := len(s.anchor); n > 0 && s.anchor[n-1] != ' ' {
			s.anchor = append(s.anchor, ' ')
		}
	}
}

func (s *htmlState) closeAnchor() {
	if !s.inAnchor {
		return
	}
	s.inAnchor = false
	s.links[s.anchorLink].text = string(bytes.TrimSpace(s.anchor))
}

func (s *htmlState) meta(rest []byte) {
	if name, ok := attr(rest, "name"); ok && strings.EqualFold(strings.TrimSpace(name), "robots") {
		content, _ := attr(rest, "content")
		robotsDirectives(content, s.doc)
		return
	}
	equiv, ok := attr(rest, "http-equiv")
	if !ok {
		return
	}
	content, _ := attr(rest, "content")
	switch strings.ToLower(strings.TrimSpace(equiv)) {
	case "refresh":
		if target := strings.TrimSpace(refreshURL(content)); !skipHref(target) {
			s.addLink(pendingLink{href: target, rel: "refresh", tag: "meta"})
		}
	case "content-language":
		if s.metaLang == "" {
			s.metaLang = firstToken(content)
		}
	case "x-robots-tag":
		robotsDirectives(content, s.doc)
	}
}

// finish resolves the links against the base and fills in the document.
func (s *htmlState) finish() {
	s.closeAnchor()
	d := s.doc
	if s.hasBase && d.URL != nil {
		if b, err := urlnorm.Resolve(d.URL, s.base); err == nil && (b.Scheme == "http" || b.Scheme == "https") {
			d.Base = b
		}
	}
	d.Title = string(bytes.TrimSpace(s.title))
	d.Text = string(bytes.TrimSpace(s.text))
	d.Lang = s.lang
	if d.Lang == "" {
		d.Lang = s.metaLang
	}
	d.Links = make([]Link, 0, len(s.links))
	for _, l := range s.links {
		href := strings.TrimSpace(l.href)
		if href == "" || href[0] == '#' || d.Base == nil {
			continue
		}
		u, err := urlnorm.Resolve(d.Base, href)
		if err != nil || skipScheme(u.Scheme) || u.Host == "" && (u.Scheme == "http" || u.Scheme == "https") {
			continue
		}
		d.Links = append(d.Links, Link{URL: u, Text: l.text, Rel: l.rel, Tag: l.tag, Hreflang: l.hreflang})
	}
}

// skippedSchemes are the schemes of the links Document leaves out.
var skippedSchemes = [...]string{"javascript", "mailto", "data", "tel", "vbscript"}

func skipScheme(scheme string) bool {
	for _, s := range skippedSchemes {
		if scheme == s {
			return true
		}
	}
	return false
}

// robotsDirectives applies a meta robots / X-Robots-Tag value to d. Values
// for a named user agent ("googlebot: noindex") are ignored.
func robotsDirectives(v string, d *Document) {
	for _, f := range strings.Split(v, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if strings.Contains(f, ":") {
			continue
		}
		switch f {
		case "noindex":
			d.NoIndex = true
		case "nofollow":
			d.NoFollow = true
		case "none":
			d.NoIndex, d.NoFollow = true, true
		}
	}
}

// refreshURL extracts the URL of a meta refresh content ("5; url=/next").
func refreshURL(content string) string {
	_, after, ok := strings.Cut(content, ";")
	if !ok {
		if _, after, ok = strings.Cut(content, ","); !ok {
			return ""
		}
	}
	after = strings.TrimSpace(after)
	if len(after) >= 3 && strings.EqualFold(after[:3], "url") {
		rest := strings.TrimSpace(after[3:])
		if strings.HasPrefix(rest, "=") {
			after = strings.TrimSpace(rest[1:])
		}
	}
	if len(after) > 0 && (after[0] == '"' || after[0] == '\'') {
		q := after[0]
		after = after[1:]
		if i := strings.IndexByte(after, q); i >= 0 {
			after = after[:i]
		}
	}
	return after
}

func firstToken(v string) string {
	v, _, _ = strings.Cut(v, ",")
	return strings.TrimSpace(v)
}

// hasToken reports whether the space-separated list contains tok.
func hasToken(list, tok string) bool {
	for list != "" {
		i := 0
		for i < len(list) && isSpace(list[i]) {
			i++
		}
		j := i
		for j < len(list) && !isSpace(list[j]) {
			j++
		}
		if list[i:j] == tok {
			return true
		}
		list = list[j:]
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// textOrdinary marks the bytes appendCollapsed copies as they are: all but
// whitespace, NUL and 0xC2 (the first byte of U+00A0).
var textOrdinary = func() (t [256]bool) {
	for c := range t {
		t[c] = c > ' ' && c != 0xc2
	}
	return t
}()

// appendCollapsed appends t with runs of whitespace (including U+00A0)
// collapsed to one space and NUL dropped, up to max bytes in total, never
// ending inside a UTF-8 sequence; no space is appended at the start of dst
// or after a space. Collapsing never lengthens text, so when all of t fits
// it is copied 8 bytes at a time straight into dst, which is grown once;
// else appendCollapsedMax, the byte-run version, cuts it at max.
func appendCollapsed(dst, t []byte, max int) []byte {
	dst, _ = collapseInto(dst, t, max, false)
	return dst
}

// appendRawText is appendCollapsed for the raw bytes of a text token: it
// reports false, with dst as it was, at the first '&', whose entity only
// the tokenizer's Text decodes. One pass instead of a search for '&'
// and then the copy.
func appendRawText(dst, t []byte, max int) ([]byte, bool) {
	return collapseInto(dst, t, max, true)
}

func collapseInto(dst, t []byte, max int, stopAmp bool) ([]byte, bool) {
	if len(dst)+len(t) > max {
		if stopAmp && bytes.IndexByte(t, '&') >= 0 {
			return dst, false
		}
		return appendCollapsedMax(dst, t, max), true
	}
	n := len(dst)
	out := slices.Grow(dst, len(t)+8) // 8 bytes of room for whole-word stores
	out = out[:cap(out)]
	space := n == 0 || out[n-1] == ' '
	for i := 0; i < len(t); {
		for i+8 <= len(t) {
			v := binary.LittleEndian.Uint64(t[i:])
			// The word goes to out whole; only its collapsed prefix counts.
			binary.LittleEndian.PutUint64(out[n:], v)
			ctl := zeroBytes(v & (0xe0 * lsb)) // bytes < 0x20
			c2 := zeroBytes(v ^ (0xc2 * lsb))
			sp := zeroBytes(v ^ (0x20 * lsb))
			prev := sp << 8
			if space {
				prev |= 0x80
			}
			bad := ctl | c2 | (sp & prev)
			if stopAmp {
				bad |= zeroBytes(v ^ ('&' * lsb))
			}
			if bad != 0 {
				k := bits.TrailingZeros64(bad) / 8
				if k > 0 {
					n, i = n+k, i+k
					space = out[n-1] == ' '
				}
				break
			}
			n, i = n+8, i+8
			space = sp>>63 != 0
		}
		// Byte by byte up to and including the next ordinary byte: the
		// tail, and the bytes the words above stopped at.
		for i < len(t) {
			c := t[i]
			i++
			switch {
			case c == '&' && stopAmp:
				return dst, false
			case textOrdinary[c]:
				out[n] = c
				n++
				space = false
			case c == 0:
			case c == 0xc2 && i < len(t) && t[i] == 0xa0, isSpace(c):
				if c == 0xc2 {
					i++
				}
				if !space {
					out[n] = ' '
					n++
					space = true
				}
				continue
			default: // a lone 0xC2, or a control character: not whitespace
				out[n] = c
				n++
				space = false
			}
			if c != 0 {
				break
			}
		}
	}
	return out[:n], true
}

// appendCollapsedMax is appendCollapsed for text that may not fit in max.
// Text that is already collapsed (words separated by single spaces) is
// copied in runs, not byte by byte.
func appendCollapsedMax(dst, t []byte, max int) []byte {
	space := len(dst) > 0 && dst[len(dst)-1] == ' '
	for i := 0; i < len(t); {
		j := i
		if i < len(t) && textOrdinary[t[i]] {
			j = i + 1 + collapsedPrefix(t[i+1:], false)
		}
		for j < len(t) {
			if textOrdinary[t[j]] {
				j++
			} else if t[j] == ' ' && j > i && t[j-1] != ' ' && j+1 < len(t) && textOrdinary[t[j+1]] {
				j += 2 // a single space between words stays as it is
			} else {
				break
			}
		}
		if j > i {
			if len(dst)+j-i > max {
				return trimPartialRune(append(dst, t[i:i+max-len(dst)]...))
			}
			dst = append(dst, t[i:j]...)
			space = dst[len(dst)-1] == ' '
			i = j
			continue
		}
		c := t[i]
		i++
		switch {
		case c == 0:
		case c == 0xc2 && (i >= len(t) || t[i] != 0xa0), c != 0xc2 && !isSpace(c):
			// a lone 0xC2, or a control character: not whitespace
			if len(dst) >= max {
				return dst
			}
			dst = append(dst, c)
			space = false
		default: // whitespace or U+00A0: skip the whole run
			if c == 0xc2 {
				i++
			}
			for i < len(t) {
				if isSpace(t[i]) || t[i] == 0 {
					i++
				} else if t[i] == 0xc2 && i+1 < len(t) && t[i+1] == 0xa0 {
					i += 2
				} else {
					break
				}
			}
			if !space && len(dst) > 0 {
				if len(dst) >= max {
					return dst
				}
				dst = append(dst, ' ')
				space = true
			}
		}
	}
	return dst
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// zeroBytes returns the high bit of every zero byte of v (exactly, without
// the false positives of the shorter formula).
func zeroBytes(v uint64) uint64 {
	return ^(((v & ^uint64(msb)) + ^uint64(msb)) | v) & msb
}

// collapsedPrefix returns the length of the prefix of t, 8 bytes at a time,
// that is already collapsed text: no whitespace but single spaces, no NUL,
// no 0xC2. prevSpace says whether the byte before t is a space.
func collapsedPrefix(t []byte, prevSpace bool) int {
	n := 0
	for len(t)-n >= 8 {
		v := binary.LittleEndian.Uint64(t[n:])
		ctl := zeroBytes(v & (0xe0 * lsb)) // bytes < 0x20
		c2 := zeroBytes(v ^ (0xc2 * lsb))
		sp := zeroBytes(v ^ (0x20 * lsb))
		prev := sp << 8
		if prevSpace {
			prev |= 0x80
		}
		if bad := ctl | c2 | (sp & prev); bad != 0 {
			return n + bits.TrailingZeros64(bad)/8
		}
		prevSpace = sp>>63 != 0
		n += 8
	}
	return n
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

func collapse(s string) string {
	if s == "" {
		return ""
	}
	return string(bytes.TrimSpace(appendCollapsed(nil, []byte(s), len(s)+1)))
}

// tagName returns the id and the flags of the tag whose raw bytes are raw
// ("<A HREF=x>" → tagA), and the bytes after the name. Elements the parser
// does not act on have id tagOther.
func tagName(raw []byte) (id, flags uint8, rest []byte) {
	i := 1
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	j := i
	for j < len(raw) && !nameEnd[raw[j]] {
		j++
	}
	t := lookupTag(raw[i:j])
	return t.id, t.flags, raw[j:]
}

// nameEnd marks the bytes that end a tag or attribute name: whitespace,
// "/" and ">".
var nameEnd = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r\f/>") {
		t[c] = true
	}
	return t
}()

// attr returns the value of the first attribute named key (lowercase) in
// the attribute bytes of a raw start tag, entity-unescaped, following the
// attribute rules of the HTML tokenizer: names end at whitespace, "/", ">"
// or "="; values are double-quoted, single-quoted or unquoted.
func attr(rest []byte, key string) (string, bool) {
	for i := 0; i < len(rest); {
		var k, val []byte
		if k, val, i = nextAttr(rest, i); k == nil {
			break
		}
		if equalFoldBytes(k, key) {
			return unescapeAttr(val), true
		}
	}
	return "", false
}

// nextAttr parses the attribute starting at or after rest[i], returning
// its name, its raw value and where the next one starts; a nil name when
// there is none.
func nextAttr(rest []byte, i int) (k, val []byte, next int) {
	for i < len(rest) && (isSpace(rest[i]) || rest[i] == '/') {
		i++
	}
	if i >= len(rest) || rest[i] == '>' {
		return nil, nil, len(rest)
	}
	ks := i
	i++ // a name may start with "="
	for i < len(rest) && !nameEnd[rest[i]] && rest[i] != '=' {
		i++
	}
	k = rest[ks:i]
	for i < len(rest) && isSpace(rest[i]) {
		i++
	}
	if i < len(rest) && rest[i] == '=' {
		i++
		for i < len(rest) && isSpace(rest[i]) {
			i++
		}
		if i < len(rest) && (rest[i] == '"' || rest[i] == '\'') {
			q := rest[i]
			i++
			vs := i
			if n := bytes.IndexByte(rest[i:], q); n >= 0 {
				i += n
			} else {
				i = len(rest)
			}
			val = rest[vs:i]
			i++
		} else {
			vs := i
			for i < len(rest) && !isSpace(rest[i]) && rest[i] != '>' {
				i++
			}
			val = rest[vs:i]
		}
	}
	return k, val, i
}

// unescapeAttr returns the attribute value v as the tokenizer gives it:
// NUL replaced, newlines normalized, entities decoded.
func unescapeAttr(v []byte) string {
	if plainAttr(v) {
		return string(v)
	}
	s := strings.ReplaceAll(string(v), "\x00", "\uFFFD")
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	return html.UnescapeString(s)
}

// plainAttr reports whether the attribute value v needs no unescaping.
func plainAttr(v []byte) bool {
	return bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, 0) < 0 && bytes.IndexByte(v, '\r') < 0
}

// lowerAttr returns the attribute value v unescaped and in lower case,
// allocating only if v is not empty.
func lowerAttr(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	return strings.ToLower(unescapeAttr(v))
}

// attrVals holds what scanAttrs found: the raw (still escaped) value of
// each key asked for, by position, and in bit i of ok whether key i is
// present.
type attrVals struct {
	val [3][]byte
	ok  uint8
}

// scanAttrs finds, in one pass over the attribute bytes of a raw start tag,
// the first attribute named by each of up to three lowercase keys, parsing
// as attr does. The values alias rest.
func scanAttrs(rest []byte, keys ...string) (a attrVals) {
	all := uint8(1)<<len(keys) - 1
	i := 0
	for i < len(rest) && a.ok != all {
		var k, val []byte
		k, val, i = nextAttr(rest, i)
		if k == nil {
			break
		}
		for n, key := range keys {
			if a.ok&(1<<n) == 0 && equalFoldBytes(k, key) {
				a.val[n], a.ok = val, a.ok|1<<n
				break
			}
		}
	}
	return a
}

// equalFoldBytes reports whether b equals the lowercase s, ASCII case
// folded.
func equalFoldBytes[T string | []byte](b T, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
