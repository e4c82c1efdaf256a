package webgraph

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// sharedDir holds WebGraph files kept outside the repository: the
// transpose cnr-2000-t, which is not committed beside cnr-2000.
const sharedDir = "../../shared/data/webgraph"

// testdataDir holds cnr-2000 as Java WebGraph wrote it (see
// testdata/README.md), so that the compatibility tests run on every clone.
const testdataDir = "testdata"

// committed names the graphs in testdataDir: their tests never skip.
var committed = map[string]bool{"cnr-2000": true}

// graphDir returns the directory that holds graph name: testdataDir for a
// committed graph, sharedDir otherwise.
func graphDir(name string) string {
	if committed[name] {
		return testdataDir
	}
	return sharedDir
}

// openShared opens graph name from graphDir(name). A committed graph that
// is missing fails the test; one of the shared folder skips it.
func openShared(tb testing.TB, name string) *BVGraph {
	tb.Helper()
	dir := graphDir(name)
	base := filepath.Join(dir, name)
	if _, err := os.Stat(base + ".graph"); err != nil {
		if committed[name] {
			tb.Fatalf("WebGraph test data %s missing: %v", base, err)
		}
		tb.Skipf("shared WebGraph data not found at %s (%v): skipping", dir, err)
	}
	g, err := Open(base)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// needShared skips the test when graph name's files are not in the
// shared folder (tests that read them by path).
func needShared(tb testing.TB, name string) {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(sharedDir, name+".graph")); err != nil {
		tb.Skipf("shared WebGraph data not found at %s (%v): skipping", sharedDir, err)
	}
}

func arcsSHA1(tb testing.TB, g *BVGraph) (string, int64) {
	h := sha1.New()
	var buf [8]byte
	var arcs int64
	it := g.NodeIterator()
	for x, succ := range it.All() {
		for _, y := range succ {
			binary.BigEndian.PutUint32(buf[:4], uint32(x))
			binary.BigEndian.PutUint32(buf[4:], uint32(y))
			h.Write(buf[:])
			arcs++
		}
	}
	if err := it.Err(); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil)), arcs
}

// sizeFor returns n, or small under the race detector.
func sizeFor(n, small int) int {
	if raceEnabled {
		return small
	}
	return n
}

// skipUnderRace skips full-graph checks of the shared data under -race, where
// they would take minutes; they run in every test run without -race.
func skipUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("full pass over the shared graph: run without -race")
	}
}

// TestSharedCNR2000 decodes the Java-written cnr-2000 (testdata) and its
// transpose (shared folder, when present) and checks every arc.
func TestSharedCNR2000(t *testing.T) {
	skipUnderRace(t)
	tests := []struct {
		name  string
		sha   string
		nodes int
		arcs  int64
	}{
		{"cnr-2000", "b37eaeeeadbd6d190a0f2014e1dcd921f4535fa7", 325557, 3216152},
		{"cnr-2000-t", "fad519976c6b0a91e96f101842e5e716896defb0", 325557, 3216152},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := openShared(t, tt.name)
			if g.NumNodes() != tt.nodes || g.NumArcs() != tt.arcs {
				t.Fatalf("counts %d/%d, want %d/%d", g.NumNodes(), g.NumArcs(), tt.nodes, tt.arcs)
			}
			sum, arcs := arcsSHA1(t, g)
			if arcs != tt.arcs {
				t.Errorf("decoded %d arcs, want %d", arcs, tt.arcs)
			}
			if sum != tt.sha {
				t.Errorf("SHA-1 of arcs %s, want %s", sum, tt.sha)
			}
		})
	}
}
