package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	cfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/crawlkit/crawlkit/fetch"
)

// session renders one page in a tab of its own (a browser context of its
// own too: no cookie, storage or cache is shared between pages).
//
// Every request of the tab pauses (Fetch domain, pattern "*"). The
// browser's reader goroutine queues it (onEvent must not block); one
// worker goroutine answers the queue in order, so a page never has two
// requests in flight: the first document request from the static
// response, each other one through the Gate and Options.Static, or from
// the cache.
type session struct {
	f      *Fetcher
	b      *browser
	page   *url.URL
	static *fetch.Response
	gate   fetch.Gate

	tabCancel context.CancelFunc // chromedp's: closes the tab and waits
	target    *chromedp.Target
	worker    chan struct{} // closed when the worker has returned

	wake   chan struct{} // cap 1: the queue has work
	change chan struct{} // cap 1: loaded, crashed, pending or last changed

	mu        sync.Mutex
	queue     []*cfetch.EventRequestPaused
	pending   int       // requests paused and not answered yet
	last      time.Time // last request paused or answered, or the load event
	loaded    bool
	crashed   bool
	dialogs   int // JavaScript dialogs to dismiss
	mainDone  bool
	mainFrame cdp.FrameID
	requests  int // requests sent through Static
	subs      []*fetch.Response
}

func newSession(f *Fetcher, b *browser, u *url.URL, static *fetch.Response) *session {
	return &session{f: f, b: b, page: u, static: static, gate: f.currentGate(),
		wake: make(chan struct{}, 1), change: make(chan struct{}, 1), worker: make(chan struct{})}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// onEvent runs on the goroutine that reads the tab's messages: it must
// not block nor send commands.
func (s *session) onEvent(ev any) {
	switch e := ev.(type) {
	case *cfetch.EventRequestPaused:
		s.mu.Lock()
		s.queue = append(s.queue, e)
		s.pending++
		s.last = time.Now()
		s.mu.Unlock()
		signal(s.wake)
	case *page.EventLoadEventFired:
		s.mu.Lock()
		if s.mainDone { // not the about:blank the tab opened with
			s.loaded = true
			s.last = time.Now()
		}
		s.mu.Unlock()
	case *inspector.EventTargetCrashed:
		s.mu.Lock()
		s.crashed = true
		s.mu.Unlock()
	case *page.EventJavascriptDialogOpening:
		// alert(), confirm() and prompt() stop the page's scripts until
		// answered: the worker dismisses them.
		s.mu.Lock()
		s.dialogs++
		s.mu.Unlock()
		signal(s.wake)
	default:
		return
	}
	signal(s.change)
}

// run renders the page: the response, rendered or as fetched, or an error
// when parent (the caller's context) ended.
func (s *session) run(ctx, parent context.Context) (*fetch.Response, error) {
	o := &s.f.opts
	deadline := time.Now().Add(o.PageTimeout)
	grace := min(time.Second, o.PageTimeout/4) // for the snapshot of a page cut at its deadline
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	// The tab lives under the browser's context, not the caller's (the
	// first command on it binds its life to that context); it is killed
	// when the render ends, whatever the reason.
	tparent, kill := context.WithCancel(s.b.ctx)
	defer context.AfterFunc(sctx, kill)()
	tctx, tcancel := chromedp.NewContext(tparent, chromedp.WithNewBrowserContext())
	s.tabCancel = func() { kill(); tcancel() }
	if err := chromedp.Listen(tctx, s.onEvent); err != nil {
		close(s.worker)
		return s.fallback(parent, err)
	}
	s.target = chromedp.FromContext(tctx).Target
	detached, _ := chromedp.Detached(tctx)
	go s.work(sctx)
	if _, err := cdp.Call(sctx, s.target, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return s.fallback(parent, err)
	}
	if _, err := cdp.Call(sctx, s.target, cfetch.Enable, cfetch.EnableParams{Patterns: []*cfetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return s.fallback(parent, err)
	}
	nav, err := cdp.Call(sctx, s.target, page.Navigate, page.NavigateParams{URL: s.page.String()})
	if err == nil && nav.ErrorText != "" {
		err = errors.New(nav.ErrorText)
	}
	if err != nil {
		return s.fallback(parent, err)
	}

	quietAt := deadline.Add(-grace)
	tick := time.NewTicker(max(10*time.Millisecond, min(o.Quiet/4, 50*time.Millisecond)))
	defer tick.Stop()
	for {
		s.mu.Lock()
		loaded, crashed, pending, last := s.loaded, s.crashed, s.pending, s.last
		s.mu.Unlock()
		now := time.Now()
		switch {
		case crashed:
			s.f.st.crashes.Add(1)
			return s.fallback(parent, errors.New("tab crashed"))
		case loaded && pending == 0 && now.Sub(last) >= o.Quiet:
			return s.snapshot(sctx, parent)
		case !now.Before(quietAt):
			s.f.st.timeouts.Add(1)
			// Stop a script that never returns, so that the tab answers.
			tctx, tc := context.WithTimeout(sctx, grace/2)
			_, _ = cdp.Call(tctx, s.target, runtime.TerminateExecution, cdp.Empty{})
			tc()
			if !loaded {
				return s.fallback(parent, context.DeadlineExceeded)
			}
			return s.snapshot(sctx, parent)
		}
		select {
		case <-s.change:
		case <-tick.C:
		case <-detached:
			s.f.st.crashes.Add(1)
			return s.fallback(parent, errors.New("tab closed"))
		case <-sctx.Done():
			return s.fallback(parent, sctx.Err())
		}
	}
}

// fallback returns the page as fetched, or the caller's error if the
// caller's context ended.
func (s *session) fallback(parent context.Context, _ error) (*fetch.Response, error) {
	if err := parent.Err(); err != nil {
		return nil, &fetch.Error{Op: "render", Kind: fetch.KindCanceled, URL: s.page.String(), Err: err}
	}
	s.f.st.fallbacks.Add(1)
	out := *s.static
	s.mu.Lock()
	out.Subresources = slices.Clone(s.subs)
	s.mu.Unlock()
	return &out, nil
}

// snapshotJS serialises the document, doctype included, cut at a number
// of UTF-16 units (%d) so that a huge DOM never crosses the protocol.
const snapshotJS = `(() => {
  const d = document;
  const s = (d.doctype ? new XMLSerializer().serializeToString(d.doctype) + "\n" : "") +
    (d.documentElement ? d.documentElement.outerHTML : "");
  return s.length > %d ? [s.slice(0, %d), true] : [s, false];
})()`

func (s *session) snapshot(ctx, parent context.Context) (*fetch.Response, error) {
	max := s.f.opts.MaxBodySize
	expr := fmt.Sprintf(snapshotJS, max, max)
	r, err := cdp.Call(ctx, s.target, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: ptr(true)})
	if err == nil && (r.ExceptionDetails != nil || r.Result == nil) {
		err = errors.New("snapshot failed")
	}
	var res [2]any
	if err == nil {
		err = json.Unmarshal(r.Result.Value, &res)
	}
	doc, ok1 := res[0].(string)
	cut, ok2 := res[1].(bool)
	if err != nil || !ok1 || !ok2 || doc == "" {
		return s.fallback(parent, err)
	}
	body := []byte(doc)
	if len(body) > max {
		body = body[:max]
		for len(body) > 0 && !utf8.Valid(body[len(body)-min(len(body), utf8.UTFMax):]) {
			body = body[:len(body)-1]
		}
		cut = true
	}
	out := *s.static
	out.Body = body
	out.Truncated = cut
	out.Rendered = true
	s.mu.Lock()
	out.Subresources = slices.Clone(s.subs)
	s.mu.Unlock()
	s.f.st.rendered.Add(1)
	return &out, nil
}

func ptr[T any](v T) *T { return &v }

// work answers the paused requests one at a time until ctx ends.
func (s *session) work(ctx context.Context) {
	defer close(s.worker)
	for {
		select {
		case <-s.wake:
		case <-ctx.Done():
			return
		}
		for {
			s.mu.Lock()
			var e *cfetch.EventRequestPaused
			dialog := s.dialogs > 0
			if dialog {
				s.dialogs--
			} else if len(s.queue) > 0 {
				e = s.queue[0]
				s.queue = s.queue[1:]
			}
			s.mu.Unlock()
			if dialog {
				_, _ = cdp.Call(ctx, s.target, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{})
				continue
			}
			if e == nil {
				break
			}
			s.answer(ctx, e)
			s.mu.Lock()
			s.pending--
			s.last = time.Now()
			s.mu.Unlock()
			signal(s.change)
			if ctx.Err() != nil {
				return
			}
		}
	}
}

// answer answers one paused request.
func (s *session) answer(ctx context.Context, e *cfetch.EventRequestPaused) {
	st := &s.f.st
	s.mu.Lock()
	main := !s.mainDone && e.ResourceType == network.ResourceTypeDocument
	if main {
		s.mainDone, s.mainFrame = true, e.FrameID
	}
	mainFrame := s.mainFrame
	s.mu.Unlock()
	if main {
		s.fulfill(ctx, e.RequestID, s.static)
		return
	}
	u, err := url.Parse(e.Request.URL)
	if err != nil {
		st.blocked.Add(1)
		s.fail(ctx, e.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	switch u.Scheme {
	case "http", "https":
	case "data", "blob", "about":
		// Made from the page's own bytes, not the network.
		_, _ = cdp.Call(ctx, s.target, cfetch.ContinueRequest, cfetch.ContinueRequestParams{RequestID: e.RequestID})
		return
	default:
		st.blocked.Add(1)
		s.fail(ctx, e.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	kind := resourceOf(e.ResourceType)
	s.mu.Lock()
	capped := s.requests >= s.f.opts.MaxRequests
	s.mu.Unlock()
	if e.Request.Method != http.MethodGet || // a crawler only reads
		e.ResourceType == network.ResourceTypeDocument && e.FrameID == mainFrame || // the page navigating away
		s.f.opts.Resources&kind == 0 || capped {
		st.blocked.Add(1)
		s.fail(ctx, e.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	key := u.String()
	if c := s.f.cache; c != nil {
		if resp, ok := c.get(key, time.Now()); ok {
			st.cacheHits.Add(1)
			s.fulfill(ctx, e.RequestID, resp)
			return
		}
	}
	release, err := s.gate.Admit(ctx, s.page, u)
	if err != nil {
		st.refused.Add(1)
		s.fail(ctx, e.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	resp, err := s.f.opts.Static.Fetch(ctx, &fetch.Request{URL: u})
	release()
	if err != nil {
		st.failed.Add(1)
		reason := network.ErrorReasonFailed
		var fe *fetch.Error
		if errors.As(err, &fe) && fe.Kind == fetch.KindTimeout {
			reason = network.ErrorReasonTimedOut
		}
		s.fail(ctx, e.RequestID, reason)
		return
	}
	st.requests.Add(1)
	s.mu.Lock()
	s.subs = append(s.subs, resp)
	s.mu.Unlock()
	if c := s.f.cache; c != nil {
		c.put(key, resp, time.Now())
	}
	s.fulfill(ctx, e.RequestID, resp)
}

// resourceOf maps a protocol resource type to a Resource.
func resourceOf(t network.ResourceType) Resource {
	switch t {
	case network.ResourceTypeScript:
		return Scripts
	case network.ResourceTypeStylesheet:
		return Styles
	case network.ResourceTypeXHR, network.ResourceTypeFetch, network.ResourceTypeEventSource:
		return Data
	case network.ResourceTypeDocument:
		return Frames
	case network.ResourceTypeImage:
		return Images
	case network.ResourceTypeFont:
		return Fonts
	case network.ResourceTypeMedia, network.ResourceTypeTextTrack:
		return Media
	}
	return Other
}

// fulfill answers a paused request with resp: its status and headers,
// and its body as Static decoded it, so the headers that described the
// bytes on the wire (Content-Encoding, Content-Length, a charset the body
// was converted from) are replaced.
func (s *session) fulfill(ctx context.Context, id cfetch.RequestID, resp *fetch.Response) {
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	hdr := make([]*cfetch.HeaderEntry, 0, len(keys)+1)
	for _, k := range keys {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Encoding", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Content-Type":
			continue
		}
		for _, v := range resp.Header[k] {
			hdr = append(hdr, &cfetch.HeaderEntry{Name: k, Value: v})
		}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if resp.Charset != "" && resp.ContentType != "" {
			ct = resp.ContentType + "; charset=utf-8" // the body is UTF-8 now
		}
		hdr = append(hdr, &cfetch.HeaderEntry{Name: "Content-Type", Value: ct})
	}
	code := int64(resp.Status)
	if code < 100 || code > 999 {
		code = http.StatusBadGateway
	}
	_, err := cdp.Call(ctx, s.target, cfetch.FulfillRequest, cfetch.FulfillRequestParams{
		RequestID: id, ResponseCode: code, ResponseHeaders: hdr, Body: resp.Body})
	if err != nil {
		s.fail(ctx, id, network.ErrorReasonFailed)
	}
}

func (s *session) fail(ctx context.Context, id cfetch.RequestID, reason network.ErrorReason) {
	_, _ = cdp.Call(ctx, s.target, cfetch.FailRequest, cfetch.FailRequestParams{RequestID: id, ErrorReason: reason})
}

// close ends the session's worker and closes its tab (and browser
// context). It returns once the tab is gone, or the browser is.
func (s *session) close() {
	if s.tabCancel == nil {
		return
	}
	s.tabCancel()
	<-s.worker
}
