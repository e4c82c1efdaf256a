package pebblecontent_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/pebblecontent"
)

// The kill tests run this test binary as a child process that records
// documents and reports each on its standard output once Seen returns;
// the parent kills it with SIGKILL and reopens the store.
const (
	killDirEnv  = "PEBBLECONTENT_KILL_DIR"
	killModeEnv = "PEBBLECONTENT_KILL_MODE"
	killDocs    = 300
)

func killOptions(mode string) *pebblecontent.Options {
	switch mode {
	case "sync":
		return &pebblecontent.Options{Sync: true}
	case "interval":
		return &pebblecontent.Options{SyncInterval: 20 * time.Millisecond}
	default: // "nosync"
		return &pebblecontent.Options{SyncInterval: -1}
	}
}

// TestKillChild is the child's side; it does nothing in a normal run.
func TestKillChild(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("run by TestKill")
	}
	c := open(t, dir, killOptions(os.Getenv(killModeEnv)))
	pages, _ := corpusDocs(killDocs)
	ctx := context.Background()
	for i, p := range pages {
		if _, err := c.Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://a.test/%d", i), Text: p}); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("recorded %d\n", i)
	}
	fmt.Println("done")
	time.Sleep(time.Minute) // until killed, never closed
}

// TestKill kills a process that records documents (SIGKILL: no Close, no
// deferred calls) and checks which of the documents it reported recorded
// are still known: with Sync, all of them, even when killed in
// mid-stream; with a SyncInterval, all of those recorded an interval
// before the kill. Without either it logs how many a kill lost.
func TestKill(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("starts child processes")
	}
	_, near := corpusDocs(killDocs)
	for _, tc := range []struct {
		mode      string
		killAfter int           // reports read before the kill (killDocs: all, then "done")
		wait      time.Duration // between the last report read and the kill
	}{
		{"sync", killDocs / 2, 0},
		{"interval", killDocs, 200 * time.Millisecond},
		{"nosync", killDocs, 200 * time.Millisecond},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), killDirEnv+"="+dir, killModeEnv+"="+tc.mode)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			reported := 0
			sc := bufio.NewScanner(out)
			for reported < tc.killAfter && sc.Scan() {
				if s, ok := strings.CutPrefix(sc.Text(), "recorded "); ok {
					i, _ := strconv.Atoi(s)
					reported = i + 1
				}
			}
			if tc.killAfter == killDocs {
				for sc.Scan() && sc.Text() != "done" {
				}
			}
			time.Sleep(tc.wait)
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if reported < tc.killAfter {
				t.Fatalf("child reported %d documents, want %d", reported, tc.killAfter)
			}

			c := open(t, dir, &pebblecontent.Options{SyncInterval: -1})
			defer c.Close()
			ctx := context.Background()
			lost := 0
			for i := range reported {
				m, err := c.Seen(ctx, dedup.Doc{URL: "http://b.test/", Text: near[i]})
				if err != nil {
					t.Fatal(err)
				}
				if !m.Seen || m.URL != fmt.Sprintf("http://a.test/%d", i) {
					lost++
				}
			}
			if tc.mode == "nosync" {
				t.Logf("without a sync, a kill -9 lost %d of %d recorded documents", lost, reported)
				return
			}
			if lost > 0 {
				t.Fatalf("%d of %d recorded documents lost", lost, reported)
			}
		})
	}
}
