package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/crawlkit/crawlkit/webgraph"
)

// defaultAddr is the listen address without -addr: a port of its own, not
// simweb's 8080 nor the 8081 the crawler's -status examples use, so the
// three run side by side.
const defaultAddr = "127.0.0.1:8090"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(runMain(ctx, os.Args[1:], os.Stderr))
}

// options are the parsed flags.
type options struct {
	addr, store, links string
}

// usageError is a problem with the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parseFlags parses and checks the command line.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	var o options
	fs := flag.NewFlagSet("connectivity", flag.ContinueOnError)
	fs.StringVar(&o.addr, "addr", defaultAddr, "listen address HOST:PORT")
	fs.StringVar(&o.store, "store", "", "a store written by webgraph.Builder: its basename, any of its files (web.graph), its directory, or a crawler -out directory")
	fs.StringVar(&o.links, "links", "", "link log to build from: one \"source<TAB>target\" or \"source\" per line (a crawler's links.tsv)")
	// A flag error is one line (below); only -h prints the usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintf(stderr, "usage: connectivity -store PATH | -links FILE [-addr HOST:PORT]\n\nflags:\n")
			fs.PrintDefaults()
			return nil, err
		}
		return nil, usageError{err.Error() + " (-h lists the flags)"}
	}
	switch {
	case fs.NArg() > 0:
		return nil, usageError{fmt.Sprintf("unexpected argument %q: give the graph with -store or -links", fs.Arg(0))}
	case (o.store == "") == (o.links == ""):
		return nil, usageError{"give exactly one of -store and -links"}
	}
	if _, port, err := net.SplitHostPort(o.addr); err != nil || port == "" {
		return nil, usageError{fmt.Sprintf("-addr %q: want HOST:PORT, e.g. %s", o.addr, defaultAddr)}
	}
	return &o, nil
}

// runMain is the command: flags, then the server until ctx is done. It
// returns the exit status: 0, 1 when serving failed, 2 for bad flags.
func runMain(ctx context.Context, args []string, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "connectivity:", err)
		return 2
	}
	if err := run(ctx, o.addr, o.store, o.links, nil); err != nil {
		fmt.Fprintln(stderr, "connectivity:", err)
		return 1
	}
	return 0
}

// run serves until ctx is done, then shuts the server down gracefully.
// ready, if not nil, is called with the listening address.
func run(ctx context.Context, addr, store, links string, ready func(addr string)) error {
	if (store == "") == (links == "") {
		return usageError{"give exactly one of -store and -links"}
	}
	if links != "" {
		dir, err := os.MkdirTemp("", "connectivity-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		store = filepath.Join(dir, "web")
		if err := buildFromTSV(links, store, dir, checkURL); err != nil {
			return err
		}
	} else {
		var err error
		if store, err = storeBasename(store); err != nil {
			return err
		}
	}
	s, err := webgraph.OpenStore(store)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("serving %d URLs, %d links on http://%s/", s.NumNodes(), s.NumArcs(), ln.Addr())
	if ready != nil {
		ready(ln.Addr().String())
	}
	srv := &http.Server{
		Handler:           newHandler(s),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       10 * time.Second,
		MaxHeaderBytes:    8 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-errc // Serve has returned http.ErrServerClosed
	return err
}

// storeSuffixes are the files of a store, after its basename; the
// transpose's files add "-t" before theirs.
var storeSuffixes = []string{".graph", ".properties", ".offsets", ".urls"}

// storeBasename turns what a person passes to -store into the store's
// basename: the basename itself ("crawl/graph/web"), any file of the
// store or of its transpose ("crawl/graph/web.graph", as the crawler
// prints it; "web-t.offsets"), the directory holding one store, or a
// crawler's -out directory (its graph/web). An error says what was
// looked for.
func storeBasename(p string) (string, error) {
	exists := func(base string) bool {
		st, err := os.Stat(base + ".graph")
		return err == nil && st.Mode().IsRegular()
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		for _, base := range []string{filepath.Join(p, "graph", "web"), filepath.Join(p, "web")} {
			if exists(base) {
				return base, nil
			}
		}
		m, _ := filepath.Glob(filepath.Join(p, "*.graph"))
		var bases []string
		for _, g := range m {
			if b := strings.TrimSuffix(g, ".graph"); !strings.HasSuffix(b, "-t") {
				bases = append(bases, b)
			}
		}
		if len(bases) == 1 {
			return bases[0], nil
		}
		return "", fmt.Errorf("-store %s: a directory with %d stores (*.graph without -t); name one", p, len(bases))
	}
	base := p
	for _, sfx := range storeSuffixes {
		if b, ok := strings.CutSuffix(p, sfx); ok {
			base = b
			break
		}
	}
	if b, ok := strings.CutSuffix(base, "-t"); ok && exists(b) {
		base = b // a file of the transpose: the store is the graph's
	}
	if !exists(base) {
		return "", fmt.Errorf("-store %s: no web graph there (looked for %s.graph)", p, base)
	}
	return base, nil
}

// LinkLogError is a malformed line of a link log: the file, the line
// number (from 1) and what is wrong with it.
type LinkLogError struct {
	Path string
	Line int
	Err  error
}

func (e *LinkLogError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err) }

// Unwrap returns the cause.
func (e *LinkLogError) Unwrap() error { return e.Err }

// errBadURL is wrapped by a LinkLogError for a field that is not an
// absolute http(s) URL.
var errBadURL = errors.New("not an absolute http(s) URL")

// checkURL reports whether s is an absolute http(s) URL with a host.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: %q", errBadURL, s)
	}
	return nil
}

// buildFromTSV streams a link log into a store with bounded memory. A
// line is "source<TAB>target" or a lone "source" (a page without links,
// as the crawler's links.tsv has them); blank lines and lines starting
// with '#' are skipped. Every field must pass check (nil: any string, as
// webgraph.Builder takes them). Anything else is a *LinkLogError naming
// the line.
func buildFromTSV(path, basename, tmp string, check func(string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := webgraph.NewBuilder(&webgraph.BuilderOptions{TempDir: tmp})
	if err != nil {
		return err
	}
	defer b.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	bad := func(err error) error { return &LinkLogError{Path: path, Line: line, Err: err} }
	for sc.Scan() {
		line++
		t := strings.TrimRight(sc.Text(), "\r")
		if trimmed := strings.TrimSpace(t); trimmed == "" || trimmed[0] == '#' {
			continue
		}
		fields := strings.Split(t, "\t")
		if len(fields) > 2 {
			return bad(fmt.Errorf("%d tab-separated fields, want source<TAB>target", len(fields)))
		}
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
			if fields[i] == "" {
				return bad(errors.New("empty field"))
			}
			if check == nil {
				continue
			}
			if err := check(fields[i]); err != nil {
				return bad(err)
			}
		}
		if len(fields) == 1 {
			err = b.AddURL(fields[0])
		} else {
			err = b.AddLink(fields[0], fields[1])
		}
		if err != nil {
			return bad(err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: after line %d: %w", path, line, err)
	}
	return b.Finish(basename)
}
