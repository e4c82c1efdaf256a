package crawldb_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/crawldb"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/frontier"
)

// committer is the child process of TestKillLosesNothing: it commits
// Txns as fast as it can and prints the number of each one whose Commit
// returned, until it is killed.
func committer(dir string) {
	db, err := crawldb.Open(dir, &crawldb.Options{SyncInterval: 50 * time.Millisecond})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	w := bufio.NewWriterSize(os.Stdout, 0)
	for i := 0; ; i++ {
		txn := crawlkit.Txn{
			Add:      []crawlkit.Pending{{URL: frontier.URL{URL: fmt.Sprintf("http://k%d.test/new", i), Depth: i % 7}}},
			Keys:     []crawlkit.KeyDelta{{Key: "h:total", Admitted: 1}},
			Progress: []byte(strconv.Itoa(i)),
		}
		if i > 0 {
			txn.Done = []string{fmt.Sprintf("http://k%d.test/new", i-1)}
		}
		if err := db.Commit(ctx, &txn); err != nil {
			fmt.Println("commit:", err)
			os.Exit(2)
		}
		fmt.Fprintln(w, i)
	}
}

// TestKillLosesNothing kills a process committing Txns with SIGKILL at
// random moments, several times over the same directory: every Txn
// whose Commit returned is in the reopened state, whole, and the state is
// exactly as of one Txn (a prefix: no later Txn half applied).
func TestKillLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: kills child processes")
	}
	dir := t.TempDir()
	kills := 5
	if os.Getenv("CRAWLKIT_LONG") == "1" {
		kills = 20
	}
	done, admitted := -1, int64(0)
	for k := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "CRAWLDB_COMMITTER="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		want := 200 + 97*k // commits to see before the kill
		seen := 0
		for sc.Scan() {
			n, err := strconv.Atoi(sc.Text())
			if err != nil {
				t.Fatalf("child: %s", sc.Text())
			}
			done = max(done, n)
			if seen++; seen == want {
				cmd.Process.Signal(syscall.SIGKILL)
				break
			}
		}
		cmd.Wait()

		db := open(t, dir)
		pending := map[string]bool{}
		prog, err := db.Load(context.Background(), func(p crawlkit.Pending) error {
			pending[p.URL.URL] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		last, err := strconv.Atoi(string(prog))
		if err != nil {
			t.Fatalf("kill %d: progress %q", k, prog)
		}
		if last < done {
			t.Fatalf("kill %d: the state holds commit %d, but commit %d had returned", k, last, done)
		}
		q := &crawlkit.Lookup{Keys: []string{"h:total"}}
		for i := 0; i <= last+1; i++ {
			q.URLs = append(q.URLs, dedup.Fingerprint(fmt.Sprintf("http://k%d.test/new", i)))
		}
		if err := db.Lookup(context.Background(), q); err != nil {
			t.Fatal(err)
		}
		// The state is that of commit last of the child's own numbering,
		// which restarts at 0 in every child: counts add up across kills.
		if len(pending) != 1 || !pending[fmt.Sprintf("http://k%d.test/new", last)] {
			t.Errorf("kill %d: pending %v, want only the URL of commit %d", k, keys(pending), last)
		}
		for i := 0; i <= last; i++ {
			if !q.Seen[i] {
				t.Fatalf("kill %d: URL of commit %d not seen", k, i)
			}
		}
		admitted += int64(last) + 1
		if got := q.Records[0].Admitted; got != admitted {
			t.Errorf("kill %d: the key record counts %d, want %d: a commit applied twice or lost", k, got, admitted)
		}
		t.Logf("kill %d: %d commits returned, state at commit %d", k, done+1, last)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		done = -1
		if err := clearPending(dir); err != nil {
			t.Fatal(err)
		}
	}
}

// clearPending finishes the pending URL, so that every child starts from
// an empty pending set.
func clearPending(dir string) error {
	db, err := crawldb.Open(dir, nil)
	if err != nil {
		return err
	}
	var urls []string
	if _, err := db.Load(context.Background(), func(p crawlkit.Pending) error {
		urls = append(urls, p.URL.URL)
		return nil
	}); err != nil {
		return err
	}
	if err := db.Commit(context.Background(), &crawlkit.Txn{Done: urls}); err != nil {
		return err
	}
	return db.Close()
}

func keys(m map[string]bool) string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	return strings.Join(s, " ")
}
