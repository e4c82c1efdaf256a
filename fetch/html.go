package fetch

import (
	"bytes"
	"html"
	"net/url"
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
// Input is expected in UTF-8, as HTTP delivers it; invalid bytes are kept
// as U+FFFD. Parsing costs O(len(body)); on the testdata pages it runs at
// well over 50 MB/s per core (see BenchmarkHTML).
type HTML struct {
	// MaxLinks caps the links kept per page. Default 10000.
	MaxLinks int
	// MaxText caps Document.Text, in bytes. Default 1 MiB.
	MaxText int
}

var _ Parser = (*HTML)(nil)

// Parse implements Parser: it parses resp.Body as HTML at resp.URL, taking
// X-Robots-Tag and Content-Language from resp.Header.
func (p *HTML) Parse(resp *Response) (*Document, error) {
	if resp.URL == nil {
		return nil, &Error{Op: "parse", Kind: KindBadURL, Err: ErrScheme}
	}
	d := p.ParseBytes(resp.Body, resp.URL)
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

// invisible reports elements whose content is not visible text. All but
// template and head are raw-text elements, which the tokenizer ends at their
// end tag, so an unclosed one cannot hide the rest of the page.
func invisible(name string) bool {
	switch name {
	case "script", "style", "template", "noscript", "noembed", "noframes", "iframe", "xmp", "head":
		return true
	}
	return false
}

// blockTags separate words: their start and end tags count as whitespace.
func block(name string) bool {
	switch name {
	case "p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "tr", "td", "th", "table", "thead", "tbody",
		"tfoot", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "section", "article", "header", "footer", "nav",
		"aside", "main", "blockquote", "pre", "form", "fieldset", "legend", "figure", "figcaption",
		"address", "option", "select", "textarea", "button", "label", "caption", "body", "title", "img",
		"input", "center", "details", "summary", "dialog", "frameset", "frame", "area", "map", "video", "audio":
		return true
	}
	return false
}

// pendingLink is a link whose href is resolved once the base is known.
type pendingLink struct {
	href, text, rel, tag string
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
	reader    bytes.Reader
	text      []byte
	title     []byte
	anchor    []byte
	inAnchor  bool
	inTitle   bool
	titleDone bool
	hidden    []string // stack of open invisible elements
	links     []pendingLink
	base      string
	hasBase   bool
	lang      string
	metaLang  string
	doc       *Document
	maxLinks  int
	maxText   int
}

// ParseBytes parses body as an HTML page at pageURL. It never fails: broken
// HTML yields what a browser would show.
func (p *HTML) ParseBytes(body []byte, pageURL *url.URL) *Document {
	s := statePool.Get().(*htmlState)
	defer s.release()
	s.doc = &Document{URL: pageURL, Base: pageURL}
	s.maxLinks, s.maxText = p.MaxLinks, p.MaxText
	if s.maxLinks <= 0 {
		s.maxLinks = 10000
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
			t := z.Text()
			if s.inTitle {
				if !s.titleDone {
					s.title = appendCollapsed(s.title, t, 1<<12)
				}
				continue
			}
			s.text = appendCollapsed(s.text, t, s.maxText)
			if len(s.text) >= s.maxText-utf8.UTFMax {
				s.doc.Truncated = true
			}
			if s.inAnchor {
				s.anchor = appendCollapsed(s.anchor, t, 1<<12)
			}
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			s.startTag(z.Raw(), tt == xhtml.SelfClosingTagToken)
		case xhtml.EndTagToken:
			s.endTag(z.Raw())
		}
	}
}

func (s *htmlState) startTag(raw []byte, selfClosing bool) {
	var nb [12]byte
	name, rest := tagName(raw, nb[:0])
	switch name {
	case "a":
		s.closeAnchor()
		href, ok := attr(rest, "href")
		if !ok {
			return
		}
		rel, _ := attr(rest, "rel")
		s.links = append(s.links, pendingLink{href: href, rel: strings.ToLower(rel), tag: "a"})
		s.inAnchor, s.anchor = true, s.anchor[:0]
	case "area":
		if href, ok := attr(rest, "href"); ok {
			rel, _ := attr(rest, "rel")
			alt, _ := attr(rest, "alt")
			s.links = append(s.links, pendingLink{href: href, rel: strings.ToLower(rel), text: collapse(alt), tag: "area"})
		}
	case "link":
		rel, _ := attr(rest, "rel")
		rel = strings.ToLower(rel)
		if hasToken(rel, "canonical") || hasToken(rel, "alternate") {
			if href, ok := attr(rest, "href"); ok {
				s.links = append(s.links, pendingLink{href: href, rel: rel, tag: "link"})
			}
		}
	case "iframe", "frame":
		if src, ok := attr(rest, "src"); ok {
			title, _ := attr(rest, "title")
			s.links = append(s.links, pendingLink{href: src, text: collapse(title), tag: name})
		}
	case "img":
		if s.inAnchor {
			if alt, ok := attr(rest, "alt"); ok {
				s.anchor = appendCollapsed(s.anchor, []byte(alt), 1<<12)
				s.anchor = append(s.anchor, ' ')
			}
		}
	case "meta":
		s.meta(rest)
	case "base":
		if href, ok := attr(rest, "href"); ok && !s.hasBase {
			s.base, s.hasBase = href, true
		}
	case "html":
		if lang, ok := attr(rest, "lang"); ok && s.lang == "" {
			s.lang = strings.TrimSpace(lang)
		}
	case "title":
		if !selfClosing {
			s.inTitle = true // a title is never visible text, but only the first is the title
		}
	}
	if selfClosing {
		if block(name) {
			s.space()
		}
		return
	}
	if invisible(name) {
		if name != "head" || len(s.hidden) == 0 {
			s.hidden = append(s.hidden, name)
		}
		if len(s.hidden) > 64 {
			s.hidden = s.hidden[1:]
		}
	} else if name == "body" && len(s.hidden) > 0 && s.hidden[0] == "head" {
		s.hidden = s.hidden[:0] // <body> ends an unclosed <head>
	}
	if block(name) {
		s.space()
	}
}

func (s *htmlState) endTag(raw []byte) {
	var nb [12]byte
	name, _ := tagName(raw, nb[:0])
	switch name {
	case "a":
		s.closeAnchor()
	case "title":
		if s.inTitle {
			s.inTitle, s.titleDone = false, s.titleDone || len(s.title) > 0
		}
	}
	// Close the innermost matching invisible element, and any opened after
	// it (unclosed tags inside it).
	for i := len(s.hidden) - 1; i >= 0; i-- {
		if s.hidden[i] == name {
			s.hidden = s.hidden[:i]
			break
		}
	}
	if block(name) {
		s.space()
	}
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
	s.links[len(s.links)-1].text = string(bytes.TrimSpace(s.anchor))
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
		if target := refreshURL(content); target != "" {
			s.links = append(s.links, pendingLink{href: target, rel: "refresh", tag: "meta"})
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
	if len(s.links) > s.maxLinks {
		s.links, d.Truncated = s.links[:s.maxLinks], true
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
		d.Links = append(d.Links, Link{URL: u, Text: l.text, Rel: l.rel, Tag: l.tag})
	}
}

func skipScheme(scheme string) bool {
	switch scheme {
	case "javascript", "mailto", "data", "tel", "vbscript":
		return true
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

// textSpecial marks the bytes appendCollapsed must look at one by one:
// whitespace, NUL, and 0xC2 (the first byte of U+00A0).
var textSpecial = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, '\f': true, 0: true, 0xc2: true}

// appendCollapsed appends t with runs of whitespace (including U+00A0)
// collapsed to one space and NUL dropped, up to max bytes in total, never
// ending inside a UTF-8 sequence. Runs of ordinary bytes are copied whole.
func appendCollapsed(dst, t []byte, max int) []byte {
	space := len(dst) > 0 && dst[len(dst)-1] == ' '
	for i := 0; i < len(t); {
		j := i
		for j < len(t) && !textSpecial[t[j]] {
			j++
		}
		if j > i {
			if len(dst)+j-i > max {
				return trimPartialRune(append(dst, t[i:i+max-len(dst)]...))
			}
			dst = append(dst, t[i:j]...)
			space = false
			i = j
			continue
		}
		c := t[i]
		i++
		switch {
		case c == 0:
		case c == 0xc2 && (i >= len(t) || t[i] != 0xa0):
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

// tagName returns the lowercase name of the tag whose raw bytes are raw
// ("<A HREF=x>" → "a"), using buf as scratch, and the bytes after the name.
// Names longer than buf are returned as "" (no tag of interest is that
// long). The string shares no memory with raw; the compiler does not
// allocate it when it is only compared.
func tagName(raw []byte, buf []byte) (string, []byte) {
	i := 1
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	j := i
	for j < len(raw) && !isSpace(raw[j]) && raw[j] != '/' && raw[j] != '>' {
		j++
	}
	if j-i > cap(buf) {
		return "", raw[j:]
	}
	for _, c := range raw[i:j] {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return internTag(buf), raw[j:]
}

// internTag returns a constant string for the tag names the parser looks
// at, so that no string is allocated per tag.
func internTag(b []byte) string {
	switch string(b) {
	case "a":
		return "a"
	case "area":
		return "area"
	case "link":
		return "link"
	case "iframe":
		return "iframe"
	case "frame":
		return "frame"
	case "img":
		return "img"
	case "meta":
		return "meta"
	case "base":
		return "base"
	case "html":
		return "html"
	case "head":
		return "head"
	case "body":
		return "body"
	case "title":
		return "title"
	case "script":
		return "script"
	case "style":
		return "style"
	case "template":
		return "template"
	case "noscript":
		return "noscript"
	case "noembed":
		return "noembed"
	case "noframes":
		return "noframes"
	case "xmp":
		return "xmp"
	}
	if block(string(b)) {
		return "p" // any block element: only the word break matters
	}
	return ""
}

// attr returns the value of the first attribute named key (lowercase) in
// the attribute bytes of a raw start tag, entity-unescaped, following the
// attribute rules of the HTML tokenizer: names end at whitespace, "/", ">"
// or "="; values are double-quoted, single-quoted or unquoted.
func attr(rest []byte, key string) (string, bool) {
	i := 0
	for i < len(rest) {
		for i < len(rest) && (isSpace(rest[i]) || rest[i] == '/') {
			i++
		}
		if i >= len(rest) || rest[i] == '>' {
			return "", false
		}
		ks := i
		i++ // a name may start with "="
		for i < len(rest) && !isSpace(rest[i]) && rest[i] != '/' && rest[i] != '>' && rest[i] != '=' {
			i++
		}
		k := rest[ks:i]
		for i < len(rest) && isSpace(rest[i]) {
			i++
		}
		var val []byte
		if i < len(rest) && rest[i] == '=' {
			i++
			for i < len(rest) && isSpace(rest[i]) {
				i++
			}
			if i < len(rest) && (rest[i] == '"' || rest[i] == '\'') {
				q := rest[i]
				i++
				vs := i
				for i < len(rest) && rest[i] != q {
					i++
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
		if equalFoldBytes(k, key) {
			return unescapeAttr(val), true
		}
	}
	return "", false
}

func unescapeAttr(v []byte) string {
	if bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, 0) < 0 && bytes.IndexByte(v, '\r') < 0 {
		return string(v)
	}
	s := strings.ReplaceAll(string(v), "\x00", "\uFFFD")
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	return html.UnescapeString(s)
}

func equalFoldBytes(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
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
