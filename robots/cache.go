package robots

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/crawlkit/crawlkit/internal/retryafter"
)

// Response is what a FetchFunc reports for one HTTP request.
type Response struct {
	Status   int    // HTTP status code
	Body     []byte // body, at least its first MaxSize bytes
	Location string // the Location of a 3xx, absolute or relative to the request
	// RetryAfter is the server's Retry-After with a 429 or 5xx: the
	// next attempt waits at least that long (at most 24 h).
	RetryAfter time.Duration
}

// FetchFunc makes one GET request for rawURL without following redirects: the
// Cache follows them itself, so that it can count hops (RFC 9309 §2.3.1.2). A
// non-nil error is a network failure. A FetchFunc must be safe for concurrent
// use; it is called at most once at a time per host and scheme. Between
// two hops to the same host the Cache waits Options.HopGap.
type FetchFunc func(ctx context.Context, rawURL string) (*Response, error)

// HTTPFetch returns a FetchFunc over client (http.DefaultClient when nil)
// that sends userAgent, reads at most MaxSize+1 bytes of the body and leaves
// redirects to the Cache. It does not mutate client. The FetchFunc is safe
// for concurrent use.
func HTTPFetch(client *http.Client, userAgent string) FetchFunc {
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return func(ctx context.Context, rawURL string) (*Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		if err != nil {
			return nil, err
		}
		if userAgent != "" {
			req.Header.Set("User-Agent", userAgent)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxSize+1))
		if err != nil && resp.StatusCode/100 == 2 {
			// A 2xx whose body broke off is a network failure, not a file.
			return nil, err
		}
		ra, _ := retryafter.Parse(resp.Header.Get("Retry-After"), time.Now())
		return &Response{Status: resp.StatusCode, Body: body, Location: resp.Header.Get("Location"), RetryAfter: ra}, nil
	}
}

// Options configure a Cache. The zero value of every field selects its
// default.
type Options struct {
	// Fetch makes the requests. Default: HTTPFetch(http.DefaultClient,
	// Agent). A crawler passes its own fetcher here so that robots.txt
	// requests obey the same politeness and address rules as pages.
	Fetch FetchFunc
	// Agent is the crawler's product token (RFC 9309 §2.2.1: letters, '-'
	// and '_', e.g. "ExampleBot"), which selects the group of rules. The
	// User-Agent header is the fetcher's business. Default "crawlkit".
	Agent string
	// TTL is how long fetched rules are used before they are fetched again.
	// Default 24 h, the most RFC 9309 §2.4 allows.
	TTL time.Duration
	// ErrorTTL is the longest the outcome of a failed fetch (5xx, 429,
	// network error) is kept before the next attempt. Default 10 min.
	ErrorTTL time.Duration
	// ErrorRetry is how long the first failure of a run is kept: the next
	// attempt comes ErrorRetry after it, and each failure in a row doubles
	// the wait, up to ErrorTTL (1 s, 2 s, 4 s ... 10 min). A server that
	// answers 503 for a moment is asked again soon, not ten minutes later
	// (Google, too, retries a robots.txt that answers 5xx until it gets
	// another answer), and one that keeps failing is asked about ten
	// times in its first ten minutes. A Retry-After the failed answer
	// carried (Response.RetryAfter) is waited out if it is longer.
	// Default 1 s; at ErrorTTL or above, every failure is kept for
	// ErrorTTL.
	ErrorRetry time.Duration
	// MaxEntries bounds the number of hosts cached; the least recently used
	// host is dropped first. Default 100 000 (about 1 KiB each for a typical
	// file).
	MaxEntries int
	// MaxCrawlDelay caps the Crawl-delay Delay reports. A host asking for
	// more is not dropped but visited once per MaxCrawlDelay, and Delay tells
	// the caller it was capped so the frontier can defer it. Default 60 s.
	MaxCrawlDelay time.Duration
	// UnreachableAfter is how long a host may keep failing before the Cache
	// stops treating it as "complete disallow" and, lacking a cached copy,
	// treats it as having no robots.txt, as RFC 9309 §2.3.1.4 allows after a
	// "reasonably long period". Default 30 days.
	UnreachableAfter time.Duration
	// MaxRedirects is the number of redirects followed; one more makes the
	// file "unavailable" (allow all). Default 5 (RFC 9309 §2.3.1.2).
	MaxRedirects int
	// FetchTimeout bounds one robots.txt fetch including redirects. Default
	// 30 s.
	FetchTimeout time.Duration
	// HopGap, if set, is the politeness gap the Cache waits before a
	// redirect's next hop to the same host as the hop before, given how
	// long that hop took (a crawler passes its frontier's rule, e.g.
	// k × took). Default nil: the next hop is made at once.
	HopGap func(took time.Duration) time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

func (o *Options) ensureDefaults() {
	if o.Agent == "" {
		o.Agent = "crawlkit"
	}
	if o.Fetch == nil {
		o.Fetch = HTTPFetch(nil, o.Agent)
	}
	if o.TTL <= 0 {
		o.TTL = 24 * time.Hour
	}
	if o.ErrorTTL <= 0 {
		o.ErrorTTL = 10 * time.Minute
	}
	if o.ErrorRetry <= 0 {
		o.ErrorRetry = time.Second
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 100_000
	}
	if o.MaxCrawlDelay <= 0 {
		o.MaxCrawlDelay = 60 * time.Second
	}
	if o.UnreachableAfter <= 0 {
		o.UnreachableAfter = 30 * 24 * time.Hour
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 5
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Stats counts what a Cache has done since NewCache, so that a crawler can
// report robots.txt failures instead of losing them.
type Stats struct {
	Hits        int64 // answers from a fresh cached entry
	Waits       int64 // answers that waited for a fetch in flight
	Fetches     int64 // robots.txt fetches (one per host per expiry)
	Unavailable int64 // fetches that found no file: 4xx, redirect limit (allow all)
	Unreachable int64 // fetches that failed: 5xx, 429, network error
	Stale       int64 // failures answered with the last good copy
	Fallbacks   int64 // failures answered "allow all" after UnreachableAfter
	Evictions   int64 // hosts dropped to respect MaxEntries
}

// hostKey identifies a robots.txt: RFC 9309 §2.3 scopes it to scheme, host
// and port.
type hostKey struct{ scheme, host string }

func (k hostKey) String() string { return k.scheme + "://" + k.host }

// entry is the cached state of one host; all fields are guarded by Cache.mu.
type entry struct {
	key          hostKey
	rules        *Rules        // in force now; nil before the first fetch ends
	good         *Rules        // last copy fetched with 2xx/4xx, used while failing
	failingSince time.Time     // start of the current run of failures; zero when healthy
	failures     int           // fetches failed in a row; 0 when healthy
	expires      time.Time     // when rules must be fetched again
	fetching     chan struct{} // closed when the fetch in flight ends; nil when idle
	prev, next   *entry        // LRU list, most recent at Cache.head
	unreachable  bool          // rules is "disallow all" because the last fetch failed
	lastErr      error         // the network failure of the last fetch, if any
	lastStatus   int           // the status of the last fetch's failed answer (5xx, 429), if any
	lastTook     time.Duration // how long the last fetch's last request took
}

// Verdict is Check's answer about one URL.
type Verdict struct {
	// Allowed reports whether the Cache's agent may fetch the URL.
	Allowed bool
	// Unreachable reports that the host's robots.txt could not be
	// fetched (a 5xx or 429 answer, a network failure) and no earlier
	// copy stands in: Allowed is false because RFC 9309 §2.3.1.4 says
	// to assume complete disallow, not because a rule says so. A crawler
	// counts such URLs as failures to reach the host, not as denials.
	Unreachable bool
	// Err is the network failure that made robots.txt unreachable (nil
	// when the server answered 5xx or 429, or when Unreachable is false),
	// and Status that answer's status (0 for a network failure).
	Err    error
	Status int
	// Failures is how many fetches of robots.txt have failed in a row,
	// and RetryAt when the Cache will fetch it again (the first Check
	// from then on does), when Unreachable. A crawler that holds the
	// host's URLs until RetryAt, while Failures is small, does not lose
	// them to a server that failed for a moment.
	Failures int
	RetryAt  time.Time
	// Fetched reports that this call fetched robots.txt (it was not
	// cached, or had expired) and FetchTime how long its last request
	// took (the last redirect hop): it was a request to the host, so a
	// polite caller counts it before contacting the host again. A call
	// that only waited for another caller's fetch has Fetched false.
	Fetched   bool
	FetchTime time.Duration
	// CrawlDelay is the host's Crawl-delay for the agent, capped at
	// Options.MaxCrawlDelay, and CrawlDelayCapped whether it was (see
	// Delay).
	CrawlDelay       time.Duration
	CrawlDelayCapped bool
}

// Cache fetches, caches and answers robots.txt rules per host (scheme, host
// and port), as §20.2.1 of the book asks: a crawler checks each URL
// immediately before fetching it, and the Cache makes that check a map lookup.
//
// One fetch per host runs at a time: concurrent callers for the same host wait
// for it. Fetches run in goroutines owned by the Cache, so a caller giving up
// (its context ends) does not abort a fetch others wait for; Close cancels
// them and waits for them to end.
//
// A Cache is safe for concurrent use. A hit costs one mutex acquisition, a
// map lookup and Rules.Allowed, and does not allocate for request URIs up to
// 512 bytes.
type Cache struct {
	opts   Options
	ctx    context.Context // cancelled by Close; parent of every fetch
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	stats   Stats
	entries map[hostKey]*entry
	head    *entry // most recently used
	tail    *entry // least recently used
}

// NewCache returns a Cache configured by opts (nil for all defaults). The
// Cache must be closed with Close.
func NewCache(opts *Options) *Cache {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.ensureDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Cache{opts: o, ctx: ctx, cancel: cancel, entries: make(map[hostKey]*entry)}
}

// Close cancels the fetches in flight, waits for their goroutines to end and
// makes every later call fail with ErrClosed. It is idempotent.
func (c *Cache) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	return nil
}

func keyOf(u *url.URL) (hostKey, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return hostKey{}, ErrScheme
	}
	if u.Host == "" {
		return hostKey{}, ErrNoHost
	}
	host := strings.ToLower(u.Host)
	if scheme == "http" {
		host = strings.TrimSuffix(host, ":80")
	} else {
		host = strings.TrimSuffix(host, ":443")
	}
	return hostKey{scheme, host}, nil
}

// Allowed reports whether the Cache's agent may fetch u, fetching the
// host's robots.txt first if it is not cached or has expired. An unreachable
// robots.txt is not an error: it answers false (complete disallow); Check
// tells it apart from a rule. Errors are *Error wrapping ErrScheme,
// ErrNoHost, ErrClosed or the context's error when ctx ends while waiting.
func (c *Cache) Allowed(ctx context.Context, u *url.URL) (bool, error) {
	v, err := c.check(ctx, u, "allowed")
	return v.Allowed, err
}

// Check is Allowed with the whole answer: whether robots.txt was
// unreachable rather than denying, whether this call fetched it and how
// long that took, and the host's Crawl-delay. It is what a crawler calls
// immediately before fetching u (IIR §20.2.1). Errors are as for Allowed.
// A hit costs what Allowed costs and does not allocate.
func (c *Cache) Check(ctx context.Context, u *url.URL) (Verdict, error) {
	return c.check(ctx, u, "check")
}

// Peek is Check without a fetch: it answers from the cache alone, and
// ok is false when u's host has no fresh rules cached (Check would fetch
// them). Fetched is always false. Safe for concurrent use; a hit costs
// what Check's does.
func (c *Cache) Peek(u *url.URL) (v Verdict, ok bool) {
	key, err := keyOf(u)
	if err != nil {
		return Verdict{}, false
	}
	c.mu.Lock()
	e := c.entries[key]
	if e == nil || e.rules == nil || e.fetching != nil || !c.opts.Now().Before(e.expires) {
		c.mu.Unlock()
		return Verdict{}, false
	}
	r := e.rules
	e.failure(&v)
	c.mu.Unlock()
	if d := r.CrawlDelay(c.opts.Agent); d > c.opts.MaxCrawlDelay {
		v.CrawlDelay, v.CrawlDelayCapped = c.opts.MaxCrawlDelay, true
	} else {
		v.CrawlDelay = d
	}
	v.Allowed = r.Allowed(c.opts.Agent, u.RequestURI())
	return v, true
}

func (c *Cache) check(ctx context.Context, u *url.URL, op string) (Verdict, error) {
	if u == nil {
		return Verdict{}, &Error{Op: op, Err: ErrNoHost}
	}
	key, err := keyOf(u)
	if err != nil {
		return Verdict{}, &Error{Op: op, Host: u.Scheme + "://" + u.Host, Err: err}
	}
	if u.Path == "/robots.txt" {
		return Verdict{Allowed: true}, nil
	}
	var v Verdict
	r, err := c.get(ctx, key, &v)
	if err != nil {
		return Verdict{}, &Error{Op: op, Host: key.String(), Err: err}
	}
	if d := r.CrawlDelay(c.opts.Agent); d > c.opts.MaxCrawlDelay {
		v.CrawlDelay, v.CrawlDelayCapped = c.opts.MaxCrawlDelay, true
	} else {
		v.CrawlDelay = d
	}
	if u.Opaque != "" {
		v.Allowed = r.Allowed(c.opts.Agent, u.RequestURI())
		return v, nil
	}
	// The request URI, assembled on the stack: u.RequestURI allocates when
	// there is a query.
	var buf [512]byte
	b := append(buf[:0], u.EscapedPath()...)
	if u.ForceQuery || u.RawQuery != "" {
		b = append(b, '?')
		b = append(b, u.RawQuery...)
	}
	v.Allowed = r.Allowed(c.opts.Agent, unsafe.String(unsafe.SliceData(b), len(b)))
	return v, nil
}

// Get returns the rules in force for u's host, fetching them if needed, for
// callers that want more than one answer (Sitemaps, CrawlDelay for another
// agent). Errors are as for Allowed.
func (c *Cache) Get(ctx context.Context, u *url.URL) (*Rules, error) {
	if u == nil {
		return nil, &Error{Op: "get", Err: ErrNoHost}
	}
	key, err := keyOf(u)
	if err != nil {
		return nil, &Error{Op: "get", Host: u.Scheme + "://" + u.Host, Err: err}
	}
	r, err := c.get(ctx, key, nil)
	if err != nil {
		return nil, &Error{Op: "get", Host: key.String(), Err: err}
	}
	return r, nil
}

// Delay returns the Crawl-delay host asks of the Cache's agent, capped at
// Options.MaxCrawlDelay, and whether it was capped. host is a URL's Host
// ("example.com" or "example.com:8080"); when both its http and https
// robots.txt are cached the larger delay applies. Delay never fetches: a host
// not cached yet has no delay. Capped hosts are still crawled, once per
// MaxCrawlDelay; the frontier should defer them rather than drop them (the
// uncapped value is Get(ctx, u).CrawlDelay(agent)). Delay costs two map
// lookups under the Cache's mutex.
func (c *Cache) Delay(host string) (d time.Duration, capped bool) {
	host = strings.ToLower(host)
	c.mu.Lock()
	for _, k := range [...]hostKey{{"http", strings.TrimSuffix(host, ":80")}, {"https", strings.TrimSuffix(host, ":443")}} {
		if e := c.entries[k]; e != nil && e.rules != nil {
			d = max(d, e.rules.CrawlDelay(c.opts.Agent))
		}
	}
	c.mu.Unlock()
	if d > c.opts.MaxCrawlDelay {
		return c.opts.MaxCrawlDelay, true
	}
	return d, false
}

// Stats returns the counters so far. Safe for concurrent use.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Len returns the number of hosts cached. Safe for concurrent use.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// get returns the rules in force for key, fetching them first when they
// are missing or expired. v, when not nil, receives what the entry says
// about reaching the host and, if this call started the fetch, its
// duration.
func (c *Cache) get(ctx context.Context, key hostKey, v *Verdict) (*Rules, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	e := c.entries[key]
	if e == nil {
		e = &entry{key: key}
		c.entries[key] = e
		c.pushFront(e)
	} else if c.head != e {
		c.unlink(e)
		c.pushFront(e)
	}
	started := false
	if e.fetching == nil && (e.rules == nil || !c.opts.Now().Before(e.expires)) {
		e.fetching = make(chan struct{})
		c.stats.Fetches++
		c.wg.Add(1)
		started = true
		go c.refresh(e, e.fetching)
	}
	c.evict()
	if e.fetching == nil {
		r := e.rules
		c.stats.Hits++
		if v != nil {
			e.failure(v)
		}
		c.mu.Unlock()
		return r, nil
	}
	done := e.fetching
	c.stats.Waits++
	c.mu.Unlock()

	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, ErrClosed
	}
	c.mu.Lock()
	r, closed := e.rules, c.closed
	if v != nil {
		e.failure(v)
		if started {
			v.Fetched, v.FetchTime = true, e.lastTook
		}
	}
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return r, nil
}

// refresh fetches e's robots.txt and installs the outcome.
func (c *Cache) refresh(e *entry, done chan struct{}) {
	defer c.wg.Done()
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.FetchTimeout)
	var failed Response // the failed answer's Status and RetryAfter
	r, outcome, took, ferr := c.fetch(ctx, e.key, &failed)
	cancel()
	now := c.opts.Now()

	c.mu.Lock()
	e.lastTook, e.lastErr, e.lastStatus, e.unreachable = took, ferr, failed.Status, false
	if outcome != unreachable {
		if outcome == unavailable {
			c.stats.Unavailable++
		}
		e.rules, e.good, e.failingSince, e.failures = r, r, time.Time{}, 0
		e.expires = now.Add(c.opts.TTL)
	} else {
		c.stats.Unreachable++
		if e.failingSince.IsZero() {
			e.failingSince = now
		}
		e.failures++
		switch {
		case e.good != nil:
			// §2.4: a cached copy may be used beyond 24 h while the file is
			// unreachable.
			e.rules = e.good
			c.stats.Stale++
		case now.Sub(e.failingSince) >= c.opts.UnreachableAfter:
			e.rules = allowAllRules
			c.stats.Fallbacks++
		default:
			e.rules = disallowAllRules
			e.unreachable = true
		}
		e.expires = now.Add(max(c.errorWait(e.failures), min(failed.RetryAfter, retryafter.Max)))
	}
	e.fetching = nil
	close(done)
	c.mu.Unlock()
}

// errorWait is how long the n-th failure in a row is kept: ErrorRetry
// doubled n − 1 times, at most ErrorTTL.
func (c *Cache) errorWait(n int) time.Duration {
	d := c.opts.ErrorRetry
	for ; n > 1 && d < c.opts.ErrorTTL; n-- {
		d *= 2
	}
	return min(d, c.opts.ErrorTTL)
}

// failure fills v's Unreachable, Err, Status, Failures and RetryAt from e when
// its rules stand for an unreachable robots.txt; c.mu is held.
func (e *entry) failure(v *Verdict) {
	if e.unreachable {
		v.Unreachable, v.Err, v.Status, v.Failures, v.RetryAt = true, e.lastErr, e.lastStatus, e.failures, e.expires
	}
}

type outcome uint8

const (
	fetched     outcome = iota // 2xx: the file's rules
	unavailable                // 4xx or redirect limit: allow all
	unreachable                // 5xx, 429, network failure
)

// fetch gets the robots.txt of key, following up to MaxRedirects
// redirects, and returns how long its last request took. err is the
// network failure when the outcome is unreachable for want of an answer;
// failed receives the Status and RetryAfter of a 429 or 5xx answer.
func (c *Cache) fetch(ctx context.Context, key hostKey, failed *Response) (*Rules, outcome, time.Duration, error) {
	target := &url.URL{Scheme: key.scheme, Host: key.host, Path: "/robots.txt"}
	var took time.Duration
	for hop := 0; ; hop++ {
		start := time.Now()
		resp, err := c.opts.Fetch(ctx, target.String())
		took = time.Since(start)
		if err != nil || resp == nil {
			if err == nil {
				err = errNoResponse
			}
			return disallowAllRules, unreachable, took, err
		}
		switch s := resp.Status; {
		case s >= 200 && s < 300:
			return Parse(s, resp.Body), fetched, took, nil
		case s >= 300 && s < 400:
			if hop >= c.opts.MaxRedirects || resp.Location == "" {
				return allowAllRules, unavailable, took, nil // §2.3.1.2
			}
			next, err := target.Parse(resp.Location)
			if err != nil || (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" {
				return allowAllRules, unavailable, took, nil
			}
			if c.opts.HopGap != nil && strings.EqualFold(next.Host, target.Host) {
				if err := sleep(ctx, c.opts.HopGap(took)); err != nil {
					return disallowAllRules, unreachable, took, err
				}
			}
			target = next
		case s == 429 || s >= 500 && s < 600:
			failed.Status, failed.RetryAfter = s, resp.RetryAfter
			return disallowAllRules, unreachable, took, nil
		case s >= 400 && s < 500:
			return allowAllRules, unavailable, took, nil
		default:
			return disallowAllRules, unreachable, took, nil
		}
	}
}

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Cache) pushFront(e *entry) {
	e.prev, e.next = nil, c.head
	if c.head != nil {
		c.head.prev = e
	}
	c.head = e
	if c.tail == nil {
		c.tail = e
	}
}

func (c *Cache) unlink(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// evict drops least recently used hosts beyond MaxEntries, skipping hosts with
// a fetch in flight: dropping one would let a second fetch of the same host
// start while the first still runs.
func (c *Cache) evict() {
	for e := c.tail; len(c.entries) > c.opts.MaxEntries && e != nil; {
		prev := e.prev
		if e.fetching == nil {
			c.unlink(e)
			delete(c.entries, e.key)
			c.stats.Evictions++
		}
		e = prev
	}
}
