package webgraph

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func transposeLists(lists [][]int) [][]int {
	t := make([][]int, len(lists))
	for x, l := range lists {
		for _, y := range l {
			t[y] = append(t[y], x)
		}
	}
	return t
}

func TestTransposeSmallBatches(t *testing.T) {
	lists := randomWebLike(3, 800)
	g, _, _ := encodeLists(t, lists, nil)
	for _, batch := range []int{0, 1, 7, 1000} {
		var gb, ob bytes.Buffer
		p, err := Transpose(g, &gb, &ob, nil, &SortOptions{TempDir: t.TempDir(), BatchArcs: batch})
		if err != nil {
			t.Fatal(err)
		}
		gt, err := Load(p, gb.Bytes(), ob.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		checkLists(t, gt, transposeLists(lists))
	}
}

// TestSharedTransposeBitForBit transposes cnr-2000 with bounded memory and
// compares with Java's cnr-2000-t files.
func TestSharedTransposeBitForBit(t *testing.T) {
	skipUnderRace(t)
	needShared(t, "cnr-2000-t")
	g := openShared(t, "cnr-2000")
	p := g.Properties()
	o := optionsFromProperties(&p)
	var gb, ob bytes.Buffer
	tp, err := Transpose(g, &gb, &ob, &o, &SortOptions{TempDir: t.TempDir(), BatchArcs: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if tp.Arcs != g.NumArcs() {
		t.Fatalf("arcs %d, want %d", tp.Arcs, g.NumArcs())
	}
	want, _ := os.ReadFile(filepath.Join(sharedDir, "cnr-2000-t.graph"))
	compareStreams(t, "graph", gb.Bytes(), want, uint64(len(gb.Bytes()))*8)
	wantOff, _ := os.ReadFile(filepath.Join(sharedDir, "cnr-2000-t.offsets"))
	compareStreams(t, "offsets", ob.Bytes(), wantOff, uint64(len(ob.Bytes()))*8)
}

func TestWriteFilesOpen(t *testing.T) {
	lists := randomWebLike(4, 200)
	base := filepath.Join(t.TempDir(), "g")
	_, err := WriteFiles(base, nil, func(e *Encoder) error {
		for _, l := range lists {
			if err := e.Add(l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	checkLists(t, g, lists)
	os.Remove(base + ".offsets")
	g2, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	checkLists(t, g2, lists)
	if !slices.Equal(g.words, g2.words) {
		t.Fatal("data differs")
	}
}
