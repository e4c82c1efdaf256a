package warc

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// An originals list reads back as written, and one cut anywhere, or
// whose head does not match its lines, is refused.
func TestOriginalsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.warc.gz")
	want := []origEntry{
		{"sha1:AAAA", original{"<urn:uuid:1>", "http://a.sim.test/", "2026-11-27T01:00:00Z"}},
		{"sha1:BBBB", original{"<urn:uuid:2>", "http://a.sim.test/x?q=\"é\"&r=<1>", "2026-11-27T01:00:01Z"}},
	}
	for _, tc := range []struct {
		name  string
		items []origEntry
	}{{"none", nil}, {"two", want}} {
		if err := writeOriginals(path, "s1", 1234, tc.items); err != nil {
			t.Fatal(err)
		}
		head, got, err := readOriginals(path)
		if err != nil || head != (originalsHead{Series: "s1", Size: 1234, Originals: len(tc.items)}) || !slices.Equal(got, tc.items) {
			t.Errorf("%s: read %+v %+v (%v), want %+v", tc.name, head, got, err, tc.items)
		}
	}
	data, err := os.ReadFile(path + OriginalsSuffix)
	if err != nil {
		t.Fatal(err)
	}
	for cut := range len(data) - 1 {
		if err := os.WriteFile(path+OriginalsSuffix, data[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readOriginals(path); err == nil {
			t.Errorf("a list cut at %d of %d bytes was read", cut, len(data))
		}
	}
	if _, _, err := readOriginals(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing list: %v", err)
	}
}

// FuzzReadOriginals reads arbitrary bytes as an originals list: no
// panic, and a list it accepts writes back to one that reads the same.
func FuzzReadOriginals(f *testing.F) {
	f.Add([]byte(`{"series":"s","size":10,"originals":1}` + "\n" + `{"digest":"sha1:A","id":"<urn:uuid:1>","uri":"http://a/","date":"d"}` + "\n"))
	f.Add([]byte(`{"series":"s","size":10,"originals":0}` + "\n"))
	f.Add([]byte("{}\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "a.warc.gz")
		if err := os.WriteFile(path+OriginalsSuffix, data, 0o644); err != nil {
			t.Fatal(err)
		}
		head, got, err := readOriginals(path)
		if err != nil {
			return
		}
		if err := writeOriginals(path, head.Series, head.Size, got); err != nil {
			t.Fatal(err)
		}
		head2, again, err := readOriginals(path)
		if err != nil || head2 != head || !slices.Equal(again, got) {
			t.Errorf("written back: %+v %+v (%v), read %+v %+v", head2, again, err, head, got)
		}
	})
}
