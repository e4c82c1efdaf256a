package crawldb_test

import (
	"os"
	"testing"

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
