package webgraph

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

const sharedDir = "../../shared/data/webgraph"

// openShared opens a graph of ../shared/data/webgraph, skipping the test when
// the data is absent.
func openShared(tb testing.TB, name string) *BVGraph {
	tb.Helper()
	base := filepath.Join(sharedDir, name)
	if _, err := os.Stat(base + ".graph"); err != nil {
		tb.Skipf("shared WebGraph data not found at %s (%v): skipping", sharedDir, err)
	}
	g, err := Open(base)
	if err != nil {
		tb.Fatal(err)
	}
	return g
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
