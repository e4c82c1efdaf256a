package pebbleseen_test

import (
	"context"
	"fmt"
	"os"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/pebbleseen"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "urlseen")
	defer os.RemoveAll(dir)

	set, err := pebbleseen.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	seen, _ := set.TestAndAdd(ctx, dedup.Fingerprint("http://a.test/"))
	fmt.Println("first run:", seen)
	set.Close()

	set, err = pebbleseen.Open(dir, nil) // after a restart
	if err != nil {
		panic(err)
	}
	defer set.Close()
	seen, _ = set.TestAndAdd(ctx, dedup.Fingerprint("http://a.test/"))
	fmt.Println("second run:", seen)
	// Output:
	// first run: false
	// second run: true
}
