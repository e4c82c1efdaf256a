package indextest_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/index"
	"github.com/crawlkit/crawlkit/index/indextest"
)

// brokenSource breaks one rule of the PostingSource contract over a
// correct term shard.
type brokenSource struct {
	how string
	s   *index.TermShard
}

func (b brokenSource) Postings(ctx context.Context, terms []string) ([]index.PostingList, error) {
	switch b.how {
	case "ignores-cancel":
		ctx = context.Background()
	case "merges-repeated-terms":
		terms = slices.Compact(slices.Sorted(slices.Values(terms)))
	}
	lists, err := b.s.Postings(ctx, terms)
	if b.how == "off-by-one-frequency" {
		for i := range lists {
			if n := len(lists[i].Freqs); n > 0 {
				lists[i].Freqs[n-1]++ // a copy: the shard keeps its own
			}
		}
	}
	return lists, err
}

// TestBrokenPostingSourceHelper is run by
// TestPostingSuiteCatchesBrokenSources in a child process.
func TestBrokenPostingSourceHelper(t *testing.T) {
	how := os.Getenv("INDEXTEST_BROKEN_SOURCE")
	if how == "" {
		t.Skip("run by TestPostingSuiteCatchesBrokenSources")
	}
	indextest.TestPostingSource(t, func(t *testing.T, docs []index.Document) index.PostingSource {
		ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 1})
		for _, d := range docs {
			if _, err := ti.Add(d); err != nil {
				t.Fatal(err)
			}
		}
		return brokenSource{how, ti.Shard(0)}
	})
}

// brokenTransport breaks one rule of the Transport contract over the
// loopback.
func brokenTransport(how string, node *index.Handler) index.Transport {
	switch how {
	case "ignores-cancel":
		return index.TransportFunc(func(_ context.Context, req []byte) ([]byte, error) {
			return node.RoundTrip(context.Background(), req)
		})
	case "corrupts-replies":
		return index.TransportFunc(func(ctx context.Context, req []byte) ([]byte, error) {
			resp, err := node.RoundTrip(ctx, req)
			if len(resp) > 1 {
				resp[len(resp)-1] ^= 1
			}
			return resp, err
		})
	case "crossed-replies":
		// One slot for the request in flight: concurrent callers
		// overwrite each other's.
		var mu sync.Mutex
		var last []byte
		return index.TransportFunc(func(ctx context.Context, req []byte) ([]byte, error) {
			mu.Lock()
			last = req
			mu.Unlock()
			time.Sleep(100 * time.Microsecond)
			mu.Lock()
			req = last
			mu.Unlock()
			return node.RoundTrip(ctx, req)
		})
	}
	return node
}

// TestBrokenTransportHelper is run by
// TestTransportSuiteCatchesBrokenTransports in a child process.
func TestBrokenTransportHelper(t *testing.T) {
	how := os.Getenv("INDEXTEST_BROKEN_TRANSPORT")
	if how == "" {
		t.Skip("run by TestTransportSuiteCatchesBrokenTransports")
	}
	indextest.TestTransport(t, indextest.TransportHarness{
		New:         func(_ *testing.T, node *index.Handler) index.Transport { return brokenTransport(how, node) },
		Synchronous: true,
	})
}

// runBroken runs helper in a child process with env set to how and
// checks that the suite fails, in the subtest check.
func runBroken(t *testing.T, helper, env, how, check string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+how)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed an implementation that %s:\n%s", how, out)
	}
	if !strings.Contains(string(out), "--- FAIL: "+helper+"/"+check) {
		t.Fatalf("the suite did not fail %s for %s:\n%s", check, how, out)
	}
}

// TestPostingSuiteCatchesBrokenSources checks the suite: a source
// breaking one rule fails the check that covers it.
func TestPostingSuiteCatchesBrokenSources(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"ignores-cancel":        "Canceled",
		"merges-repeated-terms": "Order",
		"off-by-one-frequency":  "Lists",
	} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			runBroken(t, "TestBrokenPostingSourceHelper", "INDEXTEST_BROKEN_SOURCE", how, check)
		})
	}
}

// TestTransportSuiteCatchesBrokenTransports checks the suite: a
// transport breaking one rule fails the check that covers it.
func TestTransportSuiteCatchesBrokenTransports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"ignores-cancel":   "CancelDuring",
		"corrupts-replies": "Replies",
		"crossed-replies":  "Concurrent",
	} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			runBroken(t, "TestBrokenTransportHelper", "INDEXTEST_BROKEN_TRANSPORT", how, check)
		})
	}
}
