package statetest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/statetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// refState is a MemState with a queue store of its own, so that it has
// every capability. Unless broken names a rule to break, it passes the
// suite.
type refState struct {
	*crawlkit.MemState
	broken string

	mu       sync.Mutex
	store    *keptStore               // "queue-not-emptied": one store for every call
	contacts map[int]crawlkit.Contact // "contacts-keep-first"
}

var _ interface {
	crawlkit.State
	crawlkit.ContentStorer
	crawlkit.QueueStorer
	crawlkit.ContactRecorder
} = (*refState)(nil)

func (s *refState) Commit(ctx context.Context, t *crawlkit.Txn) error {
	if s.broken == "commit-ignores-done" {
		c := *t
		c.Done = nil
		t = &c
	}
	return s.MemState.Commit(ctx, t)
}

func (s *refState) BodySeen() (crawlkit.BodySeen, error) {
	if s.broken == "content-fresh-sets" {
		return new(dedup.ExactContent), nil
	}
	return s.MemState.BodySeen()
}

// keptStore is a store whose Close keeps what it holds.
type keptStore struct{ *frontier.MemStore }

func (keptStore) Close() error { return nil }

func (s *refState) QueueStore() (frontier.Store, error) {
	if err := s.Lookup(context.Background(), &crawlkit.Lookup{}); err != nil {
		return nil, err // closed
	}
	if s.broken != "queue-not-emptied" {
		return frontier.NewMemStore(), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store == nil {
		s.store = &keptStore{frontier.NewMemStore()}
	}
	return s.store, nil
}

func (s *refState) Contacting(w int, c crawlkit.Contact) error {
	if s.broken != "contacts-keep-first" {
		return s.MemState.Contacting(w, c)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.contacts == nil {
		s.contacts = map[int]crawlkit.Contact{}
	}
	if _, ok := s.contacts[w]; !ok {
		s.contacts[w] = c
	}
	return nil
}

func (s *refState) Contacts() ([]crawlkit.Contact, error) {
	if s.broken != "contacts-keep-first" {
		return s.MemState.Contacts()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []crawlkit.Contact
	for _, c := range s.contacts {
		out = append(out, c)
	}
	return out, nil
}

// refHarness makes refStates; a restart is a new run on the same value,
// as with a MemState.
func refHarness(broken string) statetest.Harness {
	return statetest.Harness{
		New:    func(t *testing.T) crawlkit.State { return &refState{MemState: crawlkit.NewMemState(), broken: broken} },
		Reopen: func(t *testing.T, s crawlkit.State) crawlkit.State { return s },
	}
}

// refBodies is an ExactContent that breaks one rule, if broken says so.
type refBodies struct {
	dedup.ExactContent
	broken string
	mu     sync.Mutex
	last   map[uint64]string
}

func (b *refBodies) Record(fp uint64, url string) (string, bool, error) {
	if b.broken != "bodyseen-last-wins" {
		return b.ExactContent.Record(fp, url)
	}
	// The latest URL replaces the first.
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last == nil {
		b.last = map[uint64]string{}
	}
	_, known := b.last[fp]
	b.last[fp] = url
	return url, known, nil
}

func (b *refBodies) Forget(ctx context.Context, fp uint64) error {
	if b.broken == "bodyseen-forget-ignored" {
		return nil
	}
	return b.ExactContent.Forget(ctx, fp)
}

func newBodies(broken string) func(*testing.T) crawlkit.BodySeen {
	return func(*testing.T) crawlkit.BodySeen { return &refBodies{broken: broken} }
}

// TestReference: the suites pass implementations that keep their rules.
func TestReference(t *testing.T) {
	t.Run("State", func(t *testing.T) { statetest.Run(t, refHarness("")) })
	t.Run("BodySeen", func(t *testing.T) { statetest.RunBodySeen(t, newBodies("")) })
}

// TestBrokenHelper is run by TestSuiteCatchesBrokenStates in a child
// process.
func TestBrokenHelper(t *testing.T) {
	how := os.Getenv("STATETEST_BROKEN")
	switch {
	case how == "":
		t.Skip("run by TestSuiteCatchesBrokenStates")
	case strings.HasPrefix(how, "bodyseen-"):
		statetest.RunBodySeen(t, newBodies(how))
	default:
		statetest.Run(t, refHarness(how))
	}
}

// TestSuiteCatchesBrokenStates checks the suites: an implementation
// breaking one rule fails the check that covers it.
func TestSuiteCatchesBrokenStates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suites in child processes")
	}
	for how, check := range map[string]string{
		"commit-ignores-done":     "AddDonePut",
		"content-fresh-sets":      "ContentStorer",
		"queue-not-emptied":       "QueueStorer",
		"contacts-keep-first":     "ContactRecorder",
		"bodyseen-last-wins":      "Record",
		"bodyseen-forget-ignored": "Forget",
	} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBrokenHelper$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "STATETEST_BROKEN="+how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed an implementation that %s:\n%s", how, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenHelper/"+check+" ") {
				t.Fatalf("the suite did not fail %s for an implementation that %s:\n%s", check, how, out)
			}
		})
	}
}
