package diskq_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/diskq"
)

// A store's directory is data from a file: whatever it holds, Open and
// the store's methods return errors (wrapping frontier.ErrCorrupt where
// the content is inconsistent), never panic, hang or allocate without
// bound. These tests write Pebble keys directly, as a corrupted or
// foreign database would hold them.

type kv struct{ k, v []byte }

// silent is a pebble.Logger for the databases the tests write.
type silent struct{}

func (silent) Infof(string, ...any)  {}
func (silent) Errorf(string, ...any) {}
func (silent) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

func qkey(q uint32, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32([]byte{'q'}, q), seq)
}

func dkey(due time.Time, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64([]byte{'d'}, uint64(due.UnixNano())^(1<<63)), seq)
}

func urlValue(t testing.TB, u frontier.URL) []byte {
	b, err := u.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeDB writes entries into a fresh Pebble database in dir on fs.
func writeDB(t testing.TB, fs vfs.FS, dir string, entries []kv) {
	db, err := pebble.Open(dir, &pebble.Options{FS: fs, Logger: silent{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := db.Set(e.k, e.v, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// drain uses every read path of s with bounded work: every queue to its
// end, the deferred URLs, a scan. It returns the first error.
func drain(s *diskq.Store) error {
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for q := 0; q < s.Queues(); q++ {
		for n := s.Len(q); n >= 0; n-- {
			_, ok, err := s.Pop(q)
			if err != nil {
				keep(err)
				break
			}
			if !ok {
				break
			}
		}
	}
	for range 3 {
		s.NextDue()
		if _, err := s.Due(time.Unix(1<<40, 0), 1000, nil); err != nil {
			keep(err)
			break
		}
	}
	keep(s.Scan(func(frontier.URL) bool { return true }))
	return first
}

func TestOpenCorrupt(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	u := frontier.URL{URL: "http://a.example/", Key: "a.example"}
	good := func(t testing.TB) []byte { return urlValue(t, u) }
	for _, c := range []struct {
		name    string
		entries func(t testing.TB) []kv
		// atOpen: Open itself reports the corruption; otherwise drain does.
		atOpen bool
	}{
		{"queue number beyond MaxQueues", func(t testing.TB) []kv {
			return []kv{{qkey(diskq.MaxQueues, 0), good(t)}}
		}, true},
		{"queue number 2^32-1", func(t testing.TB) []kv {
			return []kv{{qkey(1<<32-1, 0), good(t)}}
		}, true},
		{"short queue key", func(t testing.TB) []kv {
			return []kv{{[]byte("q\x00\x00"), good(t)}}
		}, true},
		{"short last key of a queue", func(t testing.TB) []kv {
			return []kv{{qkey(0, 0), good(t)}, {[]byte("q\x00\x00\x00\x00\xff\xff"), good(t)}}
		}, true},
		{"long last key of a queue", func(t testing.TB) []kv {
			return []kv{{qkey(0, 0), good(t)}, {append(qkey(0, 1), 7), good(t)}}
		}, true},
		{"bad meta", func(t testing.TB) []kv {
			return []kv{{[]byte("m"), []byte{0xff}}}
		}, true},
		{"bad leased URL", func(t testing.TB) []kv {
			return []kv{{[]byte("l\x00\x00\x00\x00\x00\x00\x00\x00"), []byte("junk")}}
		}, true},
		{"bad queued URL", func(t testing.TB) []kv {
			return []kv{{qkey(0, 0), good(t)}, {qkey(0, 1), []byte("junk")}}
		}, false},
		{"missing queue entry", func(t testing.TB) []kv {
			return []kv{{qkey(0, 0), good(t)}, {qkey(0, 2), good(t)}}
		}, false},
		{"bad deferred URL", func(t testing.TB) []kv {
			return []kv{{dkey(now, 0), []byte("junk")}, {[]byte("m"), []byte{1, 1}}}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.NewMem()
			const dir = "crawl/state/queue"
			writeDB(t, fs, dir, c.entries(t))
			s, err := diskq.Open(dir, &diskq.Options{FS: fs, HeadItems: 2, TailItems: 2})
			if c.atOpen {
				if err == nil {
					s.Close()
					t.Fatal("Open accepted the corrupt store")
				}
				if !errors.Is(err, frontier.ErrCorrupt) {
					t.Fatalf("Open: %v, want an error wrapping frontier.ErrCorrupt", err)
				}
				checkMessage(t, err, dir)
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			err = drain(s)
			if !errors.Is(err, frontier.ErrCorrupt) {
				t.Fatalf("reading the store: %v, want an error wrapping frontier.ErrCorrupt", err)
			}
			checkMessage(t, err, dir)
		})
	}
}

// checkMessage fails unless err's message names the store's directory and
// says "diskq: " once and "frontier: " at most once (a frontier wrapping
// the store's error adds its own).
func checkMessage(t *testing.T, err error, dir string) {
	t.Helper()
	msg := err.Error()
	if !strings.Contains(msg, dir) {
		t.Errorf("%q does not name the store %s", msg, dir)
	}
	if n := strings.Count(msg, "diskq: "); n != 1 {
		t.Errorf("%q says \"diskq: \" %d times, want once", msg, n)
	}
	if n := strings.Count(msg, "frontier: "); n > 1 {
		t.Errorf("%q says \"frontier: \" %d times, want at most once", msg, n)
	}
}

// TestCorruptThroughFrontier: a frontier over a damaged store reports the
// damage with each package named once and the store's directory:
// "frontier: next: diskq: read DIR: decode: corrupt record".
func TestCorruptThroughFrontier(t *testing.T) {
	fs := vfs.NewMem()
	const dir = "crawl/state/queue"
	u := frontier.URL{URL: "http://a.example/", Key: "a.example"}
	writeDB(t, fs, dir, []kv{{qkey(0, 0), urlValue(t, u)}, {qkey(0, 1), []byte("junk")}, {qkey(0, 2), urlValue(t, u)}})
	s, err := diskq.Open(dir, &diskq.Options{FS: fs, HeadItems: 2, TailItems: 2})
	if err != nil {
		t.Fatal(err)
	}
	f, err := frontier.NewFIFO(&frontier.Options{Store: s, Politeness: frontier.Politeness{K: -1}})
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 3 {
		l, err := f.Next(ctx)
		if err != nil {
			if !errors.Is(err, frontier.ErrCorrupt) {
				t.Fatalf("Next: %v, want an error wrapping frontier.ErrCorrupt", err)
			}
			checkMessage(t, err, dir)
			if want := "frontier: next: diskq: read " + dir + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%q does not start with %q", err, want)
			}
			return
		}
		f.Done(l, frontier.Result{})
	}
	t.Fatal("the frontier handed out the damaged record's neighbours without an error")
}

// TestDeferredCountRepaired checks that Open counts the deferred URLs
// instead of trusting the count it recorded: a count above the entries
// would have Due find nothing forever (the frontier's release loop spins),
// one below would strand the rest.
func TestDeferredCountRepaired(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, recorded := range []byte{0, 1, 5} {
		fs := vfs.NewMem()
		var entries []kv
		for i := range 3 {
			u := frontier.URL{URL: "http://a.example/" + string(rune('a'+i)), Key: "a.example", Due: now}
			entries = append(entries, kv{dkey(now, uint64(i)), urlValue(t, u)})
		}
		// The next sequence number recorded collides with the entries.
		entries = append(entries, kv{[]byte("m"), []byte{recorded, 1}})
		writeDB(t, fs, "db", entries)
		s, err := diskq.Open("db", &diskq.Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		if s.Deferred() != 3 {
			t.Errorf("recorded count %d: Deferred() = %d, want 3", recorded, s.Deferred())
		}
		// A new revisit must not overwrite an entry with the same key.
		if err := s.Defer(frontier.URL{URL: "http://a.example/new", Key: "a.example", Due: now}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Due(now, 100, nil)
		if err != nil || len(got) != 4 || s.Deferred() != 0 {
			t.Errorf("recorded count %d: Due returned %d URLs (%v), %d left; want 4 and 0", recorded, len(got), err, s.Deferred())
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzOpen writes arbitrary keys and values under the store's prefixes
// and reads the result back through every path.
func FuzzOpen(f *testing.F) {
	u, _ := (&frontier.URL{URL: "http://a.example/", Key: "a.example"}).AppendBinary(nil)
	seed := func(entries ...kv) []byte {
		var b []byte
		for _, e := range entries {
			b = append(b, byte(len(e.k)), byte(len(e.v)))
			b = append(b, e.k...)
			b = append(b, e.v...)
		}
		return b
	}
	f.Add(seed(kv{qkey(0, 0), u}, kv{qkey(0, 1), u}, kv{qkey(3, 7), u}))
	f.Add(seed(kv{dkey(time.Unix(5, 0), 0), u}, kv{[]byte("m"), []byte{1, 1}}))
	f.Add(seed(kv{[]byte("l\x00\x00\x00\x00\x00\x00\x00\x00"), u}, kv{qkey(1, 0), u}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var entries []kv
		for len(b) >= 2 {
			kl, vl := int(b[0]), int(b[1])
			b = b[2:]
			if kl == 0 || kl+vl > len(b) {
				break
			}
			entries = append(entries, kv{b[:kl], b[kl : kl+vl]})
			b = b[kl+vl:]
		}
		fs := vfs.NewMem()
		writeDB(t, fs, "db", entries)
		s, err := diskq.Open("db", &diskq.Options{FS: fs, HeadItems: 2, TailItems: 2})
		if err != nil {
			return
		}
		drain(s)
		if err := s.Close(); err != nil && !errors.Is(err, frontier.ErrCorrupt) {
			t.Fatalf("Close: %v", err)
		}
	})
}
