package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns"
	"github.com/crawlkit/crawlkit/fetch"
)

// sessionFlags are the flags of sessions, request headers and proxies.
// They are not saved in settings.json, since they may hold credentials:
// a resumed crawl that needs them is given them again.
type sessionFlags struct {
	cookies   bool
	headers   headerList
	proxy     string
	loginURL  string
	loginForm string

	// Set by check.
	proxyURL *url.URL
	login    *url.URL
	form     url.Values
}

// headerList is the repeatable -header flag.
type headerList []string

func (h *headerList) String() string { return strings.Join(*h, "; ") }

func (h *headerList) Set(line string) error {
	name, value, err := fetch.ParseHeader(line)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), fetch.ErrOption.Error()+": "))
	}
	*h = append(*h, name+": "+value)
	return nil
}

func (s *sessionFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.cookies, "cookies", s.cookies, "keep cookies between requests (a session), sent by the usual domain rules")
	fs.Var(&s.headers, "header", "add the request header 'Name: value' to every request (repeatable; not User-Agent: use -user-agent)")
	fs.StringVar(&s.proxy, "proxy", s.proxy, "send every connection through this proxy: http://[user:pass@]host:port (CONNECT) or socks5://[user:pass@]host:port; a proxy on a private address is permitted")
	fs.StringVar(&s.loginURL, "login-url", s.loginURL, "before crawling, POST -login-form to this URL and keep the session it sets (implies -cookies)")
	fs.StringVar(&s.loginForm, "login-form", s.loginForm, "the login form's fields, URL-encoded: 'user=a&password=b'")
}

// check validates the flags and keeps what they parse to.
func (s *sessionFlags) check() error {
	if s.proxy != "" {
		u, err := fetch.ParseProxy(s.proxy)
		if err != nil {
			return usageError{"-proxy: " + strings.TrimPrefix(err.Error(), fetch.ErrOption.Error()+": ")}
		}
		s.proxyURL = u
	}
	if h := s.header(); h != nil {
		if err := (&fetch.Options{Header: h}).Validate(); err != nil {
			if h.Get("User-Agent") != "" {
				return usageError{"-header User-Agent: use -user-agent"}
			}
			return usageError{"-header: " + strings.TrimPrefix(err.Error(), fetch.ErrOption.Error()+": Header: ")}
		}
	}
	switch {
	case s.loginURL == "" && s.loginForm != "":
		return usageError{"-login-form needs -login-url"}
	case s.loginURL != "" && s.loginForm == "":
		return usageError{"-login-url needs -login-form 'field=value&...'"}
	case s.loginURL == "":
		return nil
	}
	u, err := url.Parse(s.loginURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Sprintf("-login-url %q is not an absolute http(s) URL", s.loginURL)}
	}
	form, err := url.ParseQuery(s.loginForm)
	if err != nil || len(form) == 0 {
		return usageError{"-login-form: want URL-encoded fields, 'user=a&password=b'"}
	}
	s.login, s.form = u, form
	return nil
}

func (s *sessionFlags) header() http.Header {
	if len(s.headers) == 0 {
		return nil
	}
	h := http.Header{}
	for _, line := range s.headers {
		name, value, _ := strings.Cut(line, ": ")
		h.Add(name, value)
	}
	return h
}

func (s *sessionFlags) enabled() bool {
	return s.cookies || len(s.headers) > 0 || s.proxy != "" || s.loginURL != ""
}

// apply gives the crawl a fetcher of its own with these settings, made as
// the default one would be (cfg's Resolver, UserAgent, AllowPrivate, the
// wire bytes kept when a sink archives them), and logs in if asked. Call
// it once cfg's sinks are set. The closer releases the fetcher and the
// resolver apply made.
func (s *sessionFlags) apply(ctx context.Context, cfg *crawlkit.Config, stdout io.Writer) (io.Closer, error) {
	var closers multiCloser
	if cfg.Resolver == nil {
		r, err := dns.New(nil)
		if err != nil {
			return nil, err
		}
		cfg.Resolver = r
		closers = append(closers, r)
	}
	opts := &fetch.Options{
		Resolver:     cfg.Resolver,
		UserAgent:    cfg.UserAgent,
		AllowPrivate: cfg.AllowPrivate,
		Header:       s.header(),
	}
	for _, sk := range cfg.Sinks {
		if w, ok := sk.(crawlkit.WireSink); ok && w.WantsWire() {
			opts.KeepWire = true
		}
	}
	if s.cookies || s.login != nil {
		jar, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
		if err != nil {
			return nil, err
		}
		opts.Jar = jar
	}
	if s.proxyURL != nil {
		// Naming a proxy on the command line is the permission to use
		// one on a private address (a local proxy is the usual kind).
		opts.Proxy, opts.AllowPrivateProxy = fetch.ProxyURL(s.proxyURL), true
	}
	f := fetch.NewHTTP(opts)
	closers = append(closers, f)
	cfg.Fetcher, cfg.UserAgent, cfg.AllowPrivate = f, "", false
	if s.login != nil {
		resp, err := f.PostForm(ctx, s.login, s.form)
		if err != nil {
			closers.Close()
			return nil, fmt.Errorf("login at %s: %w", s.login, err)
		}
		if resp.Status >= 400 {
			closers.Close()
			return nil, fmt.Errorf("login at %s: the server answered %d", s.login, resp.Status)
		}
		fmt.Fprintf(stdout, "login: %s answered %d; %d cookies for it\n", s.login, resp.Status, len(opts.Jar.Cookies(s.login)))
	}
	return closers, nil
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var errs []error
	for i := len(m) - 1; i >= 0; i-- {
		errs = append(errs, m[i].Close())
	}
	return errors.Join(errs...)
}
