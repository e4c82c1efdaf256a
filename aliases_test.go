package crawlkit

import (
	"context"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestAliasesBaseline crawls the Aliases site of the simulated web
// (fetchtest's Config.Aliases: 97 distinct pages under www. and bare
// host names, neutral query parameters, dir/ and dir/index.html, a
// symlinked /current/, a /v2/ that copies most of /v3/, near-duplicate
// class pages) as the crawl runs today, with no URL rewrite rules. Every
// distinct page must be fetched under some URL: the decoys (?page=,
// ?lang=, the /v2/ files of its own) are distinct, and the near-duplicate
// class pages hold the only links to their class-use pages. It logs the
// identical-content fetches, the waste rules learned from duplicates
// (Do not crawl in the DUST) are to cut; it does not bound them yet.
//
// The crawl starts at the site's entry rather than the web's seeds: the
// site links nothing outside itself, so the rest of the web (traps
// included) would only slow the test.
func TestAliasesBaseline(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 11, Hosts: 3, MeanPages: 4, Aliases: true,
		ChangePeriods: []time.Duration{0}, CrawlDelay: time.Millisecond, RetryAfter: time.Millisecond})
	defer web.Close()
	host := web.Host(fetchtest.Aliases)
	entry := web.URL(host, "/")
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Seeds = []string{entry}
		cfg.MaxRetries = -1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pages := web.PagesOf(host)
	distinct, identical := web.AliasFetches(web.Log())
	if missed := web.Missed("crawlkit", nil, entry); len(missed) > 0 {
		t.Errorf("%d of the site's %d distinct pages never fetched under any URL: %v", len(missed), len(pages), missed)
	}
	if len(distinct) != len(pages) {
		t.Errorf("coverage %d/%d distinct pages", len(distinct), len(pages))
	}
	fetches := len(distinct) + identical
	t.Logf("alias site: %d/%d distinct pages (%.0f%%); %d page fetches, %d of them identical-content (%.0f%%); "+
		"crawl: %d fetched, %d duplicate content, %d abandoned (trap defence), %d requests in all",
		len(distinct), len(pages), 100*float64(len(distinct))/float64(len(pages)), fetches, identical,
		100*float64(identical)/float64(max(1, fetches)),
		s.Outcomes[Fetched], s.Outcomes[DuplicateContent], s.Outcomes[Abandoned], len(web.Log()))
}
