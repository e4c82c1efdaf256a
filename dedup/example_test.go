package dedup_test

import (
	"context"
	"fmt"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
)

func ExampleSet() {
	ctx := context.Background()
	urls := new(dedup.Set)
	for _, u := range []string{"http://a.test/", "http://b.test/", "http://a.test/"} {
		seen, _ := urls.TestAndAdd(ctx, dedup.Fingerprint(u))
		fmt.Println(u, seen)
	}
	// Output:
	// http://a.test/ false
	// http://b.test/ false
	// http://a.test/ true
}

func ExampleContent() {
	ctx := context.Background()
	c, _ := dedup.NewContent(nil)
	article := deduptest.Text(7, 200)
	pages := []dedup.Doc{
		{URL: "http://a.test/story", Text: []byte(article)},
		{URL: "http://mirror.test/story", Text: []byte(article)},
		{URL: "http://b.test/story?print", Text: []byte(article + " printed on monday")},
		{URL: "http://c.test/other", Text: []byte(deduptest.Text(8, 200))},
	}
	for _, p := range pages {
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
	// Output:
	// http://a.test/story new
	// http://mirror.test/story duplicate of http://a.test/story
	// http://b.test/story?print near-duplicate of http://a.test/story
	// http://c.test/other new
}
