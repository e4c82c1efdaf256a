package graphtest_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/webgraph"
	"github.com/crawlkit/crawlkit/webgraph/graphtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLinks(t *testing.T) {
	a, b := graphtest.Links(7, 10, 3000), graphtest.Links(7, 10, 3000)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave different link logs")
	}
	if slices.Equal(a, graphtest.Links(8, 10, 3000)) {
		t.Fatal("different seeds gave the same link log")
	}
	if len(a) < 3000 || len(a) > 3200 {
		t.Fatalf("%d links, want about 3000", len(a))
	}
	seen := map[webgraph.Link]bool{}
	var self, repeats, https, local int
	for _, l := range a {
		if seen[l] {
			repeats++
		}
		seen[l] = true
		if l.Src == l.Dst {
			self++
		}
		if strings.HasPrefix(l.Src, "https:") || strings.HasPrefix(l.Dst, "https:") {
			https++
		}
		if host(l.Src) == host(l.Dst) {
			local++
		}
	}
	if self == 0 || repeats == 0 || https == 0 {
		t.Errorf("%d self-loops, %d repeats, %d https links: want some of each", self, repeats, https)
	}
	if f := float64(local) / float64(len(a)); f < 0.6 || f > 0.9 {
		t.Errorf("%.2f of the links stay on their host, want about 0.75", f)
	}
	if graphtest.Links(1, 0, 10) != nil || graphtest.Links(1, 3, 0) != nil {
		t.Error("no hosts or no links should give no links")
	}
}

func host(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	h, _, _ := strings.Cut(rest, "/")
	return h
}

// TestMemStore runs the suite on the plain in-memory store, the reference
// of the package: the suite itself must pass it.
func TestMemStore(t *testing.T) {
	graphtest.Run(t, graphtest.Harness{
		New: func(t *testing.T, links []webgraph.Link, urls []string) webgraph.GraphStore {
			return webgraph.NewMemStore(links, urls...)
		},
	})
}

// broken wraps a correct store and breaks one part of the contract.
type broken struct {
	webgraph.GraphStore
	how string
}

func (b broken) In(id int, buf []int) ([]int, error) {
	if b.how == "in-is-out" {
		return b.GraphStore.Out(id, buf)
	}
	return b.GraphStore.In(id, buf)
}

func (b broken) Out(id int, buf []int) ([]int, error) {
	switch b.how {
	case "unsorted":
		out, err := b.GraphStore.Out(id, buf)
		slices.Reverse(out)
		return out, err
	case "fresh-buffer":
		out, err := b.GraphStore.Out(id, nil)
		return slices.Clone(out), err
	}
	return b.GraphStore.Out(id, buf)
}

func (b broken) URL(id int) (string, error) {
	if b.how == "bare-errors" && (id < 0 || id >= b.NumNodes()) {
		return "", webgraph.ErrNodeRange // not inside a *webgraph.Error
	}
	return b.GraphStore.URL(id)
}

// TestBrokenStoreHelper is run by TestSuiteCatchesBrokenStores in a child
// process, with the way to break the store in the environment.
func TestBrokenStoreHelper(t *testing.T) {
	how := os.Getenv("GRAPHTEST_BROKEN")
	if how == "" {
		t.Skip("run by TestSuiteCatchesBrokenStores")
	}
	graphtest.Run(t, graphtest.Harness{
		New: func(t *testing.T, links []webgraph.Link, urls []string) webgraph.GraphStore {
			return broken{webgraph.NewMemStore(links, urls...), how}
		},
	})
}

// TestSuiteCatchesBrokenStores checks the suite: each store breaking one
// rule must fail it, in the check that covers the rule.
func TestSuiteCatchesBrokenStores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for how, check := range map[string]string{
		"in-is-out":    "Adjacency",
		"unsorted":     "Adjacency",
		"fresh-buffer": "Buffers",
		"bare-errors":  "Errors",
	} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenStoreHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "GRAPHTEST_BROKEN="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a store with %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenStoreHelper/Crawl/"+check) {
				t.Fatalf("the suite did not fail %s for %s:\n%s", check, how, out)
			}
		})
	}
}
