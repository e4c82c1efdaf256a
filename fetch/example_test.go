package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// loopback resolves every name to 127.0.0.1, where the simulated web runs.
type loopback struct{}

func (loopback) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// Example fetches a page of a simulated web and parses it, the way a crawler
// worker does.
func Example() {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 3})
	defer web.Close()

	f := fetch.NewHTTP(&fetch.Options{Resolver: loopback{}, AllowPrivate: true, UserAgent: "examplebot/1.0"})
	defer f.Close()
	u, _ := url.Parse(web.URL(web.Host(fetchtest.Latin1), "/p/1.html"))
	resp, err := f.Fetch(context.Background(), &fetch.Request{URL: u})
	if err != nil {
		fmt.Println(err)
		return
	}
	var p fetch.ByType
	doc, err := p.Parse(resp)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, resp.ContentType, resp.Charset)
	fmt.Println(doc.Title == web.Title(u.String()), len(doc.Links) > 0)

	// A re-crawl sends the validators of the last response.
	again, _ := f.Fetch(context.Background(), &fetch.Request{URL: u, ETag: resp.ETag})
	fmt.Println(again.Status, again.NotModified())
	// Output:
	// 200 text/html windows-1252
	// true true
	// 304 true
}

func ExampleHTML() {
	page, _ := url.Parse("http://www.example.com/news/today.html")
	var p fetch.HTML
	doc := p.ParseBytes([]byte(`<HTML lang=en><TITLE>Today</TITLE>
<script>var hidden = 1</script>
<P>Read the <A HREF=../archive/>archive</A> or <a href="mailto:ed@example.com">write</a>.
<a href="https://other.example/x" rel=nofollow>Elsewhere</a>`), page)
	fmt.Printf("%q %q %q\n", doc.Title, doc.Lang, doc.Text)
	for _, l := range doc.Links {
		fmt.Println(l.URL, l.Text, l.HasRel("nofollow"))
	}
	// Output:
	// "Today" "en" "Read the archive or write. Elsewhere"
	// http://www.example.com/archive/ archive false
	// https://other.example/x Elsewhere true
}

func ExampleSitemap() {
	var s fetch.Sitemap
	sd, err := s.ParseBytes([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://www.example.com/</loc><lastmod>2005-01-01</lastmod><priority>0.8</priority></url>
  <url><loc>http://www.example.com/about</loc><changefreq>monthly</changefreq></url>
</urlset>`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range sd.Entries {
		fmt.Println(e.URL, e.LastMod.Format("2006-01-02"), e.ChangeFreq, e.Priority)
	}
	// Output:
	// http://www.example.com/ 2005-01-01  0.8
	// http://www.example.com/about 0001-01-01 monthly 0.5
}

// ExampleParseLinkHeader reads the canonical URL a PDF names in its
// HTTP Link header, the only place a non-HTML resource can name one.
func ExampleParseLinkHeader() {
	base, _ := url.Parse("https://example.com/papers/report.pdf?ref=feed")
	links := fetch.ParseLinkHeader([]string{`</papers/report.pdf>; rel="canonical", <https://cdn.example.com/report.pdf>; rel=alternate; type="application/pdf"`}, base)
	for _, l := range links {
		fmt.Println(l.Rel, l.URL)
	}
	// Output:
	// canonical https://example.com/papers/report.pdf
	// alternate https://cdn.example.com/report.pdf
}

// ExampleError shows the private-address guard: without AllowPrivate the
// fetcher refuses to connect to loopback, whatever the name resolves to.
func ExampleError() {
	f := fetch.NewHTTP(&fetch.Options{Resolver: loopback{}})
	defer f.Close()
	u, _ := url.Parse("http://intranet.example/")
	_, err := f.Fetch(context.Background(), &fetch.Request{URL: u})
	var fe *fetch.Error
	if errors.As(err, &fe) {
		fmt.Println(fe.Kind, errors.Is(err, fetch.ErrPrivateAddress))
	}
	// Output: refused address true
}

// ExampleHTTP_PostForm logs in to a site before crawling it: the login
// form's POST fills the cookie jar with a session, and the crawl of the
// protected area that follows carries it. Without the login, every
// protected page would answer 302 to the form.
func ExampleHTTP_PostForm() {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 1, Members: true})
	defer web.Close()

	jar, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	f := fetch.NewHTTP(&fetch.Options{Resolver: loopback{}, AllowPrivate: true, Jar: jar})
	defer f.Close()
	ctx := context.Background()
	members := web.Host(fetchtest.Members)

	login, _ := url.Parse(web.URL(members, "/login"))
	resp, err := f.PostForm(ctx, login, url.Values{"user": {fetchtest.MembersUser}, "password": {fetchtest.MembersPassword}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("login:", resp.Status, resp.Location.Path)

	// Crawl the protected area breadth first from where the login sent us.
	var p fetch.ByType
	queue := []*url.URL{resp.Location}
	seen := map[string]bool{resp.Location.String(): true}
	pages := 0
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		r, err := f.Fetch(ctx, &fetch.Request{URL: u})
		if err != nil || r.Status != 200 {
			continue
		}
		pages++
		doc, err := p.Parse(r)
		if err != nil {
			continue
		}
		for _, l := range doc.Links {
			if l.URL.Hostname() == members && strings.HasPrefix(l.URL.Path, "/members/") && !seen[l.URL.String()] {
				seen[l.URL.String()] = true
				queue = append(queue, l.URL)
			}
		}
	}
	fmt.Println("protected pages:", pages, "of", len(web.MembersPages()))
	// Output:
	// login: 303 /members/
	// protected pages: 15 of 15
}

// ExampleProxyURL fetches through an HTTP proxy. The fetcher resolves the
// name and judges the address itself, and asks the proxy for a tunnel to
// that address (CONNECT IP:port), with the name in the Host header.
func ExampleProxyURL() {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 1})
	defer web.Close()
	proxy := fetchtest.NewProxy(fetchtest.ProxyConfig{}) // on 127.0.0.1, reaching loopback only
	defer proxy.Close()

	pu, err := fetch.ParseProxy(proxy.HTTPURL().String()) // as a -proxy flag would give it
	if err != nil {
		fmt.Println(err)
		return
	}
	f := fetch.NewHTTP(&fetch.Options{Resolver: loopback{}, AllowPrivate: true, Proxy: fetch.ProxyURL(pu)})
	defer f.Close()
	u, _ := url.Parse(web.Seeds()[0])
	resp, err := f.Fetch(context.Background(), &fetch.Request{URL: u})
	if err != nil {
		fmt.Println(err)
		return
	}
	e := proxy.Log()[0]
	fmt.Println(resp.Status, e.Method, e.Target == "127.0.0.1:"+web.Port(), e.Host == u.Host)
	// Output: 200 CONNECT true true
}
