package parsertest_test

import (
	"fmt"
	"net/url"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/parsertest"
)

// ExampleGarbage feeds the suite's malformed HTML to the HTML parser's
// low level, which never fails: every body yields a Document.
func ExampleGarbage() {
	base, _ := url.Parse("http://garbage.test/")
	var p fetch.HTML
	docs := 0
	for _, body := range parsertest.Garbage(parsertest.HTML) {
		if p.ParseBytes(body, base) != nil {
			docs++
		}
	}
	fmt.Println(docs, "of", len(parsertest.Garbage(parsertest.HTML)), "bodies parsed")
	// Output:
	// 15 of 15 bodies parsed
}
