package crawlkit

import (
	"context"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
)

// Page is a fetched page as the sinks and the OnPage hook see it. The
// Response and Document belong to the crawler: a sink must not keep them
// after Write returns (copy what it needs).
type Page struct {
	// URL is the canonical URL that was fetched.
	URL string
	// Depth is the number of links followed from a seed.
	Depth int
	// Fetched is when the fetch started.
	Fetched time.Time
	// Response is the HTTP response (body decoded to UTF-8 for text).
	Response *fetch.Response
	// Document is what the parser extracted.
	Document *fetch.Document
	// Links are the canonical URLs of the page's links that passed the URL
	// filters, in document order, duplicates included (the page's out-links
	// in the web graph). Empty when the page says nofollow.
	Links []string
	// Fingerprint is the content fingerprint ("content seen?").
	Fingerprint uint64
	// Canonical, if not "", is the canonical URL the page names (in
	// canonical form) and the crawl honours (Config.Canonicals): the page
	// is an alias of it. The index sinks leave such a page out.
	Canonical string
}

// Sink receives every page the crawl fetched that was not a duplicate:
// the outputs of the crawl loop (WARC files, a link log for the web graph,
// an index, JSON Lines). Write is called from many workers at once, so a
// Sink must be safe for concurrent use. An error from Write is counted
// and logged; it does not stop the crawl. Close is called once when Run
// ends. A Sink given a writer by its caller leaves it open: the caller
// closes what it owns.
type Sink interface {
	Write(ctx context.Context, p *Page) error
	Close() error
}

// DurableSink is a Sink whose output must stay consistent with the
// crawl's State across a crash: a file the crawl appends to (WARC, JSON
// Lines, the link log, an index). The crawler calls its Write (and
// Exchange) and then Position under its commit lock, one page at a time,
// and saves the position in the same Txn as the page. A resumed crawl
// calls Rewind with the position saved with the last committed page,
// before anything else, and the sink cuts off whatever it wrote after it:
// the records of pages the crawl will fetch again. So every page the
// State holds as done is in the sink once, and no other page is.
//
// A sink whose Write hands its bytes to the operating system before it
// returns (rather than keeping them in a buffer) loses nothing to a kill
// of the process. WARCSink, JSONLinesFile, LinkLogFile and IndexDirSink
// are DurableSinks.
type DurableSink interface {
	Sink
	// Position returns a token for the sink's state after everything
	// written so far. Called after every page: it should be cheap.
	Position() ([]byte, error)
	// Rewind cuts the sink back to pos, a token Position returned in
	// this or an earlier process. Called once, before any Write (what a
	// Rewind after a Write does is each sink's to say). An
	// implementation may accept only recent positions (IndexDirSink:
	// those since the last-but-one flush of its index); the crawler only
	// ever rewinds to the position of its last committed page.
	Rewind(pos []byte) error
}

// PreparingSink is a DurableSink that does the costly part of writing a
// page (encoding, compressing, digests) in Prepare, which the crawler
// calls from the page's worker outside the commit lock, so that pages are
// prepared in parallel and only appended one at a time: the crawler then
// calls the Prepared's Write under the lock instead of the sink's Write.
// WARCSink, JSONLinesFile, LinkLogFile and IndexDirSink implement it.
type PreparingSink interface {
	DurableSink
	Prepare(ctx context.Context, p *Page) (Prepared, error)
}

// Prepared is a page a PreparingSink prepared; Write appends it to the
// sink. It is called at most once.
type Prepared interface {
	Write() error
}

// ExchangeSink is implemented by sinks that archive every HTTP exchange of
// the crawl, not only the pages kept: Exchange receives each response that
// is not handed to Write — robots.txt, redirects, error statuses, 304s,
// duplicate content (whose links the crawl followed) — with the time its
// fetch started. WARCSink implements
// it, so that replaying an archive (warc.Replay) reproduces the crawl,
// redirects and robots.txt included. Safe for concurrent use, like Write.
type ExchangeSink interface {
	Sink
	Exchange(ctx context.Context, resp *fetch.Response, fetched time.Time) error
}

// WireSink is implemented by sinks that store responses as they came off
// the wire (fetch.Response.Wire), as an archive should: when a Config has
// one and no Fetcher of its own, the default fetcher keeps the wire bytes
// (fetch.Options.KeepWire). WARCSink implements it.
type WireSink interface {
	Sink
	WantsWire() bool
}

// AliasSink is implemented by sinks that record which URLs are aliases
// of others (Config.Canonicals): Alias is called for every fetched page
// or duplicate that names a canonical URL the crawl honours, after the
// page's Write if it is a page, under the commit lock for a DurableSink
// as its Write is. LinkLog and LinkLogFile implement it, and
// ReadLinkLogCanonical reads what they write. Safe for concurrent use,
// like Write.
type AliasSink interface {
	Sink
	Alias(ctx context.Context, alias, canonical string) error
}

// SinkFunc adapts a function to a Sink whose Close does nothing.
type SinkFunc func(ctx context.Context, p *Page) error

// Write calls f(ctx, p).
func (f SinkFunc) Write(ctx context.Context, p *Page) error { return f(ctx, p) }

// Close does nothing.
func (f SinkFunc) Close() error { return nil }
