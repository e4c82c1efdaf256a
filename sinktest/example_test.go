package sinktest_test

import (
	"fmt"

	"github.com/crawlkit/crawlkit/sinktest"
)

// ExamplePage shows a page the suite writes: a harness that reads an
// index finds every page by searching for TitleWord.
func ExamplePage() {
	p := sinktest.Page(4)
	fmt.Println(p.URL)
	fmt.Println(p.Document.Title, p.Depth, p.Links)
	fmt.Println(p.Response.Status, p.Response.ContentType, len(p.Response.Body) > 0)
	// Output:
	// http://h1.sinktest.test/page/4
	// Sinktest page p4 0 [http://h2.sinktest.test/page/5]
	// 200 text/html true
}
