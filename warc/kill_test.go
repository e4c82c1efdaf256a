package warc

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The environment of the process TestKillDuringRotation kills: the
// directory it writes in, the step of a rotation to die at, and the
// number of pages it writes between two positions stored.
const (
	killDirEnv  = "CRAWLKIT_WARC_KILL_DIR"
	killStepEnv = "CRAWLKIT_WARC_KILL_STEP"
	killLagEnv  = "CRAWLKIT_WARC_KILL_LAG"
)

// The killed process writes killedPages pages when no kill stops it,
// into files of killedMaxSize bytes: enough for four rotations.
const (
	killedPages   = 8
	killedMaxSize = 1500
)

// TestKillDuringRotation kills a process writing WARC files, with
// SIGKILL (os.Process.Kill), at each step of completing a file and
// creating the next (testHookKill), and at the steps of Close. The
// process stores its position after every page, or after every fourth
// page so that the position lags behind a rotation or two, as a
// crawler's exchanges written between commits make it; the kill lands
// inside the write of a page or in Close, after the last position. The
// test then resumes as the crawler does (NewWriter, Rewind to the last
// position), writes on past two rotations and closes: every WARC file
// left starts with its warcinfo record and has an index that agrees
// with it, the pages are those before the position and those written
// after, each once, and no temporary file is left.
func TestKillDuringRotation(t *testing.T) {
	if dir := os.Getenv(killDirEnv); dir != "" {
		step, _ := strconv.Atoi(os.Getenv(killStepEnv))
		lag, _ := strconv.Atoi(os.Getenv(killLagEnv))
		killedWriter(t, dir, step, lag)
		return
	}
	if testing.Short() {
		t.Skip("starts a process per kill point")
	}
	for _, lag := range []int{1, 4} {
		killed := map[string]bool{}
		for step := 1; ; step++ {
			base := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringRotation$", "-test.count=1")
			cmd.Env = append(os.Environ(), killDirEnv+"="+base, killStepEnv+"="+strconv.Itoa(step), killLagEnv+"="+strconv.Itoa(lag))
			out, err := cmd.CombinedOutput()
			at, rerr := os.ReadFile(filepath.Join(base, "killed-at"))
			if errors.Is(rerr, os.ErrNotExist) {
				// Every step was killed at, one per process.
				if err != nil {
					t.Fatalf("the writing process failed: %v\n%s", err, out)
				}
				break
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("kill %d (%s): the process was not killed: %v\n%s", step, at, err, out)
			}
			killed[string(at)] = true
			t.Run(fmt.Sprintf("lag %d/kill %d at %s", lag, step, at), func(t *testing.T) {
				resumeAfterKill(t, base)
			})
		}
		steps := slices.Sorted(maps.Keys(killed))
		want := []string{"closed", "created", "index temporary", "indexed", "linked", "originals temporary", "temporary"}
		if !slices.Equal(steps, want) {
			t.Errorf("lag %d: killed at steps %q, want %q", lag, steps, want)
		}
	}
}

// killedWriter writes killedPages pages into base/warc, storing the
// position in base/position after every lag-th, and closes the Writer; it
// kills its own process at the step-th step testHookKill reports, after
// noting the step's name in base/killed-at.
func killedWriter(t *testing.T, base string, step, lag int) {
	dir := filepath.Join(base, "warc")
	w, err := NewWriter(&WriterOptions{Dir: dir, MaxFileSize: killedMaxSize})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	testHookKill = func(name string) {
		if n++; n != step {
			return
		}
		if err := os.WriteFile(filepath.Join(base, "killed-at"), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := os.FindProcess(os.Getpid())
		if err == nil {
			err = p.Kill()
			time.Sleep(time.Minute) // the signal is on its way
		}
		t.Fatalf("no kill: %v", err)
	}
	commit := func() {
		if err := os.WriteFile(filepath.Join(base, "position"), position0(t, w), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commit() // the crawler stores its first position before writing
	for i := range killedPages {
		page(t, w, "h.sim.test", i)
		if (i+1)%lag == 0 {
			commit()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// resumeAfterKill resumes the writes killedWriter left in base.
func resumeAfterKill(t *testing.T, base string) {
	dir := filepath.Join(base, "warc")
	pos, err := os.ReadFile(filepath.Join(base, "position"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(&WriterOptions{Dir: dir, MaxFileSize: killedMaxSize})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Rewind(pos); err != nil {
		t.Fatal(err)
	}
	// Before the resumed Writer writes: every file left is complete and
	// indexed, and the killed Writer's temporary files are gone.
	checkArchive(t, dir, true)
	urls, _ := exchanges(t, dir)
	k := len(urls)
	if !slices.Equal(urls, pageURLs("h.sim.test", 0, k)) {
		t.Fatalf("after Rewind: %q", urls)
	}
	files := len(w.Files())
	for i := k; len(w.Files()) < files+2; i++ {
		page(t, w, "h.sim.test", i)
		k = i + 1
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if urls, _ := exchanges(t, dir); !slices.Equal(urls, pageURLs("h.sim.test", 0, k)) {
		t.Errorf("after writing on: %q, want pages 0 to %d", urls, k-1)
	}
	checkArchive(t, dir, true)
}
