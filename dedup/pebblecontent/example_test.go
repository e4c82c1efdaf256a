package pebblecontent_test

import (
	"context"
	"fmt"
	"os"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
	"github.com/crawlkit/crawlkit/dedup/pebblecontent"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "content")
	defer os.RemoveAll(dir)

	c, err := pebblecontent.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	article := deduptest.Text(7, 200)
	m, _ := c.Seen(ctx, dedup.Doc{URL: "http://a.test/story", Text: []byte(article)})
	fmt.Println("first crawl:", m.Seen)
	_, known, _ := c.Record(0x1234, "http://a.test/logo.png") // a body without text
	fmt.Println("logo known:", known)
	c.Close()

	c, err = pebblecontent.Open(dir, nil) // after a restart
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for _, p := range []dedup.Doc{
		{URL: "http://mirror.test/story", Text: []byte(article)},
		{URL: "http://b.test/story?print", Text: []byte(article + " printed on monday")},
		{URL: "http://c.test/other", Text: []byte(deduptest.Text(8, 200))},
	} {
		m, _ := c.Seen(ctx, p)
		switch {
		case !m.Seen:
			fmt.Println(p.URL, "new")
		case m.Near:
			fmt.Println(p.URL, "near-duplicate of", m.URL)
		default:
			fmt.Println(p.URL, "duplicate of", m.URL)
		}
	}
	first, known, _ := c.Record(0x1234, "http://cdn.test/logo.png")
	fmt.Println("logo known:", known, "at", first)
	// Output:
	// first crawl: false
	// logo known: false
	// http://mirror.test/story duplicate of http://a.test/story
	// http://b.test/story?print near-duplicate of http://a.test/story
	// http://c.test/other new
	// logo known: true at http://a.test/logo.png
}
