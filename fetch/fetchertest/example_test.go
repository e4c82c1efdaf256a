package fetchertest_test

import (
	"context"
	"fmt"
	"net/url"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchertest"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// ExampleWebOptions connects the default fetcher to a simulated web: a
// redirect comes back unfollowed, with its target resolved.
func ExampleWebOptions() {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 1})
	defer w.Close()
	f := fetch.NewHTTP(fetchertest.WebOptions(w))
	defer f.Close()

	u, _ := url.Parse(w.URL(w.Host(fetchtest.Redirects), "/loop/1/0"))
	resp, err := f.Fetch(context.Background(), &fetch.Request{URL: u})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Status, resp.Redirect(), resp.Location.Path)
	// Output:
	// 301 true /loop/1/0
}
