package main

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit"
)

// progress prints a live progress line: overwritten in place on a
// terminal, one line per update otherwise.
type progress struct {
	w     io.Writer
	quiet bool
	tty   bool
	wrote bool
}

func newProgress(w io.Writer, quiet bool) *progress {
	p := &progress{w: w, quiet: quiet}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func progressLine(s crawlkit.Stats) string {
	return fmt.Sprintf("%6.1fs  pages %d (%.0f/s)  frontier %d  hosts %d  errors %d  dup url %d  dup content %d  robots denied %d",
		s.Elapsed.Seconds(), s.Pages(), s.PagesPerSecond(), s.Frontier.Pending(), s.Hosts,
		s.Outcomes[crawlkit.FetchError]+s.Outcomes[crawlkit.HTTPError], s.Outcomes[crawlkit.DuplicateURL],
		s.Outcomes[crawlkit.DuplicateContent], s.Outcomes[crawlkit.RobotsDenied])
}

func (p *progress) update(s crawlkit.Stats) {
	if p.quiet {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", progressLine(s))
	} else {
		fmt.Fprintln(p.w, progressLine(s))
	}
	p.wrote = true
}

func (p *progress) done(s crawlkit.Stats) {
	if p.quiet {
		return
	}
	p.update(s)
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

// statusServer serves a live status page (an HTML page with a
// server-rendered SVG chart of pages/s and frontier size) and /metrics in
// the Prometheus text format.
type statusServer struct {
	srv   *http.Server
	ln    net.Listener
	stats func() crawlkit.Stats

	mu      sync.Mutex
	samples []sample // ring of the last maxSamples
	last    crawlkit.Stats
}

type sample struct {
	t        time.Duration
	rate     float64
	frontier int
	pages    uint64
}

const maxSamples = 600

func startStatus(addr string) (*statusServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &statusServer{ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /metrics", s.metrics)
	// The Go profiler, for an operator asking where a crawl's time or
	// memory goes: go tool pprof http://ADDR/debug/pprof/heap
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", longWrite(pprof.Profile))
	mux.HandleFunc("GET /debug/pprof/trace", longWrite(pprof.Trace))
	s.srv = &http.Server{
		Handler:           http.MaxBytesHandler(mux, 1<<10),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    8 << 10,
	}
	go s.srv.Serve(ln)
	return s, nil
}

// longWrite lifts the server's write timeout for a handler that streams
// for as long as its request asks (a CPU profile, a trace).
func longWrite(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		h(w, r)
	}
}

func (s *statusServer) Addr() string { return s.ln.Addr().String() }

func (s *statusServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// record adds a progress sample; the rate is over the last interval.
func (s *statusServer) record(st crawlkit.Stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rate := st.PagesPerSecond()
	if n := len(s.samples); n > 0 {
		prev := s.samples[n-1]
		if dt := (st.Elapsed - prev.t).Seconds(); dt > 0 {
			rate = float64(st.Pages()-prev.pages) / dt
		}
	}
	s.samples = append(s.samples, sample{t: st.Elapsed, rate: rate, frontier: st.Frontier.Pending(), pages: st.Pages()})
	if len(s.samples) > maxSamples {
		s.samples = append(s.samples[:0], s.samples[len(s.samples)-maxSamples:]...)
	}
	s.last = st
}

func (s *statusServer) current() (crawlkit.Stats, []sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.last
	if s.stats != nil {
		st = s.stats()
	}
	return st, append([]sample(nil), s.samples...)
}

var pageTmpl = template.Must(template.New("status").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="2">
<title>crawlkit status</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td{padding:2px 12px 2px 0}td.n{text-align:right;font-variant-numeric:tabular-nums}svg{border:1px solid #ccc;background:#fafafa}</style>
</head><body>
<h1>crawlkit</h1>
<p>{{.Line}}</p>
<h2>Pages per second (blue) and frontier size (orange)</h2>
{{.Chart}}
<h2>Outcomes</h2>
<table>{{range .Outcomes}}<tr><td>{{.Name}}</td><td class="n">{{.N}}</td></tr>{{end}}</table>
<p><a href="/metrics">/metrics</a></p>
</body></html>
`))

func (s *statusServer) page(w http.ResponseWriter, r *http.Request) {
	st, samples := s.current()
	type row struct {
		Name string
		N    uint64
	}
	var rows []row
	for o := crawlkit.Outcome(0); o < crawlkit.Outcome(len(st.Outcomes)); o++ {
		rows = append(rows, row{o.String(), st.Outcomes[o]})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	pageTmpl.Execute(w, map[string]any{
		"Line":     progressLine(st),
		"Chart":    template.HTML(chartSVG(samples, 720, 240)),
		"Outcomes": rows,
	})
}

// chartSVG draws two series over time, each scaled to its own maximum
// (the left axis is pages/s, the right axis frontier size).
func chartSVG(samples []sample, w, h int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="pages per second and frontier size over time">`, w, h, w, h)
	if len(samples) < 2 {
		b.WriteString(`<text x="10" y="20">collecting samples…</text></svg>`)
		return b.String()
	}
	const pad = 40
	maxRate, maxFront := 1.0, 1
	for _, s := range samples {
		maxRate = max(maxRate, s.rate)
		maxFront = max(maxFront, s.frontier)
	}
	t0, t1 := samples[0].t, samples[len(samples)-1].t
	span := max((t1 - t0).Seconds(), 1e-9)
	x := func(t time.Duration) float64 { return pad + (t-t0).Seconds()/span*float64(w-2*pad) }
	y := func(v, vmax float64) float64 { return float64(h-pad) - v/vmax*float64(h-2*pad) }
	line := func(color string, val func(sample) float64, vmax float64) {
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="`, color)
		for _, s := range samples {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(s.t), y(val(s), vmax))
		}
		b.WriteString(`"/>`)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`, pad, h-pad, w-pad, h-pad)
	line("#1f77b4", func(s sample) float64 { return s.rate }, maxRate)
	line("#ff7f0e", func(s sample) float64 { return float64(s.frontier) }, float64(maxFront))
	fmt.Fprintf(&b, `<text x="4" y="%d" fill="#1f77b4">%.0f/s</text>`, pad-8, maxRate)
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#ff7f0e" text-anchor="end">%d</text>`, w-4, pad-8, maxFront)
	fmt.Fprintf(&b, `<text x="%d" y="%d">%.0fs</text><text x="%d" y="%d" text-anchor="end">%.0fs</text>`, pad, h-pad+16, t0.Seconds(), w-pad, h-pad+16, t1.Seconds())
	b.WriteString(`</svg>`)
	return b.String()
}

func (s *statusServer) metrics(w http.ResponseWriter, r *http.Request) {
	st, _ := s.current()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprintln(w, "# HELP crawlkit_urls_total URLs by outcome.")
	fmt.Fprintln(w, "# TYPE crawlkit_urls_total counter")
	for o := crawlkit.Outcome(0); o < crawlkit.Outcome(len(st.Outcomes)); o++ {
		fmt.Fprintf(w, "crawlkit_urls_total{outcome=%q} %d\n", strings.ReplaceAll(o.String(), " ", "_"), st.Outcomes[o])
	}
	gauge := func(name, help string, v any) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %v\n", name, help, name, name, v)
	}
	counter := func(name, help string, v any) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %v\n", name, help, name, name, v)
	}
	counter("crawlkit_pages_total", "Pages fetched with a 2xx answer.", st.Pages())
	counter("crawlkit_bytes_total", "Body bytes received.", st.Bytes)
	counter("crawlkit_links_total", "Links extracted.", st.Links)
	gauge("crawlkit_frontier_urls", "URLs queued, leased or scheduled.", st.Frontier.Pending())
	gauge("crawlkit_hosts", "Hosts with URLs queued so far.", st.Hosts)
	gauge("crawlkit_inflight", "URLs being processed.", st.InFlight)
	gauge("crawlkit_elapsed_seconds", "Time since the crawl started.", st.Elapsed.Seconds())
}
