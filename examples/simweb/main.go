// Command simweb serves a simulated web and a DNS server for it on loopback
// ports, so that any crawler — crawlkit's or another — can be run and
// measured against the same generated web.
//
// Usage:
//
//	go run ./examples/simweb [-seed 1] [-hosts 200] [-pages 50] [-addr 127.0.0.1:8080] [-dns 127.0.0.1:5353] [-subdomain-trap explode.test]
//
// It prints the seed URLs and three ways to reach the web: through its DNS
// server (every name under the domain answers 127.0.0.1), as an HTTP proxy
// (the server routes on the Host header, so proxy-form requests work), or
// with an explicit name-to-address mapping. It runs until interrupted, or
// for -duration.
//
// -subdomain-trap adds a subdomain explosion under a registrable domain of
// its own (see fetchtest.Config.SubdomainTrap): every name under it answers,
// in DNS and over HTTP, and every page links 30 hosts never seen before. It
// is off by default, like -hostile: a crawler without a budget per
// registrable domain never finishes a web that has it, so the default web
// stays one a crawl can complete and measurements stay comparable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// usageError is a problem with the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// exitCode prints err, if any, and returns the exit status: 0 (also
// after -h), 2 for a usage error, 1 when serving failed.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "simweb:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "simweb:", err)
		return 1
	}
}

// run parses args, serves the web and its DNS server, prints how to use
// them to out, and returns when ctx is done or -duration has passed.
func run(ctx context.Context, args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("simweb", flag.ContinueOnError)
	var (
		seed      = fs.Int64("seed", 1, "generation seed: the same seed serves the same web")
		hosts     = fs.Int("hosts", 200, "number of ordinary hosts")
		pages     = fs.Int("pages", 50, "mean pages per host (Pareto-distributed)")
		addr      = fs.String("addr", "127.0.0.1:8080", "HTTP listen address (loopback only)")
		dnsAddr   = fs.String("dns", "127.0.0.1:5353", "DNS listen address, UDP and TCP (loopback only; empty: no DNS server)")
		latency   = fs.Duration("latency", 0, "delay added to every response")
		hostile   = fs.Bool("hostile", false, "link the hostile host's resources from h000's home page")
		subTrap   = fs.String("subdomain-trap", "", "registrable domain of a subdomain-explosion trap linked from h000, e.g. explode.test (empty: none)")
		seedsFile = fs.String("seeds-file", "", "also write the seed URLs to this file, one per line")
		duration  = fs.Duration("duration", 0, "stop after this long (0: run until interrupted)")
	)
	// A flag error is one line; only -h prints the usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(errOut)
			fmt.Fprintf(errOut, "usage: simweb [flags]\n\nflags:\n")
			fs.PrintDefaults()
			return err
		}
		return usageError{err.Error() + " (-h lists the flags)"}
	}
	bad := func(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q (flags only; -h lists them)", fs.Args())
	}
	for _, f := range []struct{ name, addr string }{{"-addr", *addr}, {"-dns", *dnsAddr}} {
		if (f.addr != "" || f.name == "-addr") && !isLoopback(f.addr) {
			return bad("%s %q is not a loopback IP:PORT: simweb only listens on 127.0.0.0/8", f.name, f.addr)
		}
	}
	switch {
	case *hosts < 1 || *pages < 1:
		return bad("-hosts and -pages must be at least 1")
	case *latency < 0:
		return bad("-latency %v cannot be negative", *latency)
	case *duration < 0:
		return bad("-duration %v cannot be negative (0: run until interrupted)", *duration)
	}
	cfg := fetchtest.Config{Seed: *seed, Hosts: *hosts, MeanPages: *pages, Latency: *latency,
		LinkHostile: *hostile, SubdomainTrap: *subTrap, Addr: *addr}
	if err := cfg.Validate(); err != nil {
		return bad("-subdomain-trap %q: %v", *subTrap, strings.TrimPrefix(err.Error(), "fetchtest: "))
	}

	web, err := newWeb(cfg)
	if err != nil {
		return err
	}
	defer web.Close()

	trap := strings.ToLower(strings.Trim(*subTrap, ".")) // as the web spells it

	var dnsSrv *dnstest.Server
	if *dnsAddr != "" {
		dnsSrv, err = dnstest.NewServer(dnstest.Config{Addr: *dnsAddr})
		if err != nil {
			return fmt.Errorf("DNS server: %w", err)
		}
		defer dnsSrv.Close()
		dnsSrv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))
		if trap != "" {
			// The wildcard covers x0.explode.test and below, not the
			// bare domain, which the web serves as well.
			dnsSrv.AddWildcard(trap, 300, netip.MustParseAddr("127.0.0.1"))
			dnsSrv.AddAddr(trap, 300, netip.MustParseAddr("127.0.0.1"))
		}
	}

	seeds := web.Seeds()
	if *seedsFile != "" {
		if err := os.WriteFile(*seedsFile, []byte(strings.Join(seeds, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "simweb: seed %d, %d ordinary hosts (+ traps, mirrors, redirects, statuses) under %q, %d pages\n",
		*seed, len(web.OrdinaryHosts()), web.Domain(), len(web.Pages()))
	fmt.Fprintf(out, "HTTP  http://%s (routes on the Host header; also answers as an HTTP proxy)\n", web.Addr())
	if dnsSrv != nil {
		fmt.Fprintf(out, "DNS   %s (UDP and TCP): *.%s -> 127.0.0.1\n", dnsSrv.Addr(), web.Domain())
		if trap != "" {
			fmt.Fprintf(out, "      also %s and *.%s -> 127.0.0.1\n", trap, trap)
		}
	}
	if trap != "" {
		fmt.Fprintf(out, "trap  subdomain explosion under %q: %s, linked from h000, links 30 new hosts on every page;\n"+
			"      crawlkit bounds it with -max-hosts-per-domain and -max-per-domain\n", trap, web.URL("x0."+trap, "/"))
	} else {
		fmt.Fprintln(out, "trap  add -subdomain-trap explode.test for a wildcard-DNS subdomain explosion")
	}
	fmt.Fprintf(out, "seeds:\n  %s\n", strings.Join(seeds, "\n  "))
	fmt.Fprintln(out, "point a crawler at it:")
	if dnsSrv != nil {
		fmt.Fprintf(out, "  crawlkit: go run ./examples/crawler -dns %s -allow-private -seeds %s\n", dnsSrv.Addr(), seeds[0])
		fmt.Fprintf(out, "  focused:  go run ./examples/focused -dns %s -allow-private -seeds %s\n", dnsSrv.Addr(), seeds[0])
	}
	// curl takes an http proxy from -x or the lower-case http_proxy
	// only (it ignores HTTP_PROXY, after the httpoxy CGI attacks); most
	// other clients read http_proxy too.
	fmt.Fprintf(out, "  as a proxy: curl -x http://%s %s   (other clients: http_proxy=http://%s)\n", web.Addr(), seeds[0], web.Addr())
	if u, err := url.Parse(seeds[0]); err == nil {
		fmt.Fprintf(out, "  curl: curl --resolve %s:%s:127.0.0.1 %s\n", u.Hostname(), u.Port(), seeds[0])
	}
	fmt.Fprintln(out, "ready")

	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	<-ctx.Done()
	fmt.Fprintf(out, "simweb: served %d requests\n", len(web.Log()))
	return nil
}

// newWeb turns fetchtest.NewWeb's panics (a busy port, a -subdomain-trap it
// cannot serve) into errors a person can act on.
func newWeb(cfg fetchtest.Config) (w *fetchtest.Web, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot serve the web: %v", r)
		}
	}()
	return fetchtest.NewWeb(cfg), nil
}

func isLoopback(hostport string) bool {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return false
	}
	return ap.Addr().IsLoopback()
}
