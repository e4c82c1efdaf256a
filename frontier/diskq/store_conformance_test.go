package diskq_test

import (
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/diskq"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// crashFS hands out stores on crashable in-memory file systems and
// reopens them as a crash would leave them: with exactly the data synced
// (vfs.MemFS.CrashClone), whether the store is still open or was closed.
type crashFS struct {
	mu  sync.Mutex
	fss map[any]place // store or frontier → where it lives
	n   int
}

type place struct {
	fs  *vfs.MemFS
	dir string
}

func newCrashFS() *crashFS { return &crashFS{fss: map[any]place{}} }

// options returns o on a new crashable file system, or a crash clone of
// the file system of from.
func (c *crashFS) options(o *diskq.Options, from any) (*diskq.Options, *vfs.MemFS, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var p place
	if from != nil {
		p = c.fss[from]
		p.fs = p.fs.CrashClone(vfs.CrashCloneCfg{})
	} else {
		c.n++
		p = place{vfs.NewCrashableMem(), fmt.Sprintf("q%d", c.n)}
	}
	var oc diskq.Options
	if o != nil {
		oc = *o
	}
	oc.FS = p.fs
	return &oc, p.fs, p.dir
}

func (c *crashFS) keep(x any, fs *vfs.MemFS, dir string) {
	c.mu.Lock()
	c.fss[x] = place{fs, dir}
	c.mu.Unlock()
}

func (c *crashFS) store(t *testing.T, o *diskq.Options, from frontier.Store) frontier.Store {
	oc, fs, dir := c.options(o, from)
	s, err := diskq.Open(dir, oc)
	if err != nil {
		t.Fatal(err)
	}
	c.keep(s, fs, dir)
	return s
}

// TestStoreConformance runs the Store suite on the Pebble store, with
// buffers small enough that its queues go through the disk, and with the
// defaults.
func TestStoreConformance(t *testing.T) {
	for name, o := range map[string]*diskq.Options{"small": small, "defaults": nil} {
		t.Run(name, func(t *testing.T) {
			c := newCrashFS()
			frontiertest.RunStore(t, frontiertest.StoreHarness{
				New:    func(t *testing.T) frontier.Store { return c.store(t, o, nil) },
				Reopen: func(t *testing.T, s frontier.Store) frontier.Store { return c.store(t, o, s) },
			})
		})
	}
}

// TestCrashConformance runs the Frontier suite on Mercator and FIFO over
// the Pebble store on a crashable in-memory file system, so that the
// suite's Sync check can crash them: a frontier reopened on the data its
// last Sync made durable, and nothing else, must hold every URL not
// finished before that Sync.
func TestCrashConformance(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		t.Run(map[bool]string{false: "Mercator", true: "FIFO"}[fifo], func(t *testing.T) {
			c := newCrashFS()
			open := func(t *testing.T, o frontier.Options, from frontier.Frontier) frontier.Frontier {
				do, fs, dir := c.options(suite, from)
				var f frontier.Frontier
				var err error
				if fifo {
					f, err = diskq.NewFIFO(dir, &o, do)
				} else {
					f, err = diskq.NewMercator(dir, &o, do)
				}
				if err != nil {
					t.Fatal(err)
				}
				c.keep(f, fs, dir)
				return f
			}
			frontiertest.Run(t, frontiertest.Harness{
				New: func(t *testing.T, o frontier.Options) frontier.Frontier { return open(t, o, nil) },
				Reopen: func(t *testing.T, f frontier.Frontier, o frontier.Options) frontier.Frontier {
					if err := f.(io.Closer).Close(); err != nil {
						t.Fatal(err)
					}
					return open(t, o, f)
				},
				Crash:       func(t *testing.T, f frontier.Frontier, o frontier.Options) frontier.Frontier { return open(t, o, f) },
				Prioritized: !fifo,
			})
		})
	}
}
