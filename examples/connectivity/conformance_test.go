package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/webgraph"
	"github.com/crawlkit/crawlkit/webgraph/graphtest"
)

// TestStoreConformance runs the GraphStore suite on the store the command
// serves: each graph is written as a TSV link log (links as "src\tdst",
// link-less URLs alone on a line), built by buildFromTSV and opened as
// run opens it. The suite's graphs hold a node that is no URL ("not a
// url": the store takes any string), so the command's URL check is off.
func TestStoreConformance(t *testing.T) {
	graphtest.Run(t, graphtest.Harness{
		New: func(t *testing.T, links []webgraph.Link, urls []string) webgraph.GraphStore {
			dir := t.TempDir()
			var tsv strings.Builder
			for _, u := range urls {
				fmt.Fprintln(&tsv, u)
			}
			for _, l := range links {
				fmt.Fprintf(&tsv, "%s\t%s\n", l.Src, l.Dst)
			}
			path := filepath.Join(dir, "links.tsv")
			if err := os.WriteFile(path, []byte(tsv.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			base := filepath.Join(dir, "web")
			if err := buildFromTSV(path, base, dir, nil); err != nil {
				t.Fatal(err)
			}
			s, err := webgraph.OpenStore(base)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	})
}
