package lang

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"

	"github.com/crawlkit/crawlkit/fetch"
)

// DefaultMaxBytes is the default of Parser.MaxBytes.
const DefaultMaxBytes = 1024

// Detect returns the language of text as an ISO 639-1 code ("en", "de";
// the ISO 639-3 code for a language without one) and whether the guess is
// reliable: a clear winner among the 84 languages the detector knows. It
// returns "", false for text with no letters. Its cost is O(len(text))
// plus about 250 µs for comparing the text's trigrams with every language
// of its script (BenchmarkDetect); a Detector restricted to a few
// languages is faster. Safe for concurrent use.
func Detect(text string) (code string, reliable bool) {
	return (*Detector)(nil).Detect(text)
}

// Detector detects the language of text among a chosen set of languages:
// the ones a crawl's index has analyzers for, say. Restricting the set
// makes detection faster and keeps it from naming a neighbour language
// nobody indexes. A Detector is immutable and safe for concurrent use; a
// nil *Detector considers every language.
type Detector struct {
	opts whatlanggo.Options
}

// UnknownLanguageError is returned by NewDetector for a code the detector
// has no profile for.
type UnknownLanguageError struct {
	Code string
}

func (e *UnknownLanguageError) Error() string {
	return "lang: no language " + strconv.Quote(e.Code)
}

// NewDetector returns a Detector that chooses among the languages of the
// given ISO 639-1 or 639-3 codes, case-insensitive ("en", "deu"). Texts in
// a script none of them is written in get "", false.
func NewDetector(codes ...string) (*Detector, error) {
	d := &Detector{opts: whatlanggo.Options{Whitelist: make(map[whatlanggo.Lang]bool, len(codes))}}
	for _, c := range codes {
		l, ok := byCode[strings.ToLower(strings.TrimSpace(c))]
		if !ok {
			return nil, &UnknownLanguageError{Code: c}
		}
		d.opts.Whitelist[l] = true
	}
	return d, nil
}

// Detect is the package's Detect among d's languages.
func (d *Detector) Detect(text string) (code string, reliable bool) {
	var opts whatlanggo.Options
	if d != nil {
		opts = d.opts
	}
	info := whatlanggo.DetectWithOptions(text, opts)
	if info.Lang < 0 || info.Script == nil {
		return "", false
	}
	if d != nil && len(d.opts.Whitelist) > 0 && !d.opts.Whitelist[info.Lang] {
		// Scripts with one language (Han, Hangul...) are answered
		// without looking at the whitelist.
		return "", false
	}
	return codeOf(info.Lang), info.IsReliable()
}

// codes maps whatlanggo's languages to their shortest ISO 639 code, built
// once: whatlanggo's own Iso6391 builds a map on every call.
var codes = func() map[whatlanggo.Lang]string {
	m := make(map[whatlanggo.Lang]string, len(whatlanggo.Langs))
	for l := range whatlanggo.Langs {
		c := l.Iso6391()
		if c == "" {
			c = l.Iso6393()
		}
		m[l] = c
	}
	return m
}()

// byCode maps ISO 639-1 and 639-3 codes to whatlanggo's languages.
var byCode = func() map[string]whatlanggo.Lang {
	m := make(map[string]whatlanggo.Lang, 2*len(whatlanggo.Langs))
	for l := range whatlanggo.Langs {
		if c := l.Iso6391(); c != "" {
			m[c] = l
		}
		m[l.Iso6393()] = l
	}
	return m
}()

func codeOf(l whatlanggo.Lang) string {
	if c, ok := codes[l]; ok {
		return c
	}
	return l.Iso6393()
}

// Parser is a fetch.Parser that fills Document.Lang with the detected
// language of the page's title and text. A language the page declares is
// kept unless Override; a detection that is not reliable leaves Lang as it
// was. The zero value is ready to use; safe for concurrent use if Parser
// is.
type Parser struct {
	// Parser parses the page. Default: a zero fetch.HTML.
	Parser fetch.Parser
	// Detector chooses among the languages of interest. Default nil:
	// all 84.
	Detector *Detector
	// Override replaces the language the page declares with the detected
	// one when the detection is reliable. Default false: the declaration
	// wins.
	Override bool
	// MaxBytes is how much of the text, after the title, is examined.
	// Default DefaultMaxBytes, 1 KiB: a few paragraphs, enough for a
	// reliable guess (every page sample in testdata, 150 to 400 bytes,
	// is detected right), and a bound on the cost, which grows with it.
	MaxBytes int
}

var _ fetch.Parser = (*Parser)(nil)

// Parse implements fetch.Parser.
func (p *Parser) Parse(resp *fetch.Response) (*fetch.Document, error) {
	var (
		d   *fetch.Document
		err error
	)
	if p.Parser != nil {
		d, err = p.Parser.Parse(resp)
	} else {
		d, err = (&fetch.HTML{}).Parse(resp)
	}
	if err != nil || d == nil || (d.Lang != "" && !p.Override) {
		return d, err
	}
	if code, ok := p.Detector.Detect(sample(d, p.MaxBytes)); ok {
		d.Lang = code
	}
	return d, nil
}

// sample is the title and the first max bytes of the text, cut at a rune
// boundary.
func sample(d *fetch.Document, max int) string {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	t := d.Text
	if len(t) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		t = t[:cut]
	}
	if d.Title == "" {
		return t
	}
	return d.Title + "\n" + t
}
