package crawlkit

import (
	"context"
	"errors"
	"fmt"

	"github.com/crawlkit/crawlkit/fetch"
)

// HTMLHandler is a callback on the elements of the crawled pages that
// match a CSS selector (Config.OnHTML): colly's OnHTML with a context and
// an error. Func is called once for each matching element of each HTML
// page the crawl fetches and keeps (not for duplicates, as OnPage), in
// document order, from the worker goroutine that fetched the page; many
// workers call it at once for different pages, so it must be safe for
// concurrent use.
//
// An error Func returns stops this handler on this page (its remaining
// matches are skipped; other handlers still run) and is reported to
// Config.OnError as a *HandlerError. The links Func records with
// Element.Follow join the page's own links: they pass the URL filters,
// the budgets and the URL-seen test as any link does, and are not
// followed from a page that says nofollow.
//
// The element tree is built only when a Config has handlers, once per
// page, whatever their number (fetch.ParseDOM): a crawl without handlers
// costs what it did.
type HTMLHandler struct {
	// Selector is a CSS selector group ("div.product", "a.next, a[rel=next]").
	// "html" runs Func once per page on the document element.
	Selector string
	// Func is called for each element that matches Selector.
	Func func(ctx context.Context, e *fetch.Element) error
}

// HandlerError is the error an HTMLHandler's Func returned on a page, or
// a bad selector its Func queried with (a *fetch.SelectorError).
type HandlerError struct {
	URL      string // the page
	Selector string // the handler's Selector, or the bad selector queried
	Err      error
}

func (e *HandlerError) Error() string {
	return fmt.Sprintf("crawlkit: handler %q on %s: %v", e.Selector, e.URL, e.Err)
}

func (e *HandlerError) Unwrap() error { return e.Err }

// htmlHandler is an HTMLHandler with its selector compiled.
type htmlHandler struct {
	sel fetch.Selector
	fn  func(context.Context, *fetch.Element) error
}

// compileHandlers checks and compiles Config.OnHTML.
func compileHandlers(hs []HTMLHandler) ([]htmlHandler, error) {
	out := make([]htmlHandler, 0, len(hs))
	for i, h := range hs {
		if h.Func == nil {
			return nil, fmt.Errorf("OnHTML[%d] (%q) has no Func", i, h.Selector)
		}
		s, err := fetch.CompileSelector(h.Selector)
		if err != nil {
			return nil, fmt.Errorf("OnHTML[%d]: %w", i, err)
		}
		out = append(out, htmlHandler{sel: s, fn: h.Func})
	}
	return out, nil
}

// isHTML reports whether resp is a page the handlers see.
func isHTML(resp *fetch.Response) bool {
	return resp.ContentType == "text/html" || resp.ContentType == "application/xhtml+xml"
}

// runHandlers builds the element tree of a kept HTML page, runs the
// Config.OnHTML handlers on it and returns the links they followed,
// appended to links (a new slice: the Document's is not touched).
func (c *Crawler) runHandlers(ctx context.Context, pageURL string, resp *fetch.Response, links []fetch.Link) []fetch.Link {
	if len(c.handlers) == 0 || !isHTML(resp) {
		return links
	}
	dom, err := fetch.ParseDOM(resp.Body, resp.URL, false)
	if err != nil {
		c.reportError(pageURL, err)
		return links
	}
	root := dom.Root()
	for _, h := range c.handlers {
		var matches []*fetch.Element
		if root.Matches(h.sel) { // Select looks under root only
			matches = append(matches, root)
		}
		matches = append(matches, root.Select(h.sel)...)
		for _, e := range matches {
			if ctx.Err() != nil {
				return links
			}
			if err := h.fn(ctx, e); err != nil {
				c.reportError(pageURL, &HandlerError{URL: pageURL, Selector: h.sel.String(), Err: err})
				break
			}
		}
	}
	if err := dom.Err(); err != nil {
		var se *fetch.SelectorError
		sel := ""
		if errors.As(err, &se) {
			sel = se.Selector
		}
		c.reportError(pageURL, &HandlerError{URL: pageURL, Selector: sel, Err: err})
	}
	if f := dom.Followed(); len(f) > 0 {
		links = append(links[:len(links):len(links)], f...)
	}
	return links
}
