package cluster

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/splittertest"
)

// TestSplitterConformance runs the crawlkit.HostSplitter suite on the
// Splitters of nodes on one Mem transport, each node Started with a
// crawler as in a crawl. The crawlers are not Run: a goroutine per node
// takes the URLs they queue from their frontier and hands them to the
// suite, holding the lease meanwhile, which the node's status reports as
// work, as it would a fetch.
func TestSplitterConformance(t *testing.T) {
	splittertest.Run(t, splittertest.Harness{
		New: func(t *testing.T, names []string, deliver func(int, frontier.URL)) []crawlkit.HostSplitter {
			tr := memTransports(t, names)
			nodes := startNodes(t, names, tr, func(_ int, o *Options) {
				o.StatusInterval = 10 * time.Millisecond
				o.BatchDelay = 5 * time.Millisecond
			})
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			// Registered after startNodes': runs first, so that the
			// drains are gone before the nodes close.
			t.Cleanup(func() { cancel(); wg.Wait() })
			var out []crawlkit.HostSplitter
			for i, nd := range nodes {
				f, err := frontier.NewFIFO(&frontier.Options{Politeness: frontier.Politeness{K: -1}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				c, err := crawlkit.New(crawlkit.Config{
					Frontier: f,
					Splitter: nd.Splitter(),
					Fetcher: fetch.FetcherFunc(func(context.Context, *fetch.Request) (*fetch.Response, error) {
						return nil, errors.New("not crawled: the crawler is not run")
					}),
					Logger: quietLogger(),
					// The hosts of the suite's URLs share one domain
					// and serve no page here: no domain allowance.
					Traps: &crawlkit.TrapOptions{DomainHosts: -1},
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := nd.Start(ctx, c); err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					for {
						l, err := f.Next(ctx)
						if err != nil {
							return
						}
						deliver(i, l.URL)
						f.Done(l, frontier.Result{Status: 200})
					}
				})
				out = append(out, nd.Splitter())
			}
			return out
		},
		// Two status rounds of 10 ms, and time to answer them.
		IdleLag: 100 * time.Millisecond,
	})
}
