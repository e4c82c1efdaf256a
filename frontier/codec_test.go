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
		{URL: "http://d.test/sitemap.xml", Sitemap: 2, ChangeFreq: frontier.FreqWeekly},
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
		a.ETag == b.ETag && a.LastModified == b.LastModified &&
		a.Sitemap == b.Sitemap && a.ChangeFreq == b.ChangeFreq
}

// TestURLBinaryVersion1: records written before Sitemap, ChangeFreq and
// the validators existed (version 1: the same fields without the last
// two bytes and two strings) are still read, with them zero; an unknown
// ChangeFreq is corrupt.
func TestURLBinaryVersion1(t *testing.T) {
	for _, u := range sampleURLs() {
		u.ETag, u.LastModified = "", ""
		b, _ := u.MarshalBinary()
		v1 := append([]byte{1}, b[1:len(b)-4]...)
		var got frontier.URL
		if err := got.UnmarshalBinary(v1); err != nil {
			t.Fatalf("%s: version 1: %v", u.URL, err)
		}
		want := u
		want.Sitemap, want.ChangeFreq = 0, 0
		if !equalURL(got, want) {
			t.Errorf("version 1 of %+v gave %+v", want, got)
		}
		b[len(b)-3] = 200 // ChangeFreq, before the two empty validators
		if err := got.UnmarshalBinary(b); !errors.Is(err, frontier.ErrCorrupt) {
			t.Errorf("%s: ChangeFreq 200: %v, want ErrCorrupt", u.URL, err)
		}
		if err := got.UnmarshalBinary(append([]byte{3}, b[1:]...)); !errors.Is(err, frontier.ErrCorrupt) {
			t.Errorf("version 3 record: %v, want ErrCorrupt", err)
		}
	}
}

func TestChangeFreq(t *testing.T) {
	for _, c := range []struct {
		in     string
		want   frontier.ChangeFreq
		period time.Duration
		ok     bool
	}{
		{"always", frontier.FreqAlways, 0, true},
		{" Hourly\n", frontier.FreqHourly, time.Hour, true},
		{"DAILY", frontier.FreqDaily, 24 * time.Hour, true},
		{"weekly", frontier.FreqWeekly, 7 * 24 * time.Hour, true},
		{"monthly", frontier.FreqMonthly, 30 * 24 * time.Hour, true},
		{"yearly", frontier.FreqYearly, 365 * 24 * time.Hour, true},
		{"never", frontier.FreqNever, 0, false},
		{"", frontier.FreqUnknown, 0, false},
		{"fortnightly", frontier.FreqUnknown, 0, false},
	} {
		f := frontier.ParseChangeFreq(c.in)
		d, ok := f.Period()
		if f != c.want || d != c.period || ok != c.ok {
			t.Errorf("ParseChangeFreq(%q) = %v (%v, %v), want %v (%v, %v)", c.in, f, d, ok, c.want, c.period, c.ok)
		}
		if c.want != frontier.FreqUnknown && frontier.ParseChangeFreq(f.String()) != f {
			t.Errorf("%v does not round-trip through String", f)
		}
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
