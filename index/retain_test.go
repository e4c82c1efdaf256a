package index_test

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/crawlkit/crawlkit/index"
)

// TestAddKeepsNoText checks that an index does not keep the text of the
// last document it indexed alive (a crawler's pages can be megabytes): the
// terms it keeps are copies, and its scratch buffers are cleared. The text
// is a fresh allocation with a cleanup; it must run once the document is
// indexed and dropped.
func TestAddKeepsNoText(t *testing.T) {
	for _, c := range []struct {
		name string
		add  func(index.Document) error
	}{
		{"Shard", func() func(index.Document) error {
			s := index.NewShard(nil)
			return func(d index.Document) error { _, err := s.Add(d); return err }
		}()},
		{"TermIndex", func() func(index.Document) error {
			ti := index.NewTermIndex(&index.TermIndexOptions{Shards: 2})
			return func(d index.Document) error { _, err := ti.Add(d); return err }
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			freed := make(chan struct{})
			func() {
				b := []byte("crawlers fetch pages and index their words")
				runtime.AddCleanup(&b[0], func(ch chan struct{}) { close(ch) }, freed)
				text := unsafe.String(&b[0], len(b))
				if err := c.add(index.Document{URL: "http://a.example/", Title: "t", Text: text}); err != nil {
					t.Fatal(err)
				}
			}()
			deadline := time.After(5 * time.Second)
			for {
				runtime.GC()
				select {
				case <-freed:
					return
				case <-deadline:
					t.Fatal("the indexed text is still reachable from the index")
				case <-time.After(10 * time.Millisecond):
				}
			}
		})
	}
}
