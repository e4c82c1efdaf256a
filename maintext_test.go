package crawlkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/lang"
)

// TestMainTextAndLanguage crawls three pages with the optional text
// parsers: the index gets each page's main text, not its menus and ads,
// and pages.jsonl records the declared language, or the detected one for
// pages that declare none.
func TestMainTextAndLanguage(t *testing.T) {
	news, err := os.ReadFile("fetch/testdata/maintext/news.html")
	if err != nil {
		t.Fatal(err)
	}
	forum, err := os.ReadFile("fetch/testdata/maintext/forum.html") // no lang attribute
	if err != nil {
		t.Fatal(err)
	}
	french := []byte(`<html><head><title>Pistes cyclables</title></head><body>
<nav><a href="/">Accueil</a> <a href="/news">News</a></nav>
<article><p>Le conseil municipal a voté mardi soir la création de pistes cyclables protégées sur toute la longueur de la rue du Port.</p>
<p>Les travaux devraient commencer au printemps et durer environ huit mois.</p></article></body></html>`)
	html := func(b []byte) *fetch.Response {
		return &fetch.Response{Status: 200, ContentType: "text/html", Body: b}
	}
	seed := "http://a.test/"
	pages := fetch.Static{
		seed:                  html([]byte(`<html lang="en"><body><a href="/news">news</a> <a href="/forum">forum</a> <a href="/fr">fr</a></body></html>`)),
		"http://a.test/news":  html(news),
		"http://a.test/forum": html(forum),
		"http://a.test/fr":    html(french),
	}
	var (
		mu    sync.Mutex
		texts = map[string]string{}
		jsonl bytes.Buffer
	)
	c, err := crawlkit.New(crawlkit.Config{
		Seeds:   []string{seed},
		Fetcher: pages,
		Resolver: dns.ResolverFunc(func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}),
		Parser: &lang.Parser{Parser: &fetch.MainTextParser{Parser: &fetch.Registry{}}},
		Sinks: []crawlkit.Sink{crawlkit.NewJSONLines(&jsonl), crawlkit.SinkFunc(func(_ context.Context, p *crawlkit.Page) error {
			mu.Lock()
			defer mu.Unlock()
			texts[p.URL] = p.Document.Text
			return nil
		})},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for u, tc := range map[string]struct{ has, hasNot string }{
		"http://a.test/news":  {"Harbor Street", "Refinance your home"},
		"http://a.test/forum": {"acetone smell", "Who is online"},
		"http://a.test/fr":    {"travaux devraient", "Accueil"},
	} {
		if txt := texts[u]; !strings.Contains(txt, tc.has) || strings.Contains(txt, tc.hasNot) {
			t.Errorf("%s: text %.100q...: want %q, not %q", u, txt, tc.has, tc.hasNot)
		}
	}
	langs := map[string]string{}
	for _, line := range bytes.Split(bytes.TrimSpace(jsonl.Bytes()), []byte("\n")) {
		var rec crawlkit.PageRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		langs[rec.URL] = rec.Lang
	}
	want := map[string]string{seed: "en", "http://a.test/news": "en", "http://a.test/forum": "en", "http://a.test/fr": "fr"}
	for u, l := range want {
		if langs[u] != l {
			t.Errorf("pages.jsonl: %s lang %q, want %q (all: %v)", u, langs[u], l, langs)
		}
	}
}
