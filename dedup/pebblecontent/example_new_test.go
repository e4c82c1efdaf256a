package pebblecontent_test

import (
	"fmt"
	"os"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/crawlkit/crawlkit/dedup/pebblecontent"
)

// One database for the crawler's state, with the pages' store and an
// exact-only store for bodies without text under their own prefixes:
// one write-ahead log and one block cache for all.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "crawl")
	defer os.RemoveAll(dir)
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		panic(err)
	}
	defer db.Close()

	pages, err := pebblecontent.New(db, "content/pages/", nil)
	if err != nil {
		panic(err)
	}
	defer pages.Close()
	media, err := pebblecontent.New(db, "content/media/", &pebblecontent.Options{ExactOnly: true})
	if err != nil {
		panic(err)
	}
	defer media.Close()

	body := []byte("\x89PNG...")
	for _, u := range []string{"http://a.test/logo.png", "http://cdn.test/logo.png"} {
		first, known, _ := media.Record(xxhash.Sum64(body), u)
		fmt.Println(u, known, first)
	}
	// Output:
	// http://a.test/logo.png false http://a.test/logo.png
	// http://cdn.test/logo.png true http://a.test/logo.png
}

// quietLogger drops Pebble's informational messages.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)              {}
func (quietLogger) Errorf(format string, args ...any) { pebble.DefaultLogger.Errorf(format, args...) }
func (quietLogger) Fatalf(format string, args ...any) { pebble.DefaultLogger.Fatalf(format, args...) }
