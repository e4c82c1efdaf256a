package webgraph

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSharedReencode re-encodes the Java-written graphs (cnr-2000 from
// testdata, on every clone; its transpose from the shared folder, when
// present) with the parameters of their properties and compares the
// streams bit for bit.
func TestSharedReencode(t *testing.T) {
	for _, name := range []string{"cnr-2000", "cnr-2000-t"} {
		t.Run(name, func(t *testing.T) {
			g := openShared(t, name)
			p := g.Properties()
			opts := optionsFromProperties(&p)
			var gb, ob bytes.Buffer
			enc, err := NewEncoder(&gb, &ob, &opts)
			if err != nil {
				t.Fatal(err)
			}
			// Under -race only a prefix is re-encoded: the encoder's output
			// for the first k nodes is a prefix of the whole stream.
			k := sizeFor(g.NumNodes(), 15000)
			it := g.NodeIterator()
			for it.Node()+1 < k && it.Next() {
				if err := enc.Add(it.Successors()); err != nil {
					t.Fatal(err)
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			if k < g.NumNodes() {
				end, _ := g.Offset(k)
				for x := k; x < g.NumNodes(); x++ { // empty lists: the prefix stays valid
					enc.Add(nil)
				}
				if _, err := enc.Close(); err != nil {
					t.Fatal(err)
				}
				want, _ := os.ReadFile(filepath.Join(graphDir(name), name+".graph"))
				if !prefixEqual(gb.Bytes(), want, end) {
					t.Fatalf("the first %d nodes differ from the Java stream", k)
				}
				return
			}
			np, err := enc.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"bitsforoutdegrees", "bitsforreferences", "bitsforblocks", "bitsforintervals", "bitsforresiduals", "copiedarcs", "intervalisedarcs", "residualarcs", "avgref"} {
				if np.Extra[k] != p.Extra[k] {
					t.Errorf("%s = %s, Java wrote %s", k, np.Extra[k], p.Extra[k])
				}
			}
			want, _ := os.ReadFile(filepath.Join(graphDir(name), name+".graph"))
			compareStreams(t, "graph", gb.Bytes(), want, g.StreamBits())
			wantOff, _ := os.ReadFile(filepath.Join(graphDir(name), name+".offsets"))
			compareStreams(t, "offsets", ob.Bytes(), wantOff, uint64(len(ob.Bytes()))*8)
		})
	}
}

// compareStreams compares two streams up to nbits (the files are padded
// differently past the stream's end: Java pads to a byte, webgraph-rs to 8
// bytes).
func compareStreams(t *testing.T, what string, got, want []byte, nbits uint64) {
	t.Helper()
	nb := int((nbits + 7) / 8)
	if len(got) < nb || len(want) < nb {
		t.Fatalf("%s: %d bytes written, file has %d, stream needs %d", what, len(got), len(want), nb)
	}
	if i := firstDiff(got[:nb], want[:nb]); i >= 0 {
		t.Fatalf("%s: first difference at byte %d (bit %d of %d)", what, i, i*8, nbits)
	}
	for _, b := range want[nb:] {
		if b != 0 {
			t.Fatalf("%s: file has non-zero bytes past the stream", what)
		}
	}
}

// prefixEqual reports whether the first nbits bits of a and b agree.
func prefixEqual(a, b []byte, nbits uint64) bool {
	nb := int(nbits / 8)
	if len(a) < nb || len(b) < nb || firstDiff(a[:nb], b[:nb]) >= 0 {
		return false
	}
	if r := nbits % 8; r != 0 {
		if len(a) <= nb || len(b) <= nb {
			return false
		}
		mask := byte(0xff) << (8 - r)
		return a[nb]&mask == b[nb]&mask
	}
	return true
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestSharedWindow16Unlimited compresses cnr-2000 with window 16 and
// unlimited reference chains: the size must be the published 2.448
// bits/link, and random access must follow chains thousands of lists long.
func TestSharedWindow16Unlimited(t *testing.T) {
	skipUnderRace(t)
	g := openShared(t, "cnr-2000")
	var gb bytes.Buffer
	enc, err := NewEncoder(&gb, nil, &Options{WindowSize: 16, MaxRefCount: -1})
	if err != nil {
		t.Fatal(err)
	}
	it := g.NodeIterator()
	for it.Next() {
		if err := enc.Add(it.Successors()); err != nil {
			t.Fatal(err)
		}
	}
	p, err := enc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if p.Extra["bitsperlink"] != "2.448" {
		t.Errorf("bits/link = %s, published figure 2.448", p.Extra["bitsperlink"])
	}
	g16, err := Load(p, gb.Bytes(), nil) // offsets rebuilt by a sequential pass
	if err != nil {
		t.Fatal(err)
	}
	var st succState
	var want []int
	longest := 0
	for x := 0; x < g.NumNodes(); x += 1009 {
		got, err := g16.successors(x, nil, &st)
		if err != nil {
			t.Fatal(err)
		}
		longest = max(longest, len(st.chain))
		if want, err = g.Successors(x, want); err != nil || !slices.Equal(got, want) {
			t.Fatalf("node %d: %v, want %v (%v)", x, got, want, err)
		}
	}
	if longest < 1000 {
		t.Fatalf("longest chain %d: expected chains thousands long", longest)
	}
	t.Logf("avg reference chain %s, longest sampled %d", p.Extra["avgref"], longest)
}
