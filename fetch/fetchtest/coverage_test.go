package fetchtest

import (
	"io"
	"strings"
	"testing"
)

// TestMissed crawls part of a web by hand and checks that Missed reports
// exactly the reachable pages that were not requested, counting a mirror
// copy as its original.
func TestMissed(t *testing.T) {
	w := NewWeb(Config{Seed: 2, Hosts: 4, MeanPages: 4})
	defer w.Close()
	all := w.Missed("crawlkit", nil)
	if len(all) == 0 || len(all) != len(w.Reachable("crawlkit")) {
		t.Fatalf("before any request Missed = %d pages, Reachable = %d", len(all), len(w.Reachable("crawlkit")))
	}
	c := w.Client()
	get := func(u string) {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get(all[0])
	after := w.Missed("crawlkit", nil)
	if len(after) != len(all)-1 || after[0] == all[0] {
		t.Fatalf("after fetching %s: %d missed, want %d", all[0], len(after), len(all)-1)
	}

	// Fetching one copy of a mirrored page covers the whole cluster.
	cls := w.ExactDuplicates()
	if len(cls) == 0 {
		t.Fatal("the web has no exact duplicates to test with")
	}
	cl := cls[0]
	get(cl[len(cl)-1])
	for _, u := range w.Missed("crawlkit", nil) {
		for _, d := range cl {
			if u == d {
				t.Errorf("%s still missed after fetching its duplicate %s", u, cl[len(cl)-1])
			}
		}
	}

	// skip removes pages from what is expected.
	rest := w.Missed("crawlkit", func(u string) bool { return strings.HasSuffix(u, "/") })
	for _, u := range rest {
		if strings.HasSuffix(u, "/") {
			t.Errorf("skipped page %s reported", u)
		}
	}
}
