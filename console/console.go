package console

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit"
)

// Options configures a Console. The zero value (or nil) is a console
// without controls that samples every second.
type Options struct {
	// Settings are rows shown beside the crawl's own settings (seeds,
	// workers, limits): what the program knows and the crawler does not,
	// such as {"output", "crawl/"}. Default none.
	Settings []Setting
	// Interval is how often the charts take a sample. Default 1 s. The
	// charts keep at most 720 samples: on a longer crawl every other
	// sample is dropped and the interval doubles, so they span the whole
	// crawl at a coarser grain.
	Interval time.Duration
	// Refresh is how often the page's script asks for new figures.
	// Default 2 s.
	Refresh time.Duration
	// Hosts is the number of hosts in the busiest and the slowest tables.
	// Default 10.
	Hosts int
	// Controls offers pause, resume and stop (POST pause, resume, stop).
	// Default false: the console only watches.
	Controls bool
	// Stop is what the stop control calls: typically the cancel function
	// of Run's context (a clean stop). Default nil: no stop control.
	Stop func()
	// RemoteControl lets the controls be used from any address. Default
	// false: a control request is refused unless it comes from a loopback
	// address (the operator's own machine, or an SSH tunnel to it).
	RemoteControl bool
}

// Setting is one row of the console's settings table.
type Setting struct {
	Name, Value string
}

// Console is the operator's view of one crawl, an http.Handler that
// serves (paths relative to where it is mounted):
//
//	GET  /          the status page: settings, progress toward the limits
//	                with an ETA, charts, outcomes, statuses, hosts, errors
//	GET  /live      the page's live part alone, which the page's script
//	                fetches every Options.Refresh instead of reloading
//	GET  /metrics   Prometheus metrics (MetricsHandler)
//	POST /pause, /resume, /stop   the controls, with Options.Controls
//
// It keeps serving after the crawl has ended, showing its final figures,
// until the program stops serving it. Create it with New and Close it to
// stop its sampling goroutine. Safe for concurrent use.
type Console struct {
	c       *crawlkit.Crawler
	opts    Options
	mux     *http.ServeMux
	metrics http.Handler

	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	samples []sample
	step    time.Duration // the samples' spacing now
}

// sample is the crawl's state at one instant, for the charts and rates.
type sample struct {
	at       float64 // crawl time, seconds (Stats.Elapsed)
	pages    uint64
	bytes    int64
	frontier int
}

const maxSamples = 720

// New returns a Console of c; it starts sampling c at once, whether or
// not c runs yet.
func New(c *crawlkit.Crawler, opts *Options) *Console {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Refresh <= 0 {
		o.Refresh = 2 * time.Second
	}
	if o.Hosts <= 0 {
		o.Hosts = 10
	}
	k := &Console{c: c, opts: o, metrics: MetricsHandler(c), stop: make(chan struct{}), done: make(chan struct{}), step: o.Interval}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", k.page)
	mux.HandleFunc("GET /live", k.live)
	mux.Handle("GET /metrics", k.metrics)
	for _, ctl := range []string{"pause", "resume", "stop"} {
		mux.HandleFunc("POST /"+ctl, k.control)
	}
	k.mux = mux
	go k.sampling()
	return k
}

// ServeHTTP serves the console. Mount it at a path ending in "/" with
// http.StripPrefix when it is not at the root: its links are relative.
func (k *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// The controls are buttons: no other site may frame them.
	h.Set("X-Frame-Options", "DENY")
	k.mux.ServeHTTP(w, r)
}

// Close stops the sampling; the console still serves what it sampled.
// It returns nil; a second Close does nothing.
func (k *Console) Close() error {
	select {
	case <-k.stop:
	default:
		close(k.stop)
	}
	<-k.done
	return nil
}

// sampling takes a sample every interval until Close, and a last one when
// the crawl has ended.
func (k *Console) sampling() {
	defer close(k.done)
	t := time.NewTicker(k.opts.Interval)
	defer t.Stop()
	since := time.Duration(0)
	for {
		select {
		case <-k.stop:
			return
		case <-t.C:
		}
		since += k.opts.Interval
		ended := !k.c.Activity(0).Ended.IsZero()
		k.mu.Lock()
		if since >= k.step || ended {
			since = 0
			k.record(k.c.Stats())
		}
		k.mu.Unlock()
		if ended {
			return
		}
	}
}

// record appends a sample, halving the samples when they are full.
// Called with mu held.
func (k *Console) record(s crawlkit.Stats) {
	if n := len(k.samples); n > 0 && k.samples[n-1].at >= s.Elapsed.Seconds() {
		return // the crawl has not started, or nothing moved
	}
	k.samples = append(k.samples, sample{at: s.Elapsed.Seconds(), pages: s.Pages(), bytes: s.Bytes, frontier: s.Frontier.Pending()})
	if len(k.samples) >= maxSamples {
		for i := 0; 2*i < len(k.samples); i++ {
			k.samples[i] = k.samples[2*i]
		}
		k.samples = k.samples[:(len(k.samples)+1)/2]
		k.step *= 2
	}
}

func (k *Console) snapshot() []sample {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]sample(nil), k.samples...)
}

func (k *Console) page(w http.ResponseWriter, r *http.Request) {
	k.render(w, "page")
}

func (k *Console) live(w http.ResponseWriter, r *http.Request) {
	k.render(w, "live")
}

func (k *Console) render(w http.ResponseWriter, name string) {
	v := k.view(time.Now())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := tmpl.ExecuteTemplate(w, name, v); err != nil {
		// The page is partly written: the client sees it cut short.
		return
	}
}

// errNotLocal refuses a control request from another machine.
var errNotLocal = errors.New("console: controls answer only loopback clients (Options.RemoteControl)")

// control serves POST /pause, /resume and /stop, then sends the browser
// back to the page.
func (k *Console) control(w http.ResponseWriter, r *http.Request) {
	if !k.opts.Controls {
		http.Error(w, "console: controls are off (Options.Controls)", http.StatusForbidden)
		return
	}
	if err := k.allowed(r); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	switch r.URL.Path {
	case "/pause":
		k.c.Pause()
	case "/resume":
		k.c.Resume()
	case "/stop":
		if k.opts.Stop == nil {
			http.Error(w, "console: no stop control (Options.Stop)", http.StatusForbidden)
			return
		}
		k.c.Resume() // a paused crawl stops too
		k.opts.Stop()
	}
	http.Redirect(w, r, "./", http.StatusSeeOther)
}

// allowed checks a control request: from loopback unless RemoteControl,
// and never sent by another site's page (a form on any web page can POST
// to 127.0.0.1): a browser's Origin, when present, must be this host.
func (k *Console) allowed(r *http.Request) error {
	if !k.opts.RemoteControl {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Unmap().IsLoopback() {
			return errNotLocal
		}
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return errors.New("console: a control request from another site")
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return errors.New("console: a control request from another origin")
		}
	}
	return nil
}
