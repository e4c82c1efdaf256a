package crawlkit

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/index"
)

// crawlCanonicals crawls a small web with the Canonicals site under
// policy and returns the web, the index and the link log.
func crawlCanonicals(t *testing.T, policy CanonicalPolicy) (*fetchtest.Web, *index.Shard, []byte) {
	t.Helper()
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 4, Hosts: 3, MeanPages: 4, Mirrors: -1, NearDuplicates: -1,
		ChangePeriods: []time.Duration{0}, Canonicals: true, CrawlDelay: 10 * time.Millisecond, RetryAfter: 10 * time.Millisecond})
	t.Cleanup(web.Close)
	shard := index.NewShard(nil)
	var links bytes.Buffer
	c := newTestCrawler(t, web, func(cfg *Config) {
		cfg.Canonicals = policy
		cfg.MaxRetries = -1
		cfg.Sinks = []Sink{IndexSink{Shard: shard}, NewLinkLog(&links)}
	})
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return web, shard, links.Bytes()
}

// graphOf reads a link log with read into its nodes and link ends.
func graphOf(t *testing.T, log []byte, canonical bool) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	node := func(s string) error { seen[s] = true; return nil }
	link := func(s, d string) error { seen[s], seen[d] = true, true; return nil }
	var err error
	if canonical {
		err = ReadLinkLogCanonical(bytes.NewReader(log), node, link)
	} else {
		err = ReadLinkLog(bytes.NewReader(log), node, link)
	}
	if err != nil {
		t.Fatal(err)
	}
	return seen
}

// TestCanonicalAliasesCollapse: on the Canonicals site, every variant is
// fetched; those naming a canonical URL of their own site are left out
// of the index and collapse into the canonical node of the graph, which
// is there once; the syndicated story naming another site's page is a
// page of its own under the default policy.
func TestCanonicalAliasesCollapse(t *testing.T) {
	web, shard, log := crawlCanonicals(t, CanonicalSameDomain)
	host := web.Host(fetchtest.Canonicals)
	urls := append(web.PagesOf(host), web.PagesOf("m."+host)...)
	req := requested(web)
	raw, collapsed := graphOf(t, log, false), graphOf(t, log, true)
	aliases := 0
	for _, u := range urls {
		if req[u] == 0 {
			t.Errorf("%s never requested: an alias is still fetched", u)
		}
		canon, _ := web.RelCanonical(u)
		switch {
		case canon == "":
			if !shard.Has(u) {
				t.Errorf("%s, canonical, is not in the index", u)
			}
			if !collapsed[u] {
				t.Errorf("%s, canonical, is not in the graph", u)
			}
		case !strings.Contains(canon, host):
			// Another site's page: not honoured by default.
			if !shard.Has(u) || !collapsed[u] {
				t.Errorf("%s names another site's page, honoured anyway (index %v, graph %v)", u, shard.Has(u), collapsed[u])
			}
		default:
			aliases++
			if shard.Has(u) {
				t.Errorf("the alias %s of %s is in the index", u, canon)
			}
			if collapsed[u] {
				t.Errorf("the alias %s of %s is a node of the collapsed graph", u, canon)
			}
			if !collapsed[canon] {
				t.Errorf("%s, canonical of %s, is not in the graph", canon, u)
			}
		}
	}
	if aliases != 4*fetchtest.CanonicalArticles {
		t.Errorf("%d aliases checked, want %d", aliases, 4*fetchtest.CanonicalArticles)
	}
	// The raw log has the aliases that were pages as nodes: collapsing
	// did the work, not the crawl leaving them out.
	rawAliases := 0
	for u := range raw {
		if c, _ := web.RelCanonical(u); c != "" && strings.Contains(c, host) {
			rawAliases++
		}
	}
	if rawAliases == 0 {
		t.Error("no alias in the raw link log")
	}
}

// TestCanonicalPolicies: CanonicalAnyHost honours the syndicated story's
// canonical on another site; CanonicalOff honours none, so the variants
// that are not near-duplicates of their article are indexed.
func TestCanonicalPolicies(t *testing.T) {
	web, shard, log := crawlCanonicals(t, CanonicalAnyHost)
	host := web.Host(fetchtest.Canonicals)
	collapsed := graphOf(t, log, true)
	for k := range fetchtest.CanonicalArticles {
		u := web.URL(host, "/wire/"+string(rune('0'+k))+".html")
		if shard.Has(u) || collapsed[u] {
			t.Errorf("any host: %s is in the index (%v) or the graph (%v)", u, shard.Has(u), collapsed[u])
		}
	}
	web, shard, _ = crawlCanonicals(t, CanonicalOff)
	host = web.Host(fetchtest.Canonicals)
	for k := range fetchtest.CanonicalArticles {
		for _, u := range []string{web.URL(host, "/print/a/"+string(rune('0'+k))+".html"), web.URL(host, "/amp/"+string(rune('0'+k)))} {
			if !shard.Has(u) {
				t.Errorf("off: %s is not in the index", u)
			}
		}
	}
}

// TestCanonicalOf: what a page names, in its header or its <link>, and
// what the policy makes of it.
func TestCanonicalOf(t *testing.T) {
	page := "http://www.a.test/p?ref=x"
	for _, tc := range []struct {
		name   string
		policy CanonicalPolicy
		header string
		html   string
		want   string
	}{
		{"link element", CanonicalSameDomain, "", `<link rel=canonical href="/p">`, "http://www.a.test/p"},
		{"header", CanonicalSameDomain, `</p>; rel="canonical"`, "", "http://www.a.test/p"},
		{"header and link agree", CanonicalSameDomain, `<http://www.a.test/p>; rel=canonical`, `<link rel=canonical href="/p">`, "http://www.a.test/p"},
		{"header and link disagree", CanonicalSameDomain, `</q>; rel=canonical`, `<link rel=canonical href="/p">`, ""},
		{"itself", CanonicalSameDomain, "", `<link rel=canonical href="/p?ref=x">`, ""},
		{"other host, same domain", CanonicalSameDomain, "", `<link rel=canonical href="http://a.test/p">`, "http://a.test/p"},
		{"other host, host policy", CanonicalSameHost, "", `<link rel=canonical href="http://a.test/p">`, ""},
		{"other domain", CanonicalSameDomain, "", `<link rel=canonical href="http://b.test/p">`, ""},
		{"other domain, any", CanonicalAnyHost, "", `<link rel=canonical href="http://b.test/p">`, "http://b.test/p"},
		{"off", CanonicalOff, "", `<link rel=canonical href="/p">`, ""},
		{"filtered target", CanonicalSameDomain, "", `<link rel=canonical href="/p.zip">`, ""},
		{"an <a rel=canonical> is no claim", CanonicalSameDomain, "", `<a rel=canonical href="/p">p</a>`, ""},
	} {
		c, err := New(Config{Seeds: []string{"http://a.test/"}, Fetcher: fetch.Static{}, Canonicals: tc.policy})
		if err != nil {
			t.Fatal(err)
		}
		pu, _ := url.Parse(page)
		resp := &fetch.Response{URL: pu, Status: 200, Header: http.Header{}}
		if tc.header != "" {
			resp.Header.Set("Link", tc.header)
		}
		var h fetch.HTML
		doc := h.ParseBytes([]byte(tc.html), resp.URL)
		if got := c.canonicalOf(page, resp, doc); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		c.closeAll()
	}
}

func TestParseCanonicalPolicy(t *testing.T) {
	for p := CanonicalSameDomain; p < numCanonicalPolicies; p++ {
		if got, err := ParseCanonicalPolicy(p.String()); err != nil || got != p {
			t.Errorf("%v: %v, %v", p, got, err)
		}
	}
	if _, err := ParseCanonicalPolicy("registrable"); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown policy: %v, want ErrConfig", err)
	}
	if _, err := New(Config{Seeds: []string{"http://a.test/"}, Fetcher: fetch.Static{}, Canonicals: numCanonicalPolicies}); !errors.Is(err, ErrConfig) {
		t.Errorf("Canonicals out of range: %v, want ErrConfig", err)
	}
}

// TestReadLinkLogCanonical: alias records collapse the aliases, chains
// are followed, a cycle is left alone, and collapsing drops the
// self-loops it makes but keeps a page's link to itself.
func TestReadLinkLogCanonical(t *testing.T) {
	log := "http://a/p\thttp://a/alias\n" +
		"http://a/alias\thttp://a/c\n" + // the alias's rel=canonical link
		"http://a/alias\thttp://a/x\n" +
		"=\thttp://a/alias\thttp://a/mid\n" +
		"=\thttp://a/mid\thttp://a/c\n" +
		"http://a/c\thttp://a/c\n" +
		"=\thttp://a/l1\thttp://a/l2\n" +
		"=\thttp://a/l2\thttp://a/l1\n" +
		"http://a/l1\n"
	var got []string
	err := ReadLinkLogCanonical(strings.NewReader(log), func(s string) error {
		got = append(got, "node "+s)
		return nil
	}, func(s, d string) error {
		got = append(got, s+" -> "+d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node http://a/p", "http://a/p -> http://a/c", "node http://a/c", "http://a/c -> http://a/x",
		"http://a/c -> http://a/c", "node http://a/l1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var raw []string
	if err := ReadLinkLog(strings.NewReader(log), func(s string) error { raw = append(raw, s); return nil },
		func(s, d string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, s := range raw {
		if s == "=" {
			t.Error("ReadLinkLog reported an alias record as a node")
		}
	}
}
