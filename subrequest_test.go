package crawlkit

import (
	"context"
	"errors"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchertest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// subFetcher is a fetch.Gated fetcher that behaves as a rendering fetcher
// does on the network: after each HTML page it requests, one at a time
// and through the Gate, the first links of the page as if they were the
// page's scripts, and returns their answers as Subresources.
type subFetcher struct {
	inner fetch.Fetcher
	gate  fetch.Gate
	per   int
	// disallowed reports what robots.txt forbids.
	disallowed func(string) bool

	mu      sync.Mutex
	made    map[string]time.Time // subrequest URL → when it was sent
	third   map[string]bool      // subrequest URL → to another host than its page's
	n       int                  // subrequests made
	refused []error
}

func (f *subFetcher) SetGate(g fetch.Gate) { f.gate = g }

func (f *subFetcher) Fetch(ctx context.Context, req *fetch.Request) (*fetch.Response, error) {
	resp, err := f.inner.Fetch(ctx, req)
	if err != nil || resp.Status != 200 || resp.ContentType != "text/html" {
		return resp, err
	}
	doc, err := (&fetch.HTML{}).Parse(resp)
	if err != nil {
		return resp, nil
	}
	// The first links, the first link robots.txt forbids and the first
	// to another host, as a page's scripts might be.
	var subs []*url.URL
	var banned, other bool
	for i, l := range doc.Links {
		switch {
		case i < f.per:
		case !banned && f.disallowed(l.URL.String()):
		case !other && l.URL.Host != req.URL.Host:
		default:
			continue
		}
		banned = banned || f.disallowed(l.URL.String())
		other = other || l.URL.Host != req.URL.Host
		subs = append(subs, l.URL)
	}
	// And a tracker most of the web's robots.txt variants forbid.
	subs = append(subs, req.URL.ResolveReference(&url.URL{Path: "/private/track.js"}))
	for _, u := range subs {
		l := fetch.Link{URL: u}
		release, err := f.gate.Admit(ctx, req.URL, l.URL)
		if err != nil {
			f.mu.Lock()
			f.refused = append(f.refused, err)
			f.mu.Unlock()
			continue
		}
		f.mu.Lock()
		f.n++
		f.made[l.URL.String()] = time.Now()
		if f.third == nil {
			f.third = map[string]bool{}
		}
		f.third[l.URL.String()] = l.URL.Host != req.URL.Host
		f.mu.Unlock()
		sub, err := f.inner.Fetch(ctx, &fetch.Request{URL: l.URL})
		release()
		if err == nil {
			resp.Subresources = append(resp.Subresources, sub)
		}
	}
	return resp, nil
}

// exchanges is an ExchangeSink that records the URLs it was given.
type exchanges struct {
	mu   sync.Mutex
	urls map[string]int
}

func (e *exchanges) Write(context.Context, *Page) error { return nil }
func (e *exchanges) Close() error                       { return nil }
func (e *exchanges) Exchange(_ context.Context, resp *fetch.Response, _ time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.urls[resp.URL.String()]++
	return nil
}

// TestSubrequestsObeyRobotsAndPoliteness crawls with a fetcher that makes
// requests of its own for every page. Through the crawl's Gate they never
// ask for what robots.txt forbids, never overlap another request to their
// host, go to other hosts only when allowed, and then a gap after the
// host's last request and a gap before its next; they are counted and
// archived.
func TestSubrequestsObeyRobotsAndPoliteness(t *testing.T) {
	const gap = 15 * time.Millisecond
	for _, third := range []bool{false, true} {
		name := "own host"
		if third {
			name = "third party"
		}
		t.Run(name, func(t *testing.T) {
			web := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 6, MeanPages: 6, MaxPages: 10, ChangePeriods: []time.Duration{0},
				Latency: 2 * time.Millisecond, CrawlDelay: 2 * gap, RetryAfter: gap, Mirrors: -1, NearDuplicates: -1})
			defer web.Close()
			sf := &subFetcher{per: 4, made: map[string]time.Time{},
				disallowed: func(u string) bool { return !web.Allowed("crawlkit", u) }}
			ex := &exchanges{urls: map[string]int{}}
			c := newTestCrawler(t, web, func(cfg *Config) {
				cfg.DelayFactor, cfg.MinDelay, cfg.MaxRetries = -1, gap, -1
				cfg.MaxPages = 60
				cfg.Sinks = []Sink{ex}
				cfg.WrapFetcher = func(f fetch.Fetcher) (fetch.Fetcher, error) {
					sf.inner = f
					return sf, nil
				}
				cfg.Subrequests = SubrequestOptions{ThirdParty: third, MaxWait: time.Second}
			})
			s, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if v := web.RobotsViolations("crawlkit"); len(v) > 0 {
				t.Errorf("%d requests robots.txt forbids, first %s%s", len(v), v[0].Host, v[0].Path)
			}
			var robotsRefused, thirdRefused int
			for _, err := range sf.refused {
				if !errors.Is(err, ErrSubrequestRefused) {
					t.Errorf("refusal %v does not wrap ErrSubrequestRefused", err)
				}
				switch msg := err.Error(); {
				case strings.Contains(msg, "disallowed by robots.txt"):
					robotsRefused++
				case strings.Contains(msg, "another host"):
					thirdRefused++
				}
			}
			// The third-party subrequests, as the server logged them.
			isThird := map[int]bool{}
			log := web.Log()
			sort.Slice(log, func(i, j int) bool { return log[i].Start.Before(log[j].Start) })
			crossHost := 0
			for u, sent := range sf.made {
				if ex.urls[u] == 0 {
					t.Errorf("subrequest %s was not archived", u)
				}
				pu, _ := url.Parse(u)
				for i, r := range log {
					if r.Host == pu.Hostname() && r.Path == pu.RequestURI() && !r.Start.Before(sent) {
						if sf.third[u] {
							isThird[i] = true
							crossHost++
						}
						break
					}
				}
			}
			// One request at a time per host, subrequests included; a gap
			// on either side of a third-party one.
			last := map[string]int{}
			for i, r := range log {
				j, ok := last[r.Host]
				last[r.Host] = i
				if !ok {
					continue
				}
				o := log[j]
				if r.Start.Before(o.End) {
					t.Errorf("%s: %s started before %s ended", r.Host, r.Path, o.Path)
				} else if (isThird[i] || isThird[j]) && r.Start.Sub(o.End) < gap-2*time.Millisecond {
					t.Errorf("%s: %s started %v after %s ended, want ≥ %v (a third-party subrequest)", r.Host, r.Path, r.Start.Sub(o.End), o.Path, gap)
				}
			}
			t.Logf("pages %d; subrequests: %d admitted (%d to other hosts), %d refused (robots.txt %d, other host %d)",
				s.Pages(), s.Subrequests, crossHost, s.SubrequestsRefused, robotsRefused, thirdRefused)
			if s.Subrequests == 0 || s.Subrequests != uint64(sf.n) {
				t.Errorf("Stats.Subrequests %d, the fetcher made %d", s.Subrequests, sf.n)
			}
			if s.SubrequestsRefused != uint64(len(sf.refused)) {
				t.Errorf("Stats.SubrequestsRefused %d, the fetcher was refused %d", s.SubrequestsRefused, len(sf.refused))
			}
			if robotsRefused == 0 {
				t.Error("no subrequest was refused by robots.txt: the test checks nothing there")
			}
			if third && (thirdRefused > 0 || crossHost == 0) {
				t.Errorf("with ThirdParty: %d subrequests refused for going to another host, %d made", thirdRefused, crossHost)
			}
			if !third && (thirdRefused == 0 || crossHost > 0) {
				t.Errorf("without ThirdParty: %d subrequests to other hosts refused, %d made", thirdRefused, crossHost)
			}
		})
	}
}

// TestGateConformance runs the Gate suite on the crawl's Gate, on the
// simulated web: the page's own host is admitted, a path its robots.txt
// forbids and another host (without ThirdParty) are refused.
func TestGateConformance(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 7, Hosts: 4, MeanPages: 4, ChangePeriods: []time.Duration{0}})
	defer web.Close()
	var host string
	for _, h := range web.OrdinaryHosts() {
		if !web.Allowed("crawlkit", "http://"+h+":"+web.Port()+"/private/x") {
			host = h
			break
		}
	}
	if host == "" {
		t.Fatal("no host of the web forbids /private/")
	}
	base := "http://" + host + ":" + web.Port()
	must := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	fetchertest.RunGate(t, fetchertest.GateHarness{
		New: func(t *testing.T) fetch.Gate {
			c := newTestCrawler(t, web, nil)
			t.Cleanup(c.closeAll)
			return newGate(c, SubrequestOptions{})
		},
		Page:     must(base + "/"),
		Admitted: []*url.URL{must(base + "/app.js"), must(base + "/style.css")},
		Refused:  []*url.URL{must(base + "/private/track.js"), must("http://other.test:" + web.Port() + "/lib.js")},
	})
}
