package diskq_test

import (
	"context"
	"fmt"
	"os"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/diskq"
)

// A disk-backed frontier survives a restart: URLs queued, and URLs leased
// but never Done, are there when the directory is opened again.
func Example() {
	dir, err := os.MkdirTemp("", "frontier")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	f, err := diskq.NewMercator(dir, &frontier.Options{Workers: 1}, nil)
	if err != nil {
		panic(err)
	}
	f.Add(ctx, frontier.URL{URL: "http://a.test/"}, frontier.URL{URL: "http://b.test/"}, frontier.URL{URL: "http://c.test/"})
	l, _ := f.Next(ctx)
	f.Done(l, frontier.Result{}) // one fetched
	f.Next(ctx)                  // one leased when the process stops
	f.Close()

	f, err = diskq.NewMercator(dir, &frontier.Options{Workers: 1}, nil)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Println("queued after restart:", f.Stats().Queued)
	// Output: queued after restart: 2
}
