package crawldb_test

import (
	"os"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawldb"
	"github.com/crawlkit/crawlkit/statetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("CRAWLDB_COMMITTER"); dir != "" {
		committer(dir)
		return
	}
	goleak.VerifyTestMain(m)
}

func open(t *testing.T, dir string) *crawldb.DB {
	t.Helper()
	db, err := crawldb.Open(dir, &crawldb.Options{MemTableSize: 1 << 20, CacheSize: 1 << 20, SeenCacheEntries: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestConformance(t *testing.T) {
	statetest.Run(t, statetest.Harness{
		New: func(t *testing.T) crawlkit.State { return open(t, t.TempDir()) },
		Reopen: func(t *testing.T, s crawlkit.State) crawlkit.State {
			db := s.(*crawldb.DB)
			dir := db.Dir()
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, dir)
		},
	})
}

// TestContacts: the contact slots written by one DB are what the next
// one reports, slot by slot, the latest per worker.
func TestContacts(t *testing.T) {
	dir := t.TempDir()
	db := open(t, dir)
	if cs, err := db.Contacts(); err != nil || len(cs) != 0 {
		t.Fatalf("a new DB reports contacts %v, %v", cs, err)
	}
	at, until := time.Unix(1e9, 3), time.Unix(1e9, 5)
	for w, k := range []string{"h:a.test", "h:b.test", "h:c.test"} {
		if err := db.Contacting(w, crawlkit.Contact{Key: k, At: at, Until: until.Add(time.Duration(w) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Contacting(1, crawlkit.Contact{Key: "h:d.test", At: at, Until: until}); err != nil { // overwrites worker 1's
		t.Fatal(err)
	}
	if err := db.Contacting(-1, crawlkit.Contact{Key: "h:x.test", At: at, Until: until}); err == nil {
		t.Error("a negative worker was accepted")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir)
	defer db.Close()
	cs, err := db.Contacts()
	if err != nil {
		t.Fatal(err)
	}
	want := []crawlkit.Contact{{Key: "h:a.test", At: at, Until: until}, {Key: "h:d.test", At: at, Until: until}, {Key: "h:c.test", At: at, Until: until.Add(2 * time.Second)}}
	if len(cs) != len(want) {
		t.Fatalf("contacts %v, want %v", cs, want)
	}
	for i := range want {
		if cs[i].Key != want[i].Key || !cs[i].Until.Equal(want[i].Until) || !cs[i].At.Equal(want[i].At) {
			t.Errorf("contact %d = %v, want %v", i, cs[i], want[i])
		}
	}
}

// TestBodySeenConformance runs the BodySeen suite on a DB's body set.
func TestBodySeenConformance(t *testing.T) {
	statetest.RunBodySeen(t, func(t *testing.T) crawlkit.BodySeen {
		db := open(t, t.TempDir())
		t.Cleanup(func() { db.Close() })
		b, err := db.BodySeen()
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}
