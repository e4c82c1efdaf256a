// Command focused is a topic-focused crawler built on crawlkit's Crawler:
// it shows how a program plugs its own Prioritizer, URLFilter and Parser
// into the crawl loop of IIR Figure 20.1.
//
// # What it does
//
// A focused crawler spends its page budget on pages about a topic. The
// frontier's prioritizer (IIR §20.2.3) gives every discovered URL a front
// queue by its relevance to a query: the cosine similarity of the term
// vectors of the query and of the link's anchor text, mixed with the
// relevance of the page that carried the link (Focus). A URL filter keeps
// the crawl within a set of registrable domains and away from URLs that
// match a pattern (Scope). Page relevance is recorded by a Parser wrapper,
// because the crawler prioritizes a page's links before its sinks and its
// OnPage hook see the page.
//
//	focus := NewFocus("river lake boat")
//	cfg := crawlkit.Config{
//		Seeds:        seeds,
//		Prioritizer:  focus,
//		Parser:       focus.Parser(&fetch.Registry{}),
//		ExtraFilters: []frontier.URLFilter{Scope{Domains: []string{"example.com"}}}, // after the default trap guards
//	}
//
// The command itself passes a frontier.Mercator of its own (Config.Frontier)
// whose front queue selector favours high priorities more steeply than the
// default.
//
// # Running it
//
// With -demo it crawls a simulated web (package fetchtest) on 127.0.0.1,
// once focused and once breadth first with the same page budget, and
// prints how many pages on the topic each found; on-topic means the
// page's title, as the simulated web generated it, contains a query word:
//
//	go run ./examples/focused -demo -max-pages 400
//
// A real crawl names seeds, a query and, if it should reach beyond the
// seeds' registrable domains, the domains:
//
//	go run ./examples/focused -seeds https://example.com/ -query "web crawler" -max-pages 200
//
// -dns names the nameserver to ask, as the crawler's does; with it the
// command crawls the simulated web that examples/simweb serves in another
// process (its DNS server answers for every simulated host; the web is on
// loopback, hence -allow-private):
//
//	go run ./examples/simweb &
//	go run ./examples/focused -seeds http://h000.sim.test:8080/ -dns 127.0.0.1:5353 -allow-private -query "river boat"
//
// Exit status: 0 when the crawls ran, 1 when they failed or fetched
// nothing (the message says what to check), 2 for bad flags.
//
// README.md has the figures.
package main
