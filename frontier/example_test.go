package frontier_test

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// The frontier interleaves hosts: a.test is not contacted again until the
// politeness gap after its first fetch has passed, so b.test comes second.
func Example() {
	ctx := context.Background()
	f, err := frontier.NewMercator(&frontier.Options{Workers: 1})
	if err != nil {
		panic(err)
	}
	defer f.Close()
	f.Add(ctx,
		frontier.URL{URL: "http://a.test/1"},
		frontier.URL{URL: "http://a.test/2"},
		frontier.URL{URL: "http://b.test/1"},
	)
	for range 3 {
		l, err := f.Next(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(l.URL.URL)
		// A fetch of 1 ms: the host waits 10 ms (K = 10) before the next.
		f.Done(l, frontier.Result{Duration: time.Millisecond, Status: 200})
	}
	// Output:
	// http://a.test/1
	// http://b.test/1
	// http://a.test/2
}

func ExampleChain() {
	filters := append(frontier.DefaultFilters(), frontier.Domains(nil, []string{"ads.test"}))
	counts := make(map[frontier.Reason]int)
	for _, raw := range []string{
		"https://news.test/today",
		"ftp://files.test/x",
		"http://cal.test/2024/2024/2024/2024",
		"http://img.test/logo.png",
		"http://x.ads.test/",
	} {
		u, _ := url.Parse(raw)
		if err := filters.Filter(u); err != nil {
			r, _ := frontier.ReasonOf(err)
			counts[r]++
			fmt.Println("reject", raw, r)
			continue
		}
		fmt.Println("accept", raw)
	}
	// Output:
	// accept https://news.test/today
	// reject ftp://files.test/x scheme
	// reject http://cal.test/2024/2024/2024/2024 repeated-segment
	// reject http://img.test/logo.png extension
	// reject http://x.ads.test/ domain
}

func ExampleEstimateChangeRate() {
	// 30 daily visits, a change seen on 12 of them.
	r := frontier.EstimateChangeRate(30, 12, 30*24*time.Hour)
	fmt.Printf("%.2f changes per day\n", r*(24*time.Hour).Seconds())
	// Output: 0.50 changes per day
}
