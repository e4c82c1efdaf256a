package render

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlkit/crawlkit/fetch"
)

// Errors of New and Fetch; test for them with errors.Is.
var (
	// ErrNoBrowser: no Chromium or Chrome binary was found (Options.Browser,
	// $CRAWLKIT_CHROMIUM, or the usual names on $PATH).
	ErrNoBrowser = errors.New("render: no Chromium or Chrome binary found (set Options.Browser or $CRAWLKIT_CHROMIUM)")
	// ErrNoStatic: Options.Static is nil; every byte the browser sees
	// comes through it, so there is no default.
	ErrNoStatic = errors.New("render: Options.Static is nil")
	// ErrClosed: Fetch was called after Close (a *fetch.Error of
	// KindOther wraps it).
	ErrClosed = errors.New("render: fetcher closed")
	// ErrOtherHost: the default Gate refused a request to a host other
	// than the page's (Options.ThirdParty is off).
	ErrOtherHost = errors.New("render: request to another host than the page's")
)

// StartError reports a browser that did not start: the binary, and why.
type StartError struct {
	Browser string
	Err     error
}

// Error implements error.
func (e *StartError) Error() string { return "render: start " + e.Browser + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// Options configure a rendering Fetcher. Only Static is required; every
// zero field means its default.
type Options struct {
	// Static fetches every byte the browser sees: the page itself and
	// each request its scripts, styles and frames make. Its guard against
	// private addresses, proxy, session, user agent and limits apply to
	// them all. Required.
	Static fetch.Fetcher

	// Browser is the path of the Chromium or Chrome binary. Default
	// $CRAWLKIT_CHROMIUM, else the first of chromium, chromium-browser,
	// google-chrome, google-chrome-stable, chrome and
	// chrome-headless-shell found on $PATH.
	Browser string

	// Policy decides which pages are rendered. Default nil: Always.
	Policy Policy

	// Tabs is the most pages rendered at once: the size of the tab pool.
	// Each tab is a renderer process of some 30–100 MB and keeps a CPU
	// busy while its scripts run. Default 2, for a 2-core machine; about
	// one per core is a fair start.
	Tabs int

	// PageTimeout bounds the rendering of one page, from the moment it
	// has a tab to the snapshot of its DOM (the static fetch and the wait
	// for a tab come on top). A page still loading then is returned as
	// fetched, not rendered; one that loaded but whose requests never
	// settle is returned with the DOM it has (see Stats.Timeouts).
	// Default 15 s.
	PageTimeout time.Duration

	// Quiet is how long a loaded page must make no request before its DOM
	// is taken: scripts that fetch data after the load event get that
	// long to ask. Default 250 ms.
	Quiet time.Duration

	// MaxBodySize caps the rendered document, in bytes of UTF-8; a longer
	// one is cut and the response marked Truncated. Default 10 MiB.
	MaxBodySize int

	// MaxHeapMB caps the JavaScript heap of each page (V8's
	// --max-old-space-size): a page that allocates past it crashes its
	// tab, and is returned as fetched. Default 256.
	MaxHeapMB int

	// MaxRequests caps the requests one page may make; past it, requests
	// fail in the browser (Stats.Blocked). It bounds scripts that poll
	// without end. Default 100.
	MaxRequests int

	// Resources are the kinds of request pages may make; the others fail
	// in the browser without a request. Default DefaultResources: scripts,
	// styles, data and frames, not images, fonts or media, which do not
	// change the DOM.
	Resources Resource

	// ThirdParty lets pages make requests to hosts other than their own
	// when no Gate is set (see SetGate). Default false: only the page's
	// host is asked, and the other requests fail (Stats.Refused).
	ThirdParty bool

	// CacheBytes caps the cache of scripts, styles, fonts and images
	// shared by the pages of a site (see doc.go, "Cache"). Default 32 MiB;
	// negative turns the cache off.
	CacheBytes int64

	// CacheTTL is how long a cached response without max-age is used.
	// Default 10 minutes.
	CacheTTL time.Duration

	// StartTimeout bounds the start of the browser in New (and of its
	// restart after a crash). Default 30 s.
	StartTimeout time.Duration
}

// Resource is a set of kinds of request a page makes.
type Resource uint16

// The kinds of request, after the resource types of the Chrome DevTools
// protocol.
const (
	Scripts Resource = 1 << iota // <script src>, imports, workers' scripts
	Styles                       // stylesheets
	Data                         // XMLHttpRequest, fetch(), EventSource
	Frames                       // the documents of <iframe> and <frame>
	Images                       // images; also turns image loading on in the browser
	Fonts                        // web fonts
	Media                        // audio, video, text tracks
	Other                        // the rest: favicons, manifests, prefetches, beacons

	// DefaultResources are the requests that can change the DOM.
	DefaultResources = Scripts | Styles | Data | Frames
)

func (o Options) withDefaults() Options {
	if o.Tabs <= 0 {
		o.Tabs = 2
	}
	if o.PageTimeout <= 0 {
		o.PageTimeout = 15 * time.Second
	}
	if o.Quiet <= 0 {
		o.Quiet = 250 * time.Millisecond
	}
	if o.MaxBodySize <= 0 {
		o.MaxBodySize = 10 << 20
	}
	if o.MaxHeapMB <= 0 {
		o.MaxHeapMB = 256
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = 100
	}
	if o.Resources == 0 {
		o.Resources = DefaultResources
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 32 << 20
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = 10 * time.Minute
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.Policy == nil {
		o.Policy = Always
	}
	return o
}

// FindBrowser returns the path of the browser New would start with
// Options.Browser empty: $CRAWLKIT_CHROMIUM, or the first of the usual
// names on $PATH; "" if there is none.
func FindBrowser() string {
	if p := os.Getenv("CRAWLKIT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "chrome-headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Stats are the counters of a Fetcher since New.
type Stats struct {
	Pages        int64         // Fetch calls answered with a response
	NotHTML      int64         // answers returned as fetched: not 200 text/html or XHTML
	PolicyRender int64         // pages the Policy chose to render
	PolicySkip   int64         // pages the Policy chose not to render, returned as fetched
	Rendered     int64         // responses returned rendered (Response.Rendered)
	Fallbacks    int64         // pages chosen for rendering returned as fetched: timeout before load, crash, browser failure
	Timeouts     int64         // pages that reached PageTimeout (rendered with the DOM they had, or a fallback)
	Crashes      int64         // tabs that crashed (a heap past MaxHeapMB, a renderer killed)
	Restarts     int64         // browser processes started again after one died
	Requests     int64         // requests of pages fetched through Static
	CacheHits    int64         // requests of pages answered from the cache, with no request
	Refused      int64         // requests of pages the Gate refused
	Blocked      int64         // requests not made by rule: method, scheme, Resources, MaxRequests, navigation away
	Failed       int64         // requests whose fetch through Static failed
	Tabs         int64         // tabs open now
	MaxTabs      int64         // most tabs open at once
	RenderTime   time.Duration // time spent rendering pages, tab open to tab closed
}

type counters struct {
	pages, notHTML, policyRender, policySkip, rendered, fallbacks, timeouts, crashes, restarts atomic.Int64
	requests, cacheHits, refused, blocked, failed, tabs, maxTabs, renderNanos                  atomic.Int64
}

// Fetcher is a fetch.Fetcher that renders HTML pages in headless Chromium
// and returns the DOM after their scripts ran (see the package comment).
// Create it with New and stop it with Close. It is safe for concurrent
// use; at most Options.Tabs pages render at once, the other Fetch calls
// wait for a tab.
type Fetcher struct {
	opts    Options
	browser string // binary
	tabs    chan struct{}
	cache   *cache
	gate    atomic.Pointer[gateBox]
	st      counters

	base       context.Context // canceled by Close: every render ends
	baseCancel context.CancelFunc
	wg         sync.WaitGroup // renders and tab closers in flight

	mu      sync.Mutex // guards b and closed
	b       *browser
	closed  bool
	closeMu sync.Once
}

type gateBox struct{ g fetch.Gate }

var (
	_ fetch.Fetcher = (*Fetcher)(nil)
	_ fetch.Gated   = (*Fetcher)(nil)
)

// New starts a browser and returns a Fetcher rendering through it. It
// fails with ErrNoStatic without Options.Static, ErrNoBrowser when there
// is no browser binary, and a *StartError when the browser does not start
// within Options.StartTimeout.
func New(opts *Options) (*Fetcher, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Static == nil {
		return nil, ErrNoStatic
	}
	o = o.withDefaults()
	bin := o.Browser
	if bin == "" {
		bin = FindBrowser()
	}
	if bin == "" {
		return nil, ErrNoBrowser
	}
	if _, err := exec.LookPath(bin); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoBrowser, err)
	}
	f := &Fetcher{opts: o, browser: bin, tabs: make(chan struct{}, o.Tabs)}
	if o.CacheBytes > 0 {
		f.cache = newCache(o.CacheBytes, o.CacheTTL)
	}
	f.base, f.baseCancel = context.WithCancel(context.Background())
	b, err := f.start()
	if err != nil {
		f.baseCancel()
		return nil, err
	}
	f.b = b
	return f, nil
}

// Options returns the options in effect, defaults filled in.
func (f *Fetcher) Options() Options { return f.opts }

// SetGate installs the Gate every request of a page goes through, other
// than the page itself; nil restores the default, which admits the page's
// own host only (unless Options.ThirdParty) and waits for nothing. Call it
// before the first Fetch.
func (f *Fetcher) SetGate(g fetch.Gate) {
	if g == nil {
		f.gate.Store(nil)
		return
	}
	f.gate.Store(&gateBox{g})
}

func (f *Fetcher) currentGate() fetch.Gate {
	if b := f.gate.Load(); b != nil {
		return b.g
	}
	return hostGate{thirdParty: f.opts.ThirdParty}
}

// Stats returns the counters. Safe for concurrent use; O(1).
func (f *Fetcher) Stats() Stats {
	s := &f.st
	return Stats{
		Pages: s.pages.Load(), NotHTML: s.notHTML.Load(), PolicyRender: s.policyRender.Load(), PolicySkip: s.policySkip.Load(),
		Rendered: s.rendered.Load(), Fallbacks: s.fallbacks.Load(), Timeouts: s.timeouts.Load(), Crashes: s.crashes.Load(),
		Restarts: s.restarts.Load(), Requests: s.requests.Load(), CacheHits: s.cacheHits.Load(), Refused: s.refused.Load(),
		Blocked: s.blocked.Load(), Failed: s.failed.Load(), Tabs: s.tabs.Load(), MaxTabs: s.maxTabs.Load(),
		RenderTime: time.Duration(s.renderNanos.Load()),
	}
}

// Fetch fetches req through Options.Static and, when the answer is a 200
// HTML page the Policy picks, renders it: see the package comment. The
// error is the static fetch's (a *fetch.Error), or a *fetch.Error of
// KindCanceled when ctx ends while the page waits for a tab or renders;
// a page that cannot be rendered is returned as fetched, never lost.
func (f *Fetcher) Fetch(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
	if req == nil || req.URL == nil {
		return nil, &fetch.Error{Op: "request", Kind: fetch.KindBadURL, Err: fetch.ErrScheme}
	}
	if sc := req.URL.Scheme; sc != "http" && sc != "https" || req.URL.Host == "" {
		return nil, &fetch.Error{Op: "request", Kind: fetch.KindBadURL, URL: req.URL.String(), Err: fetch.ErrScheme}
	}
	f.mu.Lock()
	closed := f.closed
	if !closed {
		f.wg.Add(1)
	}
	f.mu.Unlock()
	if closed {
		return nil, &fetch.Error{Op: "render", Kind: fetch.KindOther, URL: req.URL.String(), Err: ErrClosed}
	}
	defer f.wg.Done()
	// Close ends the fetch too, so that it never waits on a slow server.
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(f.base, cancel)()

	static, err := f.opts.Static.Fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	f.st.pages.Add(1)
	if static.Status != 200 || !isHTML(static.ContentType) {
		f.st.notHTML.Add(1)
		return static, nil
	}
	if !f.opts.Policy.Render(req, static) {
		f.st.policySkip.Add(1)
		return static, nil
	}
	f.st.policyRender.Add(1)

	select {
	case f.tabs <- struct{}{}:
	case <-ctx.Done():
		if err := parent.Err(); err != nil {
			return nil, &fetch.Error{Op: "render", Kind: fetch.KindCanceled, URL: req.URL.String(), Err: err}
		}
		f.st.fallbacks.Add(1) // Close: the page is kept as fetched
		return static, nil
	}
	n := f.st.tabs.Add(1)
	for m := f.st.maxTabs.Load(); n > m && !f.st.maxTabs.CompareAndSwap(m, n); m = f.st.maxTabs.Load() {
	}
	start := time.Now()
	b, err := f.current()
	if err != nil {
		f.releaseTab(start)
		f.st.fallbacks.Add(1)
		return static, nil
	}
	s := newSession(f, b, req.URL, static)
	out, err := s.run(ctx, parent)
	// The tab closes in the background, holding its place in the pool
	// until it is gone, so that a page cut at its deadline returns now
	// and the pool still never has more than Tabs tabs.
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		s.close()
		f.releaseTab(start)
	}()
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (f *Fetcher) releaseTab(start time.Time) {
	f.st.renderNanos.Add(int64(time.Since(start)))
	f.st.tabs.Add(-1)
	<-f.tabs
}

// isHTML reports the media types a browser renders as an HTML document.
func isHTML(mt string) bool { return mt == "text/html" || mt == "application/xhtml+xml" }

// Close stops the browser, ending every render in progress (their pages
// are returned as fetched), and removes the browser's temporary profile.
// It returns within about ten seconds whatever the pages do; calling it
// again does nothing.
func (f *Fetcher) Close() error {
	var err error
	f.closeMu.Do(func() {
		f.mu.Lock()
		f.closed = true
		b := f.b
		f.b = nil
		f.mu.Unlock()
		f.baseCancel()
		done := make(chan struct{})
		go func() { f.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			err = errors.New("render: renders still in flight after 10s; browser stopped under them")
		}
		if b != nil {
			b.stop()
		}
		// The browser is gone: whatever waited on it returns.
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			err = errors.New("render: renders still in flight after the browser stopped")
		}
	})
	return err
}

// current returns the running browser, starting a new one if the last
// one died (a crash, an out-of-memory kill).
func (f *Fetcher) current() (*browser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, ErrClosed
	}
	if f.b != nil && f.b.alive() {
		return f.b, nil
	}
	if old := f.b; old != nil {
		// The caller's Fetch holds a count of wg, so Close waits for this.
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			old.stop()
		}()
	}
	b, err := f.start()
	if err != nil {
		f.b = nil
		return nil, err
	}
	f.st.restarts.Add(1)
	f.b = b
	return b, nil
}

// browser is one browser process and its root chromedp context.
type browser struct {
	ctx         context.Context // chromedp context of the browser; done when it dies
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	tmp         string // the browser's TMPDIR: its shared-memory files, which a killed browser leaves
	stopOnce    sync.Once
}

func (b *browser) alive() bool { return b.ctx.Err() == nil }

// stop kills the browser process and waits until it is gone and its
// profile directory removed.
func (b *browser) stop() {
	b.stopOnce.Do(func() {
		b.cancel()
		b.allocCancel() // returns once the processes are gone and the profile removed
		_ = os.RemoveAll(b.tmp)
	})
}

// start launches a browser. Every request of its pages is intercepted
// (see session); the proxy and resolver flags make any request that
// escaped interception, a worker's say, fail instead of reaching the
// network.
func (f *Fetcher) start() (*browser, error) {
	o := f.opts
	tmp, err := os.MkdirTemp("", "crawlkit-render-")
	if err != nil {
		return nil, &StartError{Browser: f.browser, Err: err}
	}
	flags := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(f.browser),
		chromedp.Env("TMPDIR="+tmp),
		chromedp.Flag("disable-popup-blocking", false), // a page's window.open must not open tabs past the pool
		chromedp.Flag("js-flags", fmt.Sprintf("--max-old-space-size=%d", o.MaxHeapMB)),
		chromedp.Flag("proxy-server", "http://render-guard.invalid:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	if o.Resources&Images == 0 {
		flags = append(flags, chromedp.Flag("blink-settings", "imagesEnabled=false"))
	}
	if os.Geteuid() == 0 {
		flags = append(flags, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), flags...)
	bctx, bcancel := chromedp.NewContext(actx)
	errc := make(chan error, 1)
	go func() { errc <- chromedp.Do(bctx) }()
	select {
	case err = <-errc:
	case <-time.After(o.StartTimeout):
		err = fmt.Errorf("no answer within %v", o.StartTimeout)
	}
	b := &browser{ctx: bctx, cancel: bcancel, allocCancel: acancel, tmp: tmp}
	if err != nil {
		b.stop()
		return nil, &StartError{Browser: f.browser, Err: err}
	}
	return b, nil
}

// sameHost reports whether a and b name the same host (port and case
// aside): the politeness unit of the page.
func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(strings.TrimSuffix(a.Hostname(), "."), strings.TrimSuffix(b.Hostname(), "."))
}

// hostGate is the Gate of a Fetcher without one: the page's own host is
// admitted, others only with Options.ThirdParty. It never waits: the
// session makes one request at a time, inside the politeness slot the
// caller holds for the page's host.
type hostGate struct{ thirdParty bool }

func (g hostGate) Admit(_ context.Context, page, sub *url.URL) (func(), error) {
	if !g.thirdParty && !sameHost(page, sub) {
		return nil, ErrOtherHost
	}
	return func() {}, nil
}
