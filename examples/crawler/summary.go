package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dns/dnstest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/webgraph"
)

// demoWeb is the simulated web -demo crawls, with its DNS server.
type demoWeb struct {
	web *fetchtest.Web
	dns *dnstest.Server
}

func startDemo(o *options) (*demoWeb, error) {
	web := fetchtest.NewWeb(fetchtest.Config{
		Seed:      1,
		Hosts:     o.DemoHosts,
		MeanPages: o.DemoPages,
		// A resumed demo serves its web where the last run did: the
		// pending URLs name that port.
		Addr: o.DemoWeb,
		// A cap on the largest host keeps the demo within its minute:
		// one host's pages are fetched one at a time, k × fetch time apart.
		MaxPages:      demoMaxPages(o),
		CrawlDelay:    100 * time.Millisecond,
		RetryAfter:    200 * time.Millisecond,
		ChangePeriods: []time.Duration{0},
		// Pages only sitemaps list, a site of rel=canonical aliases, and
		// hosts whose robots.txt is busy (503) at the first request.
		SitemapOnly: true,
		Canonicals:  true,
		BusyRobots:  25,
		// With -render, a web application and a shop whose pages only
		// scripts fill in.
		Scripts: o.Render != "" && o.Render != "off",
	})
	srv, err := dnstest.NewServer(dnstest.Config{})
	if err != nil {
		web.Close()
		return nil, fmt.Errorf("demo DNS server: %w", err)
	}
	srv.AddWildcard(web.Domain(), 300, netip.MustParseAddr("127.0.0.1"))
	return &demoWeb{web: web, dns: srv}, nil
}

// commandName is how to run the bundled command name: "go run
// ./examples/name" when this process was started by go run (its binary
// lives in Go's build cache), else the bare name, as installed commands
// are run.
func commandName(name string) string {
	if strings.Contains(filepath.ToSlash(os.Args[0]), "/go-build") {
		return "go run ./examples/" + name
	}
	return name
}

// nextCommands prints what to run next on the crawl's outputs: the
// connectivity server on the graph (with the path as printed above),
// the resume when URLs are pending, and where the outputs are.
func nextCommands(w io.Writer, o *options, graphBase string, pending bool) {
	fmt.Fprintln(w, "\nnext:")
	fmt.Fprintf(w, "  browse the link graph:  %s -store %s.graph   (then open http://127.0.0.1:8090/)\n", commandName("connectivity"), graphBase)
	if o.out == "" {
		fmt.Fprintf(w, "  keep everything:        add -out DIR (WARC files, page records, index, state to resume);\n"+
			"                          without it only the graph is kept, in %s\n", filepath.Dir(graphBase))
		return
	}
	if pending {
		fmt.Fprintf(w, "  continue the crawl:     %s -out %s -resume\n", commandName("crawler"), o.out)
	}
	fmt.Fprintf(w, "  outputs:                %s (warc/, pages.jsonl, links.tsv, index/, graph/, state/)\n", o.out)
}

// demoMaxPages is the page count of the largest demo host.
func demoMaxPages(o *options) int { return 5 * o.DemoPages }

func (d *demoWeb) Close() {
	d.dns.Close()
	d.web.Close()
}

// check compares the crawl with the simulated web's ground truth, as seen
// in its request log.
func (d *demoWeb) check(w io.Writer, agent string, rendered bool) {
	log := d.web.Log()
	maxConc := 0
	for _, n := range fetchtest.MaxConcurrency(log) {
		maxConc = max(maxConc, n)
	}
	// Pages the URL filters refuse (images, PDFs) are not expected; a
	// page counts as found when it or an exact duplicate of it was
	// requested (the links of a duplicate are not followed).
	filters := frontier.DefaultFilters()
	skip := func(u string) bool {
		pu, err := url.Parse(u)
		return err != nil || filters.Filter(pu) != nil
	}
	reachable, missed := d.web.Reachable, d.web.Missed
	if rendered {
		// A crawl that renders reaches the pages only scripts link to.
		reachable, missed = d.web.ReachableRendered, d.web.MissedRendered
	}
	expected := 0
	for _, u := range reachable(agent, d.web.Seeds()...) {
		if !skip(u) {
			expected++
		}
	}
	found := expected - len(missed(agent, skip))
	fmt.Fprintf(w, "\nground truth: %d of the %d pages reachable under robots.txt (traps and non-pages aside) were found, in %d requests; robots.txt violations: %d; most concurrent requests to one host: %d\n",
		found, expected, len(log), len(d.web.RobotsViolations(agent)), maxConc)
	// The pages only sitemaps list: found when they, or a mirror's copy,
	// were requested.
	req := map[string]bool{}
	for _, r := range log {
		req["http://"+r.Host+":"+d.web.Port()+r.Path] = true
	}
	dupOf := map[string][]string{}
	for _, cl := range d.web.ExactDuplicates() {
		for _, u := range cl {
			dupOf[u] = cl
		}
	}
	onlyFound, onlyExpected := 0, 0
	for _, u := range d.web.SitemapOnlyPages() {
		if !d.web.Allowed(agent, u) {
			continue
		}
		onlyExpected++
		hit := req[u]
		for _, c := range dupOf[u] {
			hit = hit || req[c]
		}
		if hit {
			onlyFound++
		}
	}
	fmt.Fprintf(w, "sitemaps: %d of the %d pages only sitemaps list were found\n", onlyFound, onlyExpected)
}

// buildGraph turns a link log into a compressed web graph and its
// transpose at basename.
func buildGraph(linksPath, basename string) error {
	if err := os.MkdirAll(filepath.Dir(basename), 0o755); err != nil {
		return err
	}
	f, err := os.Open(linksPath)
	if err != nil {
		return err
	}
	defer f.Close()
	// Batches smaller than the defaults: the graph of a crawl of millions
	// of pages is built in a few hundred MiB, at the cost of more runs
	// to merge.
	b, err := webgraph.NewBuilder(&webgraph.BuilderOptions{TempDir: filepath.Dir(basename), BatchURLs: 256 << 10, BatchArcs: 2 << 20})
	if err != nil {
		return err
	}
	defer b.Close()
	// Aliases (rel=canonical) collapse into their canonical URL's node.
	if err := crawlkit.ReadLinkLogCanonical(f, b.AddURL, b.AddLink); err != nil {
		return fmt.Errorf("link log: %w", err)
	}
	if err := b.Finish(basename); err != nil {
		return fmt.Errorf("web graph: %w", err)
	}
	return nil
}

// summarizeGraph prints the graph's size in bits per link and its most
// linked pages, in memory bounded by the number of nodes (one int each is
// not kept: a top-5 is).
func summarizeGraph(w io.Writer, graphBase string) error {
	store, err := webgraph.OpenStore(graphBase)
	if err != nil {
		return fmt.Errorf("web graph: %w", err)
	}
	st, err := os.Stat(graphBase + ".graph")
	if err != nil {
		return err
	}
	arcs := store.NumArcs()
	fmt.Fprintf(w, "\nweb graph: %d URLs, %d links", store.NumNodes(), arcs)
	if arcs > 0 {
		fmt.Fprintf(w, ", %.2f bits/link (Boldi–Vigna, %s.graph)", float64(st.Size()*8)/float64(arcs), graphBase)
	}
	fmt.Fprintln(w)

	type node struct{ id, in int }
	better := func(a, b node) bool { return a.in > b.in || a.in == b.in && a.id < b.id }
	var top []node // the best five, best first
	for id := range store.NumNodes() {
		in, err := store.InDegree(id)
		if err != nil {
			return err
		}
		n := node{id, in}
		if len(top) == 5 && !better(n, top[4]) {
			continue
		}
		i := sort.Search(len(top), func(i int) bool { return better(n, top[i]) })
		top = slices.Insert(top, i, n)
		if len(top) > 5 {
			top = top[:5]
		}
	}
	fmt.Fprintln(w, "most linked pages:")
	for _, n := range top {
		u, _ := store.URL(n.id)
		fmt.Fprintf(w, "  %5d in-links  %s\n", n.in, u)
	}
	return nil
}

// searchSummary runs a sample query on the crawl's index and returns
// what to print of it ("" for an empty index).
func searchSummary(ctx context.Context, searcher index.Searcher, titles []string) (string, error) {
	docs, an := 0, (*index.Analyzer)(nil)
	switch ix := searcher.(type) {
	case *index.Shard:
		docs, an = ix.Len(), ix.Analyzer()
	case *index.Dir:
		docs, an = int(ix.Info().Docs), ix.Analyzer()
	}
	if docs == 0 {
		return "", nil
	}
	query := sampleQuery(titles)
	q := index.ParseQuery(an, query, index.And, 3)
	res, err := searcher.Search(ctx, q, nil)
	if err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "index: %d documents; query %q:\n", docs, query)
	for _, h := range res.Hits {
		fmt.Fprintf(&b, "  %.3f  %s  %q\n", h.Score, h.URL, h.Title)
	}
	return b.String(), nil
}

// sampleQuery picks two words of the first title that has them: the
// crawl's first pages are its seeds and their neighbours, so the query
// is sure to have answers.
func sampleQuery(titles []string) string {
	for _, t := range titles {
		var words []string
		for _, f := range strings.Fields(t) {
			if f = strings.Trim(f, ".,:;!?()[]\"'"); len(f) > 3 {
				words = append(words, strings.ToLower(f))
			}
			if len(words) == 2 {
				return strings.Join(words, " ")
			}
		}
	}
	return "page"
}
