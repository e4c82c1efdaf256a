package fetch_test

import (
	"fmt"
	"log"
	"net/url"

	"github.com/crawlkit/crawlkit/fetch"
)

// ExampleUnmarshal pulls records out of a listing page with CSS selectors
// and struct tags, and follows its next-page link.
func ExampleUnmarshal() {
	page := []byte(`<html><body>
<ol>
 <li class="item"><a href="/p/ridge-18">Ridge 18L</a> <span class="price">49.00</span></li>
 <li class="item"><a href="/p/canyon-22">Canyon 22L</a> <span class="price">64.00</span></li>
</ol>
<a rel="next" href="?page=3">Next</a>
</body></html>`)
	type item struct {
		Name  string  `selector:"a"`
		URL   url.URL `selector:"a" attr:"href"`
		Price float64 `selector:".price"`
	}
	var listing struct {
		Items []item `selector:"li.item"`
	}
	u, _ := url.Parse("https://shop.example/c/daypacks?page=2")
	dom, err := fetch.ParseDOM(page, u, false)
	if err != nil {
		log.Fatal(err)
	}
	if err := fetch.Unmarshal(dom.Root(), &listing); err != nil {
		log.Fatal(err)
	}
	for _, it := range listing.Items {
		fmt.Printf("%s %.2f %s\n", it.Name, it.Price, it.URL.String())
	}
	err = dom.Root().ForEach("a[rel=next]", func(e *fetch.Element) error { return e.Follow(e.Attr("href")) })
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range dom.Followed() {
		fmt.Println("next:", l.URL)
	}
	// Output:
	// Ridge 18L 49.00 https://shop.example/p/ridge-18
	// Canyon 22L 64.00 https://shop.example/p/canyon-22
	// next: https://shop.example/c/daypacks?page=3
}
