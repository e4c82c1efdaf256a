package urlnorm_test

import (
	"fmt"
	"net/url"

	"github.com/crawlkit/crawlkit/urlnorm"
)

func Example() {
	page, _ := url.Parse("http://en.wikipedia.org/wiki/Main_Page")
	for _, href := range []string{
		"/wiki/Wikipedia:General_disclaimer",
		" ../wiki/Caf\u00e9#History ",
		"HTTP://EN.Wikipedia.org:80/wiki/./Main_Page",
	} {
		u, err := urlnorm.Resolve(page, href)
		if err != nil {
			fmt.Println(err)
			continue
		}
		key, _ := urlnorm.Canonical(u.String())
		fmt.Println(key, urlnorm.SortKey(u))
	}
	// Output:
	// http://en.wikipedia.org/wiki/Wikipedia:General_disclaimer org.wikipedia.en/wiki/Wikipedia:General_disclaimer
	// http://en.wikipedia.org/wiki/Caf%C3%A9 org.wikipedia.en/wiki/Caf%C3%A9
	// http://en.wikipedia.org/wiki/Main_Page org.wikipedia.en/wiki/Main_Page
}

func ExampleResolve() {
	base, _ := url.Parse("http://a/b/c/d;p?q")
	for _, ref := range []string{"../g", "//g", "?y", "g#s", `..\..\x y`, "http://b\u00fccher.example/", "http:///www.example.com/x", "..//index.html"} {
		u, _ := urlnorm.Resolve(base, ref)
		fmt.Println(u)
	}
	// Output:
	// http://a/b/g
	// http://g/
	// http://a/b/c/d;p?y
	// http://a/b/c/g#s
	// http://a/x%20y
	// http://xn--bcher-kva.example/
	// http://www.example.com/x
	// http://a/b//index.html
}

func ExampleCanonical() {
	key, _ := urlnorm.Canonical("HTTP://Example.COM:80/a/./b/../%7euser/%2f?q=%3d#top")
	fmt.Println(key)
	// Output: http://example.com/a/~user/%2F?q=%3D
}

func ExampleCanonicalizer() {
	c := urlnorm.Canonicalizer{SortQuery: true, StripParams: urlnorm.TrackingParams(), FoldWWW: true}
	key, _ := c.Canonical("https://www.example.com/list?page=2&utm_source=feed&cat=7&JSESSIONID=x")
	fmt.Println(key)
	// Output: https://example.com/list?cat=7&page=2
}

func ExampleDomain() {
	for _, h := range []string{"www.cs.stanford.edu", "a.b.example.co.uk", "10.0.0.1"} {
		fmt.Println(urlnorm.Domain(h))
	}
	// Output:
	// stanford.edu
	// example.co.uk
	// 10.0.0.1
}

func ExampleSortKey() {
	u, _ := url.Parse("http://www.stanford.edu/alchemy")
	fmt.Println(urlnorm.SortKey(u))
	// Output: edu.stanford.www/alchemy
}
