package pebblecontent_test

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup/pebblecontent"
	"github.com/crawlkit/crawlkit/statetest"
)

// TestExactOnlyBodySeen runs the crawlkit.BodySeen suite on an
// exact-only Content, the body set crawldb keeps: on disk, and in memory.
func TestExactOnlyBodySeen(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts pebblecontent.Options
	}{
		{"disk", pebblecontent.Options{ExactOnly: true}},
		{"mem", pebblecontent.Options{ExactOnly: true, FS: vfs.NewMem()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			statetest.RunBodySeen(t, func(t *testing.T) crawlkit.BodySeen {
				o := tc.opts
				if o.FS != nil {
					o.FS = vfs.NewMem()
				}
				c := open(t, t.TempDir(), &o)
				closeOnCleanup(t, c)
				return c
			})
		})
	}
}
