package index

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Analyzer turns text into index terms: Unicode word segmentation (the
// letter, number and ideograph rules of UAX #29), lowercasing, and optional
// stop-word removal. The zero value is a usable analyzer without stop words.
//
// An Analyzer is immutable after construction and safe for concurrent use.
// Analysis costs O(len(text)); terms that need no lowercasing are returned as
// substrings of the input (no copy), so they keep the input alive.
type Analyzer struct {
	// Stop, when non-nil, holds terms (already lowercase) that are dropped.
	Stop map[string]struct{}
	// StopByLang holds stop words by language (a lowercase ISO 639-1
	// code, as StopWords): a document whose Lang (its primary subtag)
	// has a set here loses those words instead of Stop's. A query loses
	// the words of Stop and of every set here, so that a word dropped
	// from some documents never makes a query miss them.
	StopByLang map[string]map[string]struct{}
	// MaxTermLen drops longer terms (in bytes); 0 means 64. Long tokens are
	// almost always junk (base64, hashes) and bloat the dictionary.
	MaxTermLen int
}

// EnglishStopWords is Lucene's default English stop set (33 words). Pass it
// as Analyzer.Stop to drop these words.
var EnglishStopWords = stopSet("a", "an", "and", "are", "as", "at", "be", "but", "by",
	"for", "if", "in", "into", "is", "it", "no", "not", "of", "on", "or", "such",
	"that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
	"will", "with")

func stopSet(words ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}

// StopWords are stop-word sets by language for Analyzer.StopByLang: the
// articles, pronouns, prepositions, conjunctions and auxiliaries of
// English (EnglishStopWords), German, French, Spanish, Italian, Dutch and
// Portuguese, lowercase.
var StopWords = map[string]map[string]struct{}{
	"en": EnglishStopWords,
	"de": stopSet("der", "die", "das", "den", "dem", "des", "ein", "eine", "einer", "eines", "einem", "einen",
		"und", "oder", "aber", "ist", "sind", "war", "wird", "werden", "hat", "haben", "nicht", "mit", "von",
		"zu", "zum", "zur", "im", "in", "auf", "an", "am", "für", "aus", "bei", "nach", "über", "als", "auch",
		"es", "sie", "er", "wir", "ich", "sich", "dass", "wie", "so", "noch", "nur"),
	"fr": stopSet("le", "la", "les", "l", "un", "une", "des", "du", "de", "d", "et", "ou", "mais", "est", "sont",
		"été", "être", "a", "ont", "au", "aux", "en", "dans", "par", "pour", "sur", "avec", "sans", "ne", "pas",
		"plus", "que", "qui", "ce", "cette", "ces", "il", "elle", "ils", "elles", "nous", "vous", "je", "se",
		"son", "sa", "ses", "leur", "leurs", "y"),
	"es": stopSet("el", "la", "los", "las", "un", "una", "unos", "unas", "y", "o", "pero", "es", "son", "fue",
		"ser", "está", "de", "del", "al", "a", "en", "por", "para", "con", "sin", "sobre", "no", "que", "se",
		"lo", "le", "les", "su", "sus", "como", "más", "este", "esta", "estos", "estas", "ese", "esa", "él",
		"ella", "ellos", "nosotros", "yo", "ha", "han"),
	"it": stopSet("il", "lo", "la", "i", "gli", "le", "l", "un", "uno", "una", "e", "o", "ma", "è", "sono",
		"era", "essere", "di", "del", "della", "dei", "delle", "a", "al", "alla", "da", "in", "nel", "nella",
		"con", "su", "per", "tra", "fra", "non", "che", "si", "ci", "come", "più", "questo", "questa", "suo",
		"sua", "lui", "lei", "loro", "noi", "io", "ha", "hanno"),
	"nl": stopSet("de", "het", "een", "en", "of", "maar", "is", "zijn", "was", "waren", "wordt", "worden",
		"heeft", "hebben", "niet", "met", "van", "te", "tot", "in", "op", "aan", "voor", "uit", "bij", "naar",
		"over", "als", "ook", "dat", "die", "dit", "deze", "er", "hij", "zij", "ze", "wij", "we", "ik", "zich",
		"om", "door", "nog", "dan"),
	"pt": stopSet("o", "a", "os", "as", "um", "uma", "uns", "umas", "e", "ou", "mas", "é", "são", "foi",
		"ser", "está", "de", "do", "da", "dos", "das", "em", "no", "na", "nos", "nas", "por", "para", "com",
		"sem", "sobre", "não", "que", "se", "seu", "sua", "seus", "suas", "como", "mais", "este", "esta",
		"ele", "ela", "eles", "nós", "eu", "ao", "aos"),
}

// Terms appends the terms of text to dst and returns it, in text order with
// repetitions (term frequency is the number of occurrences), dropping the
// words of Stop.
func (a *Analyzer) Terms(dst []string, text string) []string {
	var stop map[string]struct{}
	if a != nil {
		stop = a.Stop
	}
	return a.terms(dst, text, func(t string) bool { _, ok := stop[t]; return ok })
}

// DocTerms is Terms for the text of a document in language lang (a BCP 47
// tag such as "de" or "pt-BR", "" if unknown): it drops the words of
// StopByLang for lang's primary subtag when there is such a set, those of
// Stop otherwise.
func (a *Analyzer) DocTerms(dst []string, text, lang string) []string {
	if set := a.stopFor(lang); set != nil {
		return a.terms(dst, text, func(t string) bool { _, ok := set[t]; return ok })
	}
	return a.Terms(dst, text)
}

// QueryTerms is Terms for a query: it drops the words of Stop and of every
// set of StopByLang, since any of them may be missing from the documents
// the query should find.
func (a *Analyzer) QueryTerms(dst []string, text string) []string {
	if a == nil || len(a.StopByLang) == 0 {
		return a.Terms(dst, text)
	}
	return a.terms(dst, text, func(t string) bool {
		if _, ok := a.Stop[t]; ok {
			return true
		}
		for _, set := range a.StopByLang {
			if _, ok := set[t]; ok {
				return true
			}
		}
		return false
	})
}

// stopFor returns the StopByLang set of lang's primary subtag, or nil.
func (a *Analyzer) stopFor(lang string) map[string]struct{} {
	if a == nil || len(a.StopByLang) == 0 || lang == "" {
		return nil
	}
	if i := strings.IndexAny(lang, "-_"); i >= 0 {
		lang = lang[:i]
	}
	return a.StopByLang[strings.ToLower(lang)]
}

func (a *Analyzer) terms(dst []string, text string, stop func(string) bool) []string {
	maxLen := 64
	if a != nil && a.MaxTermLen > 0 {
		maxLen = a.MaxTermLen
	}
	for i := 0; i < len(text); {
		start, end, ok := nextWord(text, i)
		if !ok {
			break
		}
		i = end
		if end-start > maxLen {
			continue
		}
		t := lower(text[start:end])
		if stop(t) {
			continue
		}
		dst = append(dst, t)
	}
	return dst
}

// termCounter counts the terms of one document at a time, reusing its
// buffers: the scratch of Shard.Add and TermIndex.Add.
type termCounter struct {
	tf    map[string]uint32
	terms []string
}

// count analyses the title and the text of d and returns its length in
// terms; tf then holds each distinct term's frequency. The terms are
// substrings of d: call release before keeping anything else.
func (c *termCounter) count(an *Analyzer, d Document) uint32 {
	c.terms = an.DocTerms(an.DocTerms(c.terms[:0], d.Title, d.Lang), d.Text, d.Lang)
	if c.tf == nil {
		c.tf = make(map[string]uint32)
	}
	if len(c.tf) > 0 { // release was not called
		clear(c.tf)
	}
	for _, t := range c.terms {
		c.tf[t]++
	}
	return uint32(len(c.terms))
}

// release drops the references to the last document's text, which would
// otherwise stay alive (a page can be megabytes) until the next count.
func (c *termCounter) release() {
	clear(c.terms)
	clear(c.tf)
}

// wordClass is the subset of UAX #29 word-break properties the segmenter uses.
type wordClass uint8

const (
	wcOther        wordClass = iota
	wcLetter                 // ALetter (and Hebrew letters)
	wcNumeric                // Numeric
	wcKatakana               // Katakana: runs stay together (WB13)
	wcIdeo                   // ideographs, Hiragana, Thai...: one rune per word
	wcExtend                 // Extend, Format, ZWJ: attach to the previous rune (WB4)
	wcMidLetter              // MidLetter and MidNumLet (':', '·', '\'', '.', '’')
	wcMidNum                 // MidNum (',', ';')
	wcExtendNumLet           // ExtendNumLet ('_')
)

func classify(r rune) wordClass {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
			return wcLetter
		case '0' <= r && r <= '9':
			return wcNumeric
		case r == '\'' || r == '.' || r == ':':
			return wcMidLetter
		case r == ',' || r == ';':
			return wcMidNum
		case r == '_':
			return wcExtendNumLet
		}
		return wcOther
	}
	switch {
	case r == '\u2019' || r == '\u2018' || r == '\u00b7' || r == '\u2024' || r == '\ufe52' || r == '\uff07' || r == '\uff0e':
		return wcMidLetter
	case r == '\u200d' || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Cf, r):
		return wcExtend
	case unicode.Is(unicode.Katakana, r) || r == '\u30fc' || r == '\uff70':
		return wcKatakana
	case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Thai, r) ||
		unicode.Is(unicode.Lao, r) || unicode.Is(unicode.Khmer, r) || unicode.Is(unicode.Myanmar, r):
		return wcIdeo
	case unicode.IsLetter(r):
		return wcLetter
	case unicode.IsDigit(r):
		return wcNumeric
	case unicode.Is(unicode.Pc, r):
		return wcExtendNumLet
	}
	return wcOther
}

// nextWord finds the next word at or after byte offset i. Words are runs of
// letters and digits (WB5, WB8–WB10), keep inner punctuation between letters
// ("can't", "e.g") or digits ("3.14", "1,000") (WB6, WB7, WB11, WB12), join
// with '_' (WB13a/b), keep combining marks (WB4), and split ideographs into
// single runes as dictionary-free segmenters do.
func nextWord(s string, i int) (start, end int, ok bool) {
	// Skip to the first rune that can start a word.
	var c wordClass
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		c = classify(r)
		if c == wcLetter || c == wcNumeric || c == wcKatakana || c == wcIdeo {
			break
		}
		i += n
	}
	if i >= len(s) {
		return 0, 0, false
	}
	start = i
	_, n := utf8.DecodeRuneInString(s[i:])
	i += n
	i = skipExtend(s, i)
	if c == wcIdeo {
		return start, i, true
	}
	prev := c
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		cur := classify(r)
		switch {
		case (cur == wcLetter || cur == wcNumeric) && (prev == wcLetter || prev == wcNumeric || prev == wcExtendNumLet):
		case cur == wcKatakana && (prev == wcKatakana || prev == wcExtendNumLet):
		case cur == wcExtendNumLet && prev != wcOther:
		case cur == wcMidLetter || cur == wcMidNum:
			// Keep the separator only if the same class continues after it.
			j := skipExtend(s, i+n)
			if j >= len(s) {
				return start, i, true
			}
			r2, _ := utf8.DecodeRuneInString(s[j:])
			next := classify(r2)
			joins := (prev == wcLetter && next == wcLetter && cur == wcMidLetter) ||
				(prev == wcNumeric && next == wcNumeric && (cur == wcMidNum || r == '.' || r == '\'' || r == '\u2019'))
			if !joins {
				return start, i, true
			}
			i = j
			continue
		default:
			return start, i, true
		}
		prev = cur
		i = skipExtend(s, i+n)
	}
	return start, i, true
}

func skipExtend(s string, i int) int {
	for i < len(s) {
		if s[i] < utf8.RuneSelf {
			return i
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if classify(r) != wcExtend {
			return i
		}
		i += n
	}
	return i
}

// lower lowercases w, returning w itself when it is already lowercase ASCII.
func lower(w string) string {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return lowerSlow(w)
		}
	}
	return w
}

func lowerSlow(w string) string {
	b := make([]byte, 0, len(w))
	for _, r := range w {
		b = utf8.AppendRune(b, unicode.ToLower(r))
	}
	return string(b)
}
