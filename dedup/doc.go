// Package dedup holds the two duplicate-elimination tests of the crawl
// loop (IIR §20.2.1, Figure 20.1): "URL seen?" before a link enters the
// frontier and "content seen?" after a page is parsed.
//
// # URL seen?
//
// URLSeen is a set of 64-bit URL fingerprints (Fingerprint of the URL's
// canonical form, from urlnorm.Canonical) with an atomic test-and-add and
// a batch form. Set is the in-memory default (open addressing, ≤ 16
// bytes per URL, 64 lock-striped shards); MapSet is the plain-map
// reference; the sub-package pebbleseen keeps the set on disk with a
// bounded in-memory cache and survives restarts.
//
// # Content seen?
//
// ContentSeen answers whether a page's content was fetched before and at
// which URL. Content, the default, finds exact duplicates by the
// fingerprint of the normalised text (TextFingerprint: words lowercased,
// punctuation and spacing dropped) and near-duplicates by MinHash
// signatures of 4-word shingles, looked up through LSH and confirmed by
// estimated Jaccard similarity ≥ 0.8 (package shingle; optionally also by
// simhash). ExactContent finds exact duplicates only. For continuous
// crawling, keep Match.Fingerprint with the URL and call Forget when a
// re-crawl finds the page changed. Both are Durable: they can write
// every change to an append-only log (LogTo) and rebuild themselves from
// it (Replay), which the crawler does in its checkpoint directory.
//
// # Example
//
//	urls := new(dedup.Set)
//	canon, _ := urlnorm.Canonical(link)
//	if seen, _ := urls.TestAndAdd(ctx, dedup.Fingerprint(canon)); !seen {
//		frontier.Add(ctx, canon)
//	}
//
//	content, _ := dedup.NewContent(nil)
//	m, _ := content.Seen(ctx, dedup.Doc{URL: pageURL, Text: doc.Text})
//	if m.Seen {
//		log.Printf("%s duplicates %s (J≈%.2f)", pageURL, m.URL, m.Similarity)
//	}
//
// The conformance suites in dedup/deduptest define the contracts; every
// implementation runs them.
package dedup
