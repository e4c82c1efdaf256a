package index

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"
)

// langDocs are short passages in the languages of StopWords, each with
// the language a crawl would record for it.
var langDocs = []Document{
	{URL: "http://en.test/", Lang: "en", Title: "The river", Text: "The river runs through the valley and the boats are on the water in the summer."},
	{URL: "http://de.test/", Lang: "de", Title: "Die Katze", Text: "Die Katze schläft auf dem Sofa, und der Hund liegt in der Sonne vor dem Haus."},
	{URL: "http://fr.test/", Lang: "fr-FR", Title: "Le port", Text: "Le bateau est dans le port et les pêcheurs sont sur le quai avec leurs filets."},
	{URL: "http://es.test/", Lang: "es", Title: "El mercado", Text: "El mercado de la ciudad abre por la mañana y los vecinos compran pan y fruta."},
	{URL: "http://it.test/", Lang: "it", Title: "Il treno", Text: "Il treno per la città parte alle otto e i viaggiatori aspettano sul binario."},
	{URL: "http://nl.test/", Lang: "nl", Title: "De fiets", Text: "De fiets staat bij het station en de trein naar de stad is te laat."},
	{URL: "http://pt.test/", Lang: "pt-BR", Title: "O jardim", Text: "O jardim da casa tem flores e as crianças brincam na sombra das árvores."},
	{URL: "http://xx.test/", Title: "Unknown", Text: "The die is cast and the river is wide."},
}

func TestDocTermsByLanguage(t *testing.T) {
	an := &Analyzer{StopByLang: StopWords}
	tests := []struct {
		text, lang string
		want       []string
	}{
		{"Die Katze und der Hund", "de", []string{"katze", "hund"}},
		{"Die Katze und der Hund", "de-AT", []string{"katze", "hund"}},
		{"Die Katze und der Hund", "DE", []string{"katze", "hund"}},
		{"The die is cast", "en", []string{"die", "cast"}},            // "die" is a word in English
		{"The die is cast", "", []string{"the", "die", "is", "cast"}}, // unknown language: Stop (none)
		{"The die is cast", "ja", []string{"the", "die", "is", "cast"}},
		{"Le bateau est dans le port", "fr", []string{"bateau", "port"}},
	}
	for _, tc := range tests {
		if got := an.DocTerms(nil, tc.text, tc.lang); !slices.Equal(got, tc.want) {
			t.Errorf("DocTerms(%q, %q) = %q, want %q", tc.text, tc.lang, got, tc.want)
		}
	}
	if got, want := an.QueryTerms(nil, "die Katze in the house"), []string{"katze", "house"}; !slices.Equal(got, want) {
		t.Errorf("QueryTerms = %q, want %q (the stop words of every language dropped)", got, want)
	}
	plain := &Analyzer{Stop: EnglishStopWords}
	if got, want := plain.QueryTerms(nil, "die Katze in the house"), []string{"die", "katze", "house"}; !slices.Equal(got, want) {
		t.Errorf("without StopByLang, QueryTerms = %q, want %q", got, want)
	}
}

// TestSearchByLanguage: with StopByLang, a query keeps finding a document
// whatever stop words of another language it holds ("die" is an article
// in German and a word in English), and the documents lose their own
// language's stop words.
func TestSearchByLanguage(t *testing.T) {
	s := NewShard(&ShardOptions{Analyzer: &Analyzer{StopByLang: StopWords}})
	for _, d := range langDocs {
		if _, err := s.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"die Katze", "http://de.test/"},
		{"the river", "http://en.test/"},
		{"le bateau", "http://fr.test/"},
		{"o jardim das flores", "http://pt.test/"},
	} {
		res, err := s.Search(context.Background(), ParseQuery(s.Analyzer(), tc.query, And, 3), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].URL != tc.want {
			t.Errorf("%q: hits %+v, want %s first", tc.query, res.Hits, tc.want)
		}
	}
}

// BenchmarkStopByLang indexes the passages of langDocs with and without
// per-language stop words and reports the share of term occurrences the
// stop words remove.
func BenchmarkStopByLang(b *testing.B) {
	count := func(an *Analyzer) int {
		n := 0
		for _, d := range langDocs {
			n += len(an.DocTerms(an.DocTerms(nil, d.Title, d.Lang), d.Text, d.Lang))
		}
		return n
	}
	var with, without int
	for b.Loop() {
		with, without = count(&Analyzer{StopByLang: StopWords}), count(&Analyzer{})
	}
	b.ReportMetric(100*float64(without-with)/float64(without), "%-terms-dropped")
}

// TestLogRecordLang: the log keeps a document's language (version 2), and
// reads a record without one (version 1) as a document of unknown
// language.
func TestLogRecordLang(t *testing.T) {
	for _, d := range []Document{langDocs[1], langDocs[7]} {
		rec := appendLogRecord(nil, d)
		got, ok := decodeLogPayload(rec[logRecordHead:])
		if !ok || got != d {
			t.Errorf("record of %+v decodes to %+v, %v", d, got, ok)
		}
	}
	old := langDocs[1]
	old.Lang = ""
	rec := appendLogRecord(nil, old) // what version 1 wrote
	if got, ok := decodeLogPayload(rec[logRecordHead:]); !ok || got.Lang != "" || got.Text != old.Text {
		t.Errorf("a record without a language decodes to %+v, %v", got, ok)
	}
	h := appendLogHeader(nil, 1, 2)
	h[4] = 1 // a version 1 log
	h = h[:24]
	h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(h, castagnoli))
	if _, _, err := decodeLogHeader(h); err != nil {
		t.Errorf("a version 1 log header: %v", err)
	}
}
