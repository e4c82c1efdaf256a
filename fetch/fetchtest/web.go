package fetchtest

import (
	"context"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes a simulated web. The zero value is a small web of 20 hosts;
// every field's default is given in its comment.
type Config struct {
	// Seed selects the web: the same Seed (and the same other fields) gives
	// the same hosts, the same pages byte for byte (the server port aside)
	// and the same link graph. Zero is a valid seed.
	Seed int64

	// Hosts is the number of ordinary hosts, named h000, h001, ... under
	// Domain. Default 20. The special-purpose hosts (traps, mirrors,
	// redirects, statuses, legacy charsets) come on top.
	Hosts int

	// Domain is the suffix of every host name. Default "sim.test".
	Domain string

	// MeanPages is the mean number of pages of an ordinary host; the
	// counts follow a Pareto distribution (shape 1.5), so most hosts are
	// small and a few are large. Default 20.
	MeanPages int

	// MaxPages caps the pages of one host. Default 50 × MeanPages.
	MaxPages int

	// Mirrors is the number of mirror hosts (mirror0, mirror1, ...), each
	// serving byte-identical copies of one ordinary host. Default 2;
	// negative means none. At most Hosts.
	Mirrors int

	// NearDuplicates is the number of clusters of near-duplicate articles
	// (the same story on 2–4 hosts with a different date line and ads
	// block). Default max(1, Hosts/4); negative means none.
	NearDuplicates int

	// Latency delays every response by this much (after the request is
	// logged as started). Default 0.
	Latency time.Duration

	// HostLatency overrides Latency for the named hosts (case and a port
	// are ignored). NewWeb copies the map.
	HostLatency map[string]time.Duration

	// RateLimits makes the named hosts (case and a port are ignored)
	// throttle: a request that starts sooner than Interval after the
	// host's previous request (throttled ones count, as in a token
	// bucket of one) is answered Status without Retry-After, as many
	// rate limiters in front of real sites do. A crawler that comes back
	// at its usual gap is throttled again; one that backs off gets
	// through. robots.txt is throttled like the rest. NewWeb copies the
	// map.
	RateLimits map[string]RateLimit

	// CrawlDelay is the Crawl-delay the "crawl-delay" robots variant
	// announces. Default 1s.
	CrawlDelay time.Duration

	// RetryAfter is the Retry-After sent with 429 and 503 answers. The
	// header counts whole seconds, so it is rounded up: 50ms is sent as 1.
	// Default 1s.
	RetryAfter time.Duration

	// BusyRobots, if above 0, makes one ordinary host in BusyRobots whose
	// robots.txt is a file (hNNN with NNN mod BusyRobots = BusyRobots − 1,
	// its variant served 200) answer the first request for it 503 with
	// Retry-After, as a server busy for a moment would, and the file
	// after that. The ground truth is the file's: a crawler that takes
	// the 503 for the host's last word misses the host's pages. Default
	// 0: none.
	BusyRobots int

	// ChangePeriods lists the change periods an HTML page may have; each
	// page draws one of them (uniformly, from the seed). A period of 0
	// means the page never changes. Default {0, 0, 1h, 24h, 168h}; use
	// {0} for a web that never changes.
	ChangePeriods []time.Duration

	// Clock is the time the web believes it is, which decides the current
	// version of every changing page. Default time.Now. Tests set a
	// function over a variable they advance; it is called from the
	// serving goroutines, so it must be safe for concurrent use. The
	// request log always uses the real time.
	Clock func() time.Time

	// LinkHostile makes h000's home page link the Hostile host's
	// resources (huge bodies, a gzip bomb, slow answers, ...). Default
	// false: they are reachable only by asking for them.
	LinkHostile bool

	// Javadoc adds the Javadoc host, javadoc.<Domain>, linked from h000's
	// home page: an old-style javadoc site two of whose pages only links
	// inside <NOSCRIPT> lead to (JavadocNoscriptOnly). Its pages are in
	// Pages and, for a parser that reads <noscript> as a browser with
	// scripting disabled does, in Reachable. Default false: no such host.
	Javadoc bool

	// Aliases adds the Aliases site, alias.<Domain>, linked from h000's
	// home page, and its www alias, www.alias.<Domain>, which serves the
	// same bytes for every path: a small project's site whose pages
	// answer under many URLs (the www host name, content-neutral query
	// parameters such as ?ref=, ?utm_source= and ?sessionid=, dir/ and
	// dir/index.html, a directory /current/ that is a symlink of /v3/),
	// next to URLs that only look like aliases: ?page=N of its news
	// listing and ?lang= of its about page change the content, /v2/
	// shares most files with /v3/ but not all, and a dozen API class pages
	// are near-duplicates each holding the only link to a page (see
	// Aliases, the label, for the site's map). Canonical maps every URL of
	// both hosts to the distinct page it serves; Pages and Reachable list
	// each distinct page once, under its canonical URL, and Missed counts
	// a page as requested whatever alias fetched it; AliasFetches reads a
	// request log's distinct pages and identical-content fetches.
	//
	// Web.Client and Web.DialContext reach both hosts by themselves. Both
	// names are under Domain, so the DNS wildcard for Domain resolves
	// them: dnstest's AddWildcard(Domain, ...) answers for every name any
	// number of labels under Domain, www.alias.<Domain> included; nothing
	// more is needed. Default false: no such hosts.
	Aliases bool

	// AliasScale multiplies the Aliases site's news articles (25, five a
	// listing page) and API classes (12), with the links and aliases
	// they bring, so that the site's duplicates outnumber the evidence a
	// rule needs as those of real sites do. The manuals, /current/ and
	// the /v2/ decoy keep their 30 files. Default 1; at most
	// MaxAliasScale.
	AliasScale int

	// SitemapOnly gives every ordinary host (and so its mirrors) 1 +
	// pages/8 more HTML pages under /more/ that no page links to: only
	// the host's sitemaps list them. They are in Pages and PagesOf, not
	// in Reachable, which follows links; SitemapOnlyPages lists them.
	// Default false: sitemaps list only pages links reach.
	SitemapOnly bool

	// Canonicals adds the Canonicals site, canon.<Domain>, linked from
	// h000's home page, and its mobile host m.canon.<Domain>: articles
	// whose variants (?ref=, printer, mobile, AMP with the canonical URL
	// in a Link header, and a syndicated story naming another site's
	// page) name the article as their canonical URL (see Canonicals, the
	// label). Every URL of the site is in Pages and Reachable (a variant
	// is a resource of its own, whatever it names); RelCanonical says
	// what each names. Both names are under Domain. Default false.
	Canonicals bool

	// SubdomainTrap is the registrable domain of a subdomain-explosion trap
	// (for example "explode.test"), the way wildcard DNS lets one site
	// mint host names without end. Default "": no such trap. When set, the
	// server answers every host name under it, the bare domain included.
	// Host x<id>.SubdomainTrap, <id> in lower-case base 36 without leading
	// zeros, has three pages, /, /p/1 and /p/2; each has a short title, a
	// sentence or two of generated text, links to the host's other two
	// pages and to the home pages of 30 hosts that are new: x<id×30+1> to
	// x<id×30+30>. Any other name under the domain has the pages of an id
	// hashed from the name. robots.txt and every other path answer 404.
	// h000's home page links the entry, x0.SubdomainTrap; Traps and IsTrap
	// report the trap, and Pages, Reachable and Missed leave it out.
	//
	// Web.Client and Web.DialContext reach these hosts by themselves; a DNS
	// server must answer for them too: dnstest's
	// AddWildcard(SubdomainTrap, ...) next to the one for Domain, and
	// AddAddr(SubdomainTrap, ...) for the bare domain, which a wildcard
	// does not cover. Host names stay valid DNS labels (63 bytes) for
	// about 60 generations below x0.
	//
	// SubdomainTrap must be a registrable domain (eTLD+1 by the public
	// suffix list) disjoint from Domain: neither Domain, nor under it, nor
	// above it, so that the ordinary hosts keep a registrable domain of
	// their own. NewWeb panics otherwise.
	SubdomainTrap string

	// Members adds the Members host, members.<Domain>: a login form
	// (POST user=MembersUser and password=MembersPassword) that answers
	// 303 with a session cookie, a cookie for every host under Domain and
	// a Secure one, and a tree of protected pages under /members/ that
	// answer 302 to the form without the session cookie and 403 with one
	// the server never issued (see MembersPages, Sessions). Nothing links
	// the host: a crawl of it starts from its home page or /members/.
	// Default false: no such host.
	Members bool

	// Scripts adds two hosts whose pages need scripts to show their
	// content and links, both linked from h000's home page: the web
	// application app.<Domain> (see ScriptApp), whose every page but the
	// home page only scripts lead to, and the shop shop.<Domain> (see
	// Shop), half of whose product pages carry their product in their
	// HTML and half get it from a script. Pages lists their pages; Links
	// and Reachable see what a crawler that runs no scripts sees, and
	// RenderedLinks, ReachableRendered and RenderOnly what a browser
	// sees. Scripts, styles and data files are not pages. Default false:
	// no such hosts.
	Scripts bool

	// Addr is the listen address. Default "127.0.0.1:0" (a random free
	// port on loopback).
	Addr string
}

func (c *Config) ensureDefaults() {
	if c.Hosts <= 0 {
		c.Hosts = 20
	}
	if c.Domain == "" {
		c.Domain = "sim.test"
	}
	c.Domain = strings.ToLower(strings.Trim(c.Domain, "."))
	if c.MeanPages <= 0 {
		c.MeanPages = 20
	}
	if c.MaxPages <= 0 {
		c.MaxPages = 50 * c.MeanPages
	}
	switch {
	case c.Mirrors == 0:
		c.Mirrors = 2
	case c.Mirrors < 0:
		c.Mirrors = 0
	}
	c.Mirrors = min(c.Mirrors, c.Hosts)
	switch {
	case c.NearDuplicates == 0:
		c.NearDuplicates = max(1, c.Hosts/4)
	case c.NearDuplicates < 0:
		c.NearDuplicates = 0
	}
	if c.CrawlDelay <= 0 {
		c.CrawlDelay = time.Second
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = time.Second
	}
	if len(c.ChangePeriods) == 0 {
		c.ChangePeriods = []time.Duration{0, 0, time.Hour, 24 * time.Hour, 168 * time.Hour}
	}
	// The caller keeps its slice and map; the web must not see later edits.
	c.ChangePeriods = slices.Clone(c.ChangePeriods)
	hl := make(map[string]time.Duration, len(c.HostLatency))
	for h, d := range c.HostLatency {
		hl[hostOnly(h)] = d
	}
	c.HostLatency = hl
	rl := make(map[string]RateLimit, len(c.RateLimits))
	for h, l := range c.RateLimits {
		if l.Status == 0 {
			l.Status = http.StatusTooManyRequests
		}
		rl[hostOnly(h)] = l
	}
	c.RateLimits = rl
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	c.SubdomainTrap = strings.ToLower(strings.Trim(c.SubdomainTrap, "."))
}

// Labels of the special-purpose hosts; the host name is the label, a dot and
// Config.Domain (see Web.Host).
const (
	// CalendarTrap serves an endless calendar: /calendar/YYYY/MM links to
	// the previous and the next month for every year from 1 to 9999.
	CalendarTrap = "trap-calendar"
	// SessionTrap serves 20 items whose links carry a session id
	// (?sid=...) that is new on every response.
	SessionTrap = "trap-session"
	// DeepTrap serves a page at every path /d/x/y/z/... (letters only),
	// each linking one level deeper.
	DeepTrap = "trap-deep"
	// Redirects serves redirect chains /chain/C/K (301, 302, 307, 308,
	// ending on an ordinary page) and loops /loop/0/K (two steps) and
	// /loop/1/0 (to itself).
	Redirects = "redirect"
	// Statuses answers /CODE/anything with that status for any CODE in
	// 400..599; 429 and 503 carry Retry-After. /retry/N/anything (N in
	// 1..9) answers 503 with Retry-After to its first N requests, then 200.
	Statuses = "status"
	// Latin1 serves six HTML pages encoded in ISO-8859-1 with Content-Type
	// "text/html" and no charset parameter (odd pages have no <meta>
	// charset either).
	Latin1 = "latin1"
	// Windows1252 serves six HTML pages encoded in windows-1252 (curly
	// quotes, euro sign, dashes) with no charset in the header (odd pages
	// have no <meta> charset either).
	Windows1252 = "cp1252"
)

type hostKind uint8

const (
	kindOrdinary hostKind = iota
	kindMirror
	kindCalendar
	kindSession
	kindDeep
	kindRedirect
	kindStatus
	kindLatin1
	kindCP1252
	kindHostile
	kindJavadoc
	kindSubdomain // any host under Config.SubdomainTrap
	kindAlias     // the Aliases host and its www alias
	kindMembers   // the login-protected Members host
	kindCanon     // the Canonicals host and its mobile host
	kindApp       // the ScriptApp host (Config.Scripts)
	kindShop      // the Shop host (Config.Scripts)
)

// hostInfo is what NewWeb knows about a host without generating its pages.
type hostInfo struct {
	name    string
	kind    hostKind
	index   int // ordinary: own index; mirror: origin's index
	variant int // robots variant (ordinary and mirror hosts)
	nbase   int // pages drawn from the Pareto distribution (ordinary)
	synd    []syndRef
	model   func() *hostModel
}

// Web is a simulated web: one HTTP server on loopback that serves many
// generated virtual hosts, with the ground truth about them. Create it with
// NewWeb and stop it with Close. All methods are safe for concurrent use.
type Web struct {
	cfg       Config
	seed      int64
	ln        net.Listener
	srv       *http.Server
	tr        *http.Transport
	served    chan struct{}
	closing   chan struct{} // closed by Close: slow handlers stop
	closeOnce sync.Once
	addr      string
	port      string

	ordinary []*hostInfo
	mirrors  []*hostInfo
	byName   map[string]*hostInfo
	names    []string // sorted

	zipfCum  []float64 // cumulative host popularity for cross-host links
	clusters []cluster
	chains   []chain
	specials []link // entry points of the special hosts, linked from h000's home
	alias    func() *aliasSite

	connSeq    atomic.Uint64
	sessionSeq atomic.Uint64

	retryMu sync.Mutex
	retries map[string]int // requests seen per /retry/N/ path, and per BusyRobots robots.txt

	rateMu  sync.Mutex
	lastReq map[string]time.Time // start of the last request per rate-limited host

	mu       sync.Mutex
	log      []Request
	sessions map[string]bool // the Members host's, by token
}

// NewWeb generates the web cfg describes and starts serving it. It panics if
// it cannot listen, like httptest.NewServer, or if cfg cannot describe a web
// (a SubdomainTrap that is not a registrable domain or overlaps Domain).
// Generation is lazy: NewWeb itself costs O(Hosts); a host's pages are
// generated on its first use.
func NewWeb(cfg Config) *Web {
	cfg.ensureDefaults()
	if err := cfg.validate(); err != nil {
		panic(err.Error())
	}
	w := &Web{cfg: cfg, seed: cfg.Seed, served: make(chan struct{}), closing: make(chan struct{}), retries: make(map[string]int)}
	w.generate()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		panic(fmt.Sprintf("fetchtest: listen on %s: %v", cfg.Addr, err))
	}
	w.ln = ln
	w.addr = ln.Addr().String()
	_, w.port, _ = net.SplitHostPort(w.addr)
	w.buildSpecials()

	w.srv = &http.Server{
		Handler:           http.HandlerFunc(w.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			ctx = context.WithValue(ctx, remoteKey{}, c.RemoteAddr().String())
			return context.WithValue(ctx, connKey{}, w.connSeq.Add(1))
		},
	}
	w.tr = &http.Transport{
		DialContext:         w.DialContext,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
	}
	go func() {
		defer close(w.served)
		_ = w.srv.Serve(ln)
	}()
	return w
}

type connKey struct{}

type remoteKey struct{}

// Close stops the server, closes every connection and waits until the
// serving goroutine has returned; calling it again does nothing. Ground-truth methods keep working after
// Close.
func (w *Web) Close() {
	w.closeOnce.Do(func() {
		close(w.closing)
		_ = w.srv.Close()
		<-w.served
		w.tr.CloseIdleConnections()
	})
}

// Addr returns the server's address, "127.0.0.1:PORT".
func (w *Web) Addr() string { return w.addr }

// Port returns the server's port as a string; every URL of the web carries it.
func (w *Web) Port() string { return w.port }

// Domain returns the domain every host name ends with.
func (w *Web) Domain() string { return w.cfg.Domain }

// Client returns an HTTP client whose connections all go to the web's server
// whatever the host name (see DialContext). Clients returned by Client share
// one Transport, closed by Close. It follows redirects like http.Client's
// default and asks for gzip.
func (w *Web) Client() *http.Client {
	return &http.Client{Transport: w.tr}
}

// DialContext dials the web's server for any address whose host is one of the
// web's hosts (or the server's own IP), so that a fetcher can use it as its
// dialer without DNS. For any other host it fails with a *net.OpError wrapping
// a *net.DNSError with IsNotFound set, as a lookup of an unknown name would;
// it never connects anywhere but the web's server.
func (w *Web) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	srvHost, _, _ := net.SplitHostPort(w.addr)
	if w.lookupHost(host) == nil && host != srvHost {
		return nil, &net.OpError{Op: "dial", Net: network,
			Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", w.addr)
}

// Hosts returns every host name of the web, ordinary and special, sorted;
// the endless hosts of Config.SubdomainTrap are not listed.
func (w *Web) Hosts() []string { return slices.Clone(w.names) }

// OrdinaryHosts returns the names of the ordinary hosts h000, h001, ... in
// index order.
func (w *Web) OrdinaryHosts() []string {
	out := make([]string, len(w.ordinary))
	for i, h := range w.ordinary {
		out[i] = h.name
	}
	return out
}

// Host returns the name of a special-purpose host given its label (for
// example Host(CalendarTrap) is "trap-calendar.sim.test").
func (w *Web) Host(label string) string { return label + "." + w.cfg.Domain }

// Mirrors returns each mirror host's name mapped to the ordinary host it
// copies.
func (w *Web) Mirrors() map[string]string {
	m := make(map[string]string, len(w.mirrors))
	for _, h := range w.mirrors {
		m[h.name] = w.ordinary[h.index].name
	}
	return m
}

// Seeds returns the home pages of the ordinary hosts whose robots.txt is the
// permissive "plain" variant (h000, h009, h018, ...): a seed set from which
// the home page of every ordinary host is reachable, but for the hosts whose
// robots.txt forbids it (the 5xx variant; the agents variant for evilbot).
func (w *Web) Seeds() []string {
	var out []string
	for _, h := range w.ordinary {
		if robotsVariants[h.variant].name == "plain" {
			out = append(out, w.URL(h.name, "/"))
		}
	}
	return out
}

// URL returns the absolute URL of path (which may carry a query) on host:
// "http://host:PORT/path".
func (w *Web) URL(host, path string) string {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return "http://" + host + ":" + w.port + path
}

func (w *Web) base(host string) string { return "http://" + host + ":" + w.port }

// generate lays out the hosts: names, robots variants, page counts, mirrors,
// near-duplicate clusters and redirect chains. O(Hosts).
func (w *Web) generate() {
	c := &w.cfg
	w.byName = make(map[string]*hostInfo)
	width := max(3, len(strconv.Itoa(c.Hosts-1)))
	xm := float64(c.MeanPages) / 3 // Pareto shape 1.5: mean = 3 xm
	for i := range c.Hosts {
		r := newRNG(w.seed, tagCount, i, 0)
		u := 1 - r.float()
		n := int(xm / math.Pow(u, 1/1.5))
		n = min(max(n, 1), c.MaxPages)
		h := &hostInfo{
			name:    fmt.Sprintf("h%0*d.%s", width, i, c.Domain),
			kind:    kindOrdinary,
			index:   i,
			variant: i % len(robotsVariants),
			nbase:   n,
		}
		w.ordinary = append(w.ordinary, h)
	}
	for k := range c.Mirrors {
		o := w.ordinary[(1+4*k)%c.Hosts]
		for _, m := range w.mirrors { // keep origins distinct
			if m.index == o.index {
				o = w.ordinary[(o.index+1)%c.Hosts]
			}
		}
		w.mirrors = append(w.mirrors, &hostInfo{
			name: fmt.Sprintf("mirror%d.%s", k, c.Domain), kind: kindMirror,
			index: o.index, variant: o.variant,
		})
	}
	w.placeClusters()
	for _, h := range w.ordinary {
		h.model = sync.OnceValue(func() *hostModel { return w.buildModel(h) })
		w.byName[h.name] = h
	}
	for _, m := range w.mirrors {
		m.model = w.ordinary[m.index].model
		w.byName[m.name] = m
	}
	for _, s := range []struct {
		label string
		kind  hostKind
	}{
		{CalendarTrap, kindCalendar}, {SessionTrap, kindSession}, {DeepTrap, kindDeep},
		{Redirects, kindRedirect}, {Statuses, kindStatus},
		{Latin1, kindLatin1}, {Windows1252, kindCP1252}, {Hostile, kindHostile},
	} {
		w.byName[w.Host(s.label)] = &hostInfo{name: w.Host(s.label), kind: s.kind}
	}
	if c.Javadoc {
		w.byName[w.Host(Javadoc)] = &hostInfo{name: w.Host(Javadoc), kind: kindJavadoc}
	}
	if c.Members {
		w.byName[w.Host(Members)] = &hostInfo{name: w.Host(Members), kind: kindMembers}
	}
	if c.Aliases {
		for _, name := range []string{w.Host(Aliases), w.aliasWWW()} {
			w.byName[name] = &hostInfo{name: name, kind: kindAlias}
		}
		w.alias = sync.OnceValue(w.buildAliasSite)
	}
	if c.Canonicals {
		for _, name := range []string{w.Host(Canonicals), w.canonMobileHost()} {
			w.byName[name] = &hostInfo{name: name, kind: kindCanon}
		}
	}
	if c.Scripts {
		w.byName[w.Host(ScriptApp)] = &hostInfo{name: w.Host(ScriptApp), kind: kindApp}
		w.byName[w.Host(Shop)] = &hostInfo{name: w.Host(Shop), kind: kindShop}
	}
	for name := range w.byName {
		w.names = append(w.names, name)
	}
	slices.Sort(w.names)

	// Popularity of hosts for cross-host links: Zipf with exponent 1 over
	// the host index, so h000 is the most linked-to host.
	w.zipfCum = make([]float64, c.Hosts)
	sum := 0.0
	for i := range c.Hosts {
		sum += 1 / float64(i+1)
		w.zipfCum[i] = sum
	}
	for i := range w.zipfCum {
		w.zipfCum[i] /= sum
	}
	w.makeChains()
}

// pickHost draws an ordinary host index by popularity.
func (w *Web) pickHost(r *rng) int {
	u := r.float()
	i, _ := slices.BinarySearch(w.zipfCum, u)
	return min(i, len(w.zipfCum)-1)
}

func hostOnly(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// RateLimit is how a host of Config.RateLimits throttles.
type RateLimit struct {
	// Interval is the least time between the starts of two requests.
	Interval time.Duration
	// Status is the answer to a request that comes too soon: 429 (the
	// default) or 503, without Retry-After.
	Status int
}
