package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sync/atomic"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/console"
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

// statusServer serves the crawl's console (package console: the status
// page, its live part, /metrics and the controls) and the Go profiler.
// It listens before the crawler exists, so that a bad -status address
// fails the command at once; until attach, the console's paths answer
// 503.
type statusServer struct {
	srv     *http.Server
	ln      net.Listener
	console atomic.Pointer[console.Console]
}

func startStatus(addr string) (*statusServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &statusServer{ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		k := s.console.Load()
		if k == nil {
			http.Error(w, "the crawl is starting", http.StatusServiceUnavailable)
			return
		}
		k.ServeHTTP(w, r)
	})
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

// attach serves c's console from now on.
func (s *statusServer) attach(c *crawlkit.Crawler, opts *console.Options) {
	s.console.Store(console.New(c, opts))
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
	err := s.srv.Shutdown(ctx)
	if k := s.console.Load(); k != nil {
		k.Close()
	}
	return err
}

// consoleSettings are the rows of the console's settings table that the
// crawler does not know: where the output goes and how the crawl runs.
func consoleSettings(o *options) []console.Setting {
	out := o.out
	if out == "" {
		out = "none (no -out: nothing is kept)"
	}
	rows := []console.Setting{{Name: "output directory", Value: out}}
	switch {
	case o.Demo:
		rows = append(rows, console.Setting{Name: "web", Value: fmt.Sprintf("simulated: %d hosts, about %d pages each", o.DemoHosts, o.DemoPages)})
	case o.Node != "":
		rows = append(rows, console.Setting{Name: "cluster", Value: "node " + o.Node + " of " + o.Nodes})
	}
	if o.resume {
		rows = append(rows, console.Setting{Name: "resumed", Value: "yes: counters and limits include earlier runs"})
	}
	return rows
}

// lingerStatus keeps the console served for d after the crawl, or until
// ctx is done (Ctrl-C), so that an operator can read the final figures.
func lingerStatus(ctx context.Context, stdout io.Writer, s *statusServer, d time.Duration) {
	if d <= 0 || ctx.Err() != nil {
		return
	}
	fmt.Fprintf(stdout, "\ncrawl over; the console stays at http://%s/ for %v (Ctrl-C to exit now)\n", s.Addr(), d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
