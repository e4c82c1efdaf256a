package frontier_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

func sampleURLs() []frontier.URL {
	t0 := time.Unix(1700000000, 123)
	return []frontier.URL{
		{URL: "http://a.test/"},
		{URL: "https://b.test/x?y=1", Key: "b.test", Priority: 3, Depth: 9, Fingerprint: 0xdeadbeefcafef00d,
			History: frontier.History{Fetches: 4, Changes: 2, First: t0, Last: t0.Add(time.Hour)}, Due: t0.Add(2 * time.Hour),
			ETag: `W/"v7"`, LastModified: "Tue, 24 Nov 2026 10:00:00 GMT"},
		{URL: "http://d.test/", LastModified: "Tue, 24 Nov 2026 10:00:00 GMT"},
		{URL: "http://c.test/ü", Priority: -1, Depth: -2},
	}
}

func TestURLBinaryRoundTrip(t *testing.T) {
	for _, u := range sampleURLs() {
		b, err := u.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got frontier.URL
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatalf("%s: %v", u.URL, err)
		}
		if !equalURL(got, u) {
			t.Errorf("round trip of %+v gave %+v", u, got)
		}
		for i := range b { // every truncation is an error, never a panic
			if err := new(frontier.URL).UnmarshalBinary(b[:i]); !errors.Is(err, frontier.ErrCorrupt) {
				t.Fatalf("truncated at %d: %v", i, err)
			}
		}
	}
}

func equalURL(a, b frontier.URL) bool {
	return a.URL == b.URL && a.Key == b.Key && a.Priority == b.Priority && a.Depth == b.Depth &&
		a.Fingerprint == b.Fingerprint && a.History.Fetches == b.History.Fetches && a.History.Changes == b.History.Changes &&
		a.History.First.Equal(b.History.First) && a.History.Last.Equal(b.History.Last) && a.Due.Equal(b.Due) &&
		a.ETag == b.ETag && a.LastModified == b.LastModified
}

// TestURLBinaryVersion1 reads a record written before the validators
// were encoded: version byte 1 and no validator fields.
func TestURLBinaryVersion1(t *testing.T) {
	u := sampleURLs()[1]
	u.ETag, u.LastModified = "", ""
	b, err := u.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	v1 := append([]byte{1}, b[1:len(b)-2]...) // no empty ETag, LastModified
	var got frontier.URL
	if err := got.UnmarshalBinary(v1); err != nil || !equalURL(got, u) {
		t.Fatalf("version 1 record: %+v, %v; want %+v", got, err, u)
	}
	if err := got.UnmarshalBinary(append([]byte{3}, b[1:]...)); !errors.Is(err, frontier.ErrCorrupt) {
		t.Errorf("version 3 record: %v, want ErrCorrupt", err)
	}
}

func writeCheckpoint(t testing.TB, us []frontier.URL) []byte {
	var buf bytes.Buffer
	cw := frontier.NewCheckpointWriter(&buf)
	for i := range us {
		if err := cw.Write(&us[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCheckpointStream(t *testing.T) {
	us := sampleURLs()
	data := writeCheckpoint(t, us)
	cr := frontier.NewCheckpointReader(bytes.NewReader(data))
	for i := range us {
		u, err := cr.Next()
		if err != nil || !equalURL(u, us[i]) {
			t.Fatalf("record %d: %+v, %v", i, u, err)
		}
	}
	if _, err := cr.Next(); err != io.EOF {
		t.Fatalf("end: %v, want io.EOF", err)
	}
	// Damage anywhere is detected: truncation and every single-byte flip.
	for i := 0; i < len(data); i++ {
		for _, d := range [][]byte{data[:i], flip(data, i)} {
			cr := frontier.NewCheckpointReader(bytes.NewReader(d))
			var err error
			for err == nil {
				_, err = cr.Next()
			}
			if err == io.EOF {
				t.Fatalf("damage at byte %d of %d not detected", i, len(data))
			}
		}
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x41
	return c
}

func TestRestoreIntoMercator(t *testing.T) {
	us := sampleURLs()
	m, err := frontier.NewMercator(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	n, err := frontier.Restore(context.Background(), m, bytes.NewReader(writeCheckpoint(t, us)))
	if err != nil || n != len(us) {
		t.Fatalf("Restore = %d, %v", n, err)
	}
	if st := m.Stats(); st.Queued+st.Waiting != len(us) {
		t.Errorf("Stats after restore %+v", st)
	}
	if _, err := frontier.Restore(context.Background(), m, bytes.NewReader([]byte("garbage"))); !errors.Is(err, frontier.ErrCorrupt) {
		t.Errorf("Restore(garbage) = %v", err)
	}
}

// TestErrorMessages: a frontier error says "frontier: " once, however
// its cause was built.
func TestErrorMessages(t *testing.T) {
	var u frontier.URL
	decodeErr := u.UnmarshalBinary([]byte{0xff})
	_, restoreErr := frontier.NewCheckpointReader(bytes.NewReader([]byte("garbage"))).Next()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{decodeErr, "frontier: decode: corrupt record"},
		{restoreErr, "frontier: restore: corrupt record"},
		{&frontier.Error{Op: "add", URL: "http://a.test/", Err: frontier.ErrClosed}, `frontier: add "http://a.test/": closed`},
		{&frontier.Error{Op: "next", Err: errors.New("disk full")}, "frontier: next: disk full"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

func FuzzURLUnmarshal(f *testing.F) {
	for _, u := range sampleURLs() {
		b, _ := u.MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var u frontier.URL
		if err := u.UnmarshalBinary(data); err != nil {
			return
		}
		b, err := u.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var v frontier.URL
		if err := v.UnmarshalBinary(b); err != nil || !equalURL(u, v) {
			t.Fatalf("re-encoding %x: %+v vs %+v (%v)", data, u, v, err)
		}
	})
}

func FuzzCheckpointReader(f *testing.F) {
	f.Add(writeCheckpoint(f, sampleURLs()))
	f.Add(writeCheckpoint(f, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		cr := frontier.NewCheckpointReader(bytes.NewReader(data))
		for range 10000 {
			if _, err := cr.Next(); err != nil {
				return
			}
		}
	})
}
