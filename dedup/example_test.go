package dedup_test

import (
	"bytes"
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

// The content-seen set of a crawl that stops and resumes: every change is
// appended to a log (a file in practice), which a new set replays.
func ExampleDurable() {
	ctx := context.Background()
	var log bytes.Buffer // os.OpenFile("content.log", os.O_CREATE|os.O_RDWR, 0o644)
	before := &dedup.ExactContent{}
	before.LogTo(&log)
	before.Seen(ctx, dedup.Doc{URL: "http://a.test/", Text: []byte("The same text.")})

	after := &dedup.ExactContent{}
	n, err := after.Replay(&log) // then truncate the file to n and LogTo it
	fmt.Println(n > 0, err)
	m, _ := after.Seen(ctx, dedup.Doc{URL: "http://b.test/copy", Text: []byte("the same text")})
	fmt.Println(m.Seen, m.URL)
	// Output:
	// true <nil>
	// true http://a.test/
}
