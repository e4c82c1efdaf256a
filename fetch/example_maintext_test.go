package fetch_test

import (
	"fmt"
	"log"
	"net/url"

	"github.com/crawlkit/crawlkit/fetch"
)

// ExampleDOM_MainText keeps the article of a page and drops the menu,
// the share bar, the comments and the footer around it.
func ExampleDOM_MainText() {
	page := []byte(`<html><body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>
<article>
 <h1>Harbor Street gets bike lanes</h1>
 <div class="share"><a href="/s/x">Share on X</a> <a href="/s/f">Share on Facebook</a></div>
 <p>The council voted seven to two to build protected lanes along the street.</p>
 <p>Construction starts in the spring and takes about eight months.</p>
</article>
<div id="comments"><p>Finally! I have been waiting for this for years, well done.</p></div>
<footer>© 2026 The Daily Ledger. All rights reserved.</footer>
</body></html>`)
	u, _ := url.Parse("https://news.example/harbor")
	dom, err := fetch.ParseDOM(page, u, false)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(dom.MainText())
	// Output:
	// Harbor Street gets bike lanes
	// The council voted seven to two to build protected lanes along the street.
	// Construction starts in the spring and takes about eight months.
}
