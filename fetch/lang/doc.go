// Package lang detects the language of a page's text, for the index's
// choice of analyzer and for the language field of the crawl's records.
//
// A page often declares its language (<html lang>, Content-Language),
// and the HTML parser puts that in Document.Lang; many pages declare none,
// and templates often declare a wrong one. Detect guesses the language from
// the text itself, by trigram statistics (github.com/abadojack/whatlanggo,
// 84 languages, no dependencies of its own), and Parser wraps any
// fetch.Parser to fill Document.Lang with it.
//
// # Usage
//
//	cfg := crawlkit.Config{
//		Parser: &lang.Parser{Parser: &fetch.MainTextParser{}},
//	}
//
// Pages whose language the markup declares keep it unless Override is set;
// the others get the detected language when the detection is reliable, and
// keep "" otherwise.
//
// # Figures
//
// On testdata/pages.tsv (34 paragraphs of 150 to 400 bytes in 16
// languages) Detect names the right language for all 34, each reliably,
// in about 250 µs a paragraph; a Detector restricted to eight languages
// takes about 120 µs. On testdata/titles.tsv (16 page titles of three to
// seven words) it is right on 11, and none of its 5 wrong guesses is
// marked reliable, so Parser leaves those pages' Lang empty
// (BenchmarkDetect, 2-core AMD EPYC VM, 2026-11-26; the figures vary by a
// third with the load of the machine). Titles alone are too short: Parser
// detects on the title and the first MaxBytes of the text.
//
// The index has one analyzer for all languages today (Unicode word
// segmentation, lowercasing, optional English stop words), so the
// detected language goes into Document.Lang and from there into the
// "lang" field of pages.jsonl, where a per-language analyzer can pick it
// up.
//
// The package is separate from fetch so that a crawler without language
// detection does not carry the detector's trigram tables (about 180 kB of
// source).
package lang
