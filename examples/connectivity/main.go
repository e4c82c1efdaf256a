package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/webgraph"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	store := flag.String("store", "", "basename of a store written by webgraph.Builder")
	links := flag.String("links", "", "link log to build from: one \"source<TAB>target\" per line")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *store, *links, nil); err != nil {
		log.Fatal(err)
	}
}

// run serves until ctx is done, then shuts the server down gracefully.
// ready, if not nil, is called with the listening address.
func run(ctx context.Context, addr, store, links string, ready func(addr string)) error {
	if (store == "") == (links == "") {
		return errors.New("give exactly one of -store and -links")
	}
	if links != "" {
		dir, err := os.MkdirTemp("", "connectivity-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		store = filepath.Join(dir, "web")
		if err := buildFromTSV(links, store, dir); err != nil {
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
	log.Printf("serving %d URLs, %d links on http://%s", s.NumNodes(), s.NumArcs(), ln.Addr())
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

// buildFromTSV streams a link log into a store with bounded memory.
func buildFromTSV(path, basename, tmp string) error {
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
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' {
			continue
		}
		src, dst, ok := strings.Cut(t, "\t")
		if !ok {
			if err := b.AddURL(t); err != nil {
				return err
			}
			continue
		}
		if err := b.AddLink(strings.TrimSpace(src), strings.TrimSpace(dst)); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return b.Finish(basename)
}
