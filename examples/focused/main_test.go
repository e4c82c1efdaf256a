package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestTermsAndCosine(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"river boat", "River BOAT", 1},
		{"river boat", "the river and the boat", 1},
		{"river boat", "river", 1 / math.Sqrt2},
		{"river boat", "mountain", 0},
		{"", "river", 0},
		{"river river river", "river", 1},
		{"Fluß über", "fluß", 1 / math.Sqrt2},
	}
	for _, tt := range tests {
		if got := cosine(terms(tt.a), terms(tt.b)); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("cosine(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if v := terms("a the of"); len(v) != 0 {
		t.Errorf("stop words kept: %v", v)
	}
	if v := terms("sea sea sea"); math.Abs(v["sea"]-(1+math.Log(3))) > 1e-9 {
		t.Errorf("tf weight %v", v["sea"])
	}
}

func TestFocusPriority(t *testing.T) {
	f := NewFocus("river lake boat")
	f.Record("http://a.test/water", "River and lake", "boats on the river")
	f.Record("http://a.test/dry", "Desert", "sand and stone")
	tests := []struct {
		name string
		u    frontier.URL
		want int // with 8 levels
	}{
		{"seed", frontier.URL{URL: "http://a.test/"}, 7},
		{"on-topic anchor, on-topic page", frontier.URL{URL: "http://a.test/1", Anchor: "River Boat Lake", Source: "http://a.test/water"}, 7},
		{"on-topic anchor, off-topic page", frontier.URL{URL: "http://a.test/2", Anchor: "Lake", Source: "http://a.test/dry"}, 5},
		{"off-topic anchor, on-topic page", frontier.URL{URL: "http://a.test/3", Anchor: "Stone", Source: "http://a.test/water"}, 4},
		{"off-topic anchor, off-topic page", frontier.URL{URL: "http://a.test/4", Anchor: "Stone", Source: "http://a.test/dry"}, 0},
		{"unknown source", frontier.URL{URL: "http://a.test/5", Anchor: "", Source: "http://a.test/unknown"}, 0},
	}
	for _, tt := range tests {
		if got := f.Priority(&tt.u, 8); got != tt.want {
			t.Errorf("%s: priority %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := f.Priority(&frontier.URL{URL: "http://a.test/"}, 1); got != 0 {
		t.Errorf("one level: %d", got)
	}
}

func TestFocusParserRecords(t *testing.T) {
	f := NewFocus("harbor")
	p := f.Parser(&fetch.Registry{})
	u, _ := url.Parse("http://a.test/page")
	if _, err := p.Parse(&fetch.Response{URL: u, ContentType: "text/html", Body: []byte("<title>Harbor</title><p>harbor ships</p>")}); err != nil {
		t.Fatal(err)
	}
	if r, ok := f.PageRelevance("http://a.test/page"); !ok || r <= 0.5 {
		t.Errorf("relevance %v %v", r, ok)
	}
	if _, ok := f.PageRelevance("http://a.test/other"); ok {
		t.Error("unparsed page has a relevance")
	}
}

func TestScope(t *testing.T) {
	s := Scope{Domains: []string{"example.co.uk", "sim.test"}, Skip: regexp.MustCompile(`/private/|\?sid=`)}
	tests := []struct {
		url    string
		reason frontier.Reason // ReasonOther: accepted
	}{
		{"http://www.example.co.uk/a", frontier.ReasonOther},
		{"http://EXAMPLE.co.uk/a", frontier.ReasonOther},
		{"http://h001.sim.test:8080/x", frontier.ReasonOther},
		{"http://other.co.uk/a", frontier.ReasonDomain},
		{"http://co.uk/a", frontier.ReasonDomain},
		{"http://www.example.co.uk/private/x", frontier.ReasonPattern},
		{"http://h001.sim.test/item?sid=9", frontier.ReasonPattern},
	}
	for _, tt := range tests {
		u, _ := url.Parse(tt.url)
		err := s.Filter(u)
		r, rejected := frontier.ReasonOf(err)
		if tt.reason == frontier.ReasonOther && err != nil || tt.reason != frontier.ReasonOther && (!rejected || r != tt.reason) {
			t.Errorf("%s: %v, want reason %v", tt.url, err, tt.reason)
		}
	}
	if err := (Scope{}).Filter(&url.URL{Scheme: "http", Host: "any.where"}); err != nil {
		t.Errorf("zero Scope refused: %v", err)
	}
}

// TestFocusedBeatsBreadthFirst is the example's claim: with the same page
// budget on the same simulated web, the focused crawler fetches more pages
// on the topic than a breadth-first crawl.
func TestFocusedBeatsBreadthFirst(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 120, MeanPages: 15, ChangePeriods: []time.Duration{0}})
	defer web.Close()
	q := terms(defaultQuery)
	s := setup{
		seeds: web.Seeds(), resolver: loopback(web.Domain()), allowPriv: true, suffixes: []string{web.Domain()},
		scope:  Scope{Domains: []string{"sim.test"}, Skip: regexp.MustCompile(`/search\?`)},
		budget: 250, workers: 8,
		onTopic: func(u, _ string) bool { return titleHasTopic(q, web.Title(u)) },
	}
	// Workers race, so one crawl's order, and its count, vary from run
	// to run; the claim is about the median of three.
	median := func(p func() *Focus) int {
		var got []int
		for range 3 {
			r, err := crawlBudget(context.Background(), s, p())
			if err != nil {
				t.Fatal(err)
			}
			if r.Fetched != s.budget {
				t.Fatalf("budget not used up: %d pages of %d", r.Fetched, s.budget)
			}
			got = append(got, r.OnTopic)
		}
		slices.Sort(got)
		t.Logf("on-topic pages of three crawls: %v", got)
		return got[1]
	}
	foc := median(func() *Focus { return NewFocus(defaultQuery) })
	bfs := median(func() *Focus { return nil })
	if foc <= bfs {
		t.Errorf("focused found a median %d on-topic pages, breadth first %d: no gain", foc, bfs)
	}
	if v := web.RobotsViolations("crawlkit"); len(v) > 0 {
		t.Errorf("%d requests robots.txt forbade", len(v))
	}
}

func TestRunDemo(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-demo", "-demo-hosts", "40", "-demo-pages", "10", "-max-pages", "60"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"simulated web:", "focused:", "breadth-first:", "on-topic of   60 pages"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRunFlags runs the command on each rejected command line: exit
// status 2 and one line naming the problem.
func TestRunFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "nothing to crawl: give -seeds or -demo"},
		{[]string{"-demo", "-seeds", "http://a.test/"}, "drop -seeds"},
		{[]string{"-demo", "-dns", "127.0.0.1:5353"}, "drop -dns"},
		{[]string{"-seeds", ","}, `-seeds "," holds no URL`},
		{[]string{"-seeds", "garbage"}, `seed "garbage" is not an absolute http(s) URL`},
		{[]string{"-seeds", "http://a.test/", "-dns", "localhost"}, `-dns "localhost": want IP:PORT`},
		{[]string{"-seeds", "http://a.test/", "-domains", "a.test,"}, `-domains: "" is not a domain name`},
		{[]string{"-seeds", "http://a.test/", "-domains", "http://a.test/"}, "is not a domain name"},
		{[]string{"-demo", "-max-pages", "0"}, "-max-pages and -workers must be at least 1"},
		{[]string{"-demo", "-max-pages", "-5"}, "-max-pages and -workers"},
		{[]string{"-demo", "-workers", "0"}, "-max-pages and -workers"},
		{[]string{"-demo", "-demo-hosts", "0"}, "-demo-hosts and -demo-pages must be at least 1"},
		{[]string{"-demo", "-demo-pages", "-1"}, "-demo-hosts and -demo-pages"},
		{[]string{"-demo", "-query", "the of"}, `-query "the of" has no words`},
		{[]string{"-demo", "-skip", "("}, "-skip: error parsing regexp"},
		{[]string{"-demo", "-anchor-weight", "2"}, "-anchor-weight 2 must be within 0..1"},
		{[]string{"-demo", "-anchor-weight", "-0.1"}, "-anchor-weight"},
		{[]string{"-demo", "extra"}, `unexpected argument "extra"`},
		{[]string{"-nosuch"}, "flag provided but not defined: -nosuch (-h lists the flags)"},
		{[]string{"-demo", "-max-pages", "many"}, `invalid value "many" for flag -max-pages`},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errb)
		msg := errb.String()
		if code != 2 || !strings.HasPrefix(msg, "focused: ") || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, msg, tc.want)
		}
	}
}

// TestRunDNS crawls a simulated web on loopback as an operator crawls
// simweb: seeds, the web's DNS server with -dns, -allow-private.
func TestRunDNS(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 20, MeanPages: 8, ChangePeriods: []time.Duration{0},
		CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	defer web.Close()
	srv := dnstest.Start(t, dnstest.Config{})
	srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-seeds", web.Seeds()[0], "-dns", srv.Addr(), "-allow-private",
		"-max-pages", "30", "-compare=false", "-query", "river boat"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "on-topic of   30 pages") {
		t.Errorf("output:\n%s", out.String())
	}
	if v := web.RobotsViolations("crawlkit"); len(v) > 0 {
		t.Errorf("%d requests robots.txt forbade", len(v))
	}
}

// TestRunNothingFetched: a crawl that fetches nothing (here: the names do
// not resolve) fails with exit status 1 and says what to check, instead of
// reporting "0 on-topic of 0 pages".
func TestRunNothingFetched(t *testing.T) {
	srv := dnstest.Start(t, dnstest.Config{}) // knows no names
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-seeds", "http://h000.sim.test/", "-dns", srv.Addr(), "-allow-private", "-max-pages", "5"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "no page could be fetched (1 fetch errors") || !strings.Contains(errb.String(), "-dns") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	if strings.Contains(out.String(), "on-topic of") {
		t.Errorf("reported a result:\n%s", out.String())
	}
}

// Example shows the extension points the focused crawler uses: a
// Prioritizer ranking links by their anchor text and their page, and a
// URLFilter keeping the crawl in its domains.
func Example() {
	focus := NewFocus("river boat")
	focus.Record("http://a.sim.test/", "Boats", "a river page")
	scope := Scope{Domains: []string{"sim.test"}, Skip: regexp.MustCompile(`\?sid=`)}
	for _, l := range []frontier.URL{
		{URL: "http://a.sim.test/boats", Anchor: "River boat", Source: "http://a.sim.test/"},
		{URL: "http://a.sim.test/cars", Anchor: "Cars", Source: "http://a.sim.test/"},
		{URL: "http://b.sim.test/x?sid=1", Anchor: "River", Source: "http://a.sim.test/"},
		{URL: "http://example.com/river", Anchor: "River", Source: "http://a.sim.test/"},
	} {
		u, _ := url.Parse(l.URL)
		if err := scope.Filter(u); err != nil {
			r, _ := frontier.ReasonOf(err)
			fmt.Printf("%-28s refused (%s)\n", l.URL, r)
			continue
		}
		fmt.Printf("%-28s priority %d of 8\n", l.URL, focus.Priority(&l, 8))
	}
	// Output:
	// http://a.sim.test/boats      priority 7 of 8
	// http://a.sim.test/cars       priority 3 of 8
	// http://b.sim.test/x?sid=1    refused (pattern)
	// http://example.com/river     refused (domain)
}
