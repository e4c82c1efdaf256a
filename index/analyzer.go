package index

import (
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

// Terms appends the terms of text to dst and returns it, in text order with
// repetitions (term frequency is the number of occurrences).
func (a *Analyzer) Terms(dst []string, text string) []string {
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
		if a != nil && a.Stop != nil {
			if _, stop := a.Stop[t]; stop {
				continue
			}
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
	c.terms = an.Terms(an.Terms(c.terms[:0], d.Title), d.Text)
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
