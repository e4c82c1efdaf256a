package crawlkit

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/frontier"
)

// State is what a crawl must not lose: the URLs still to fetch, the
// URL-seen set, a record per host and per registrable domain (URLs
// admitted, next contact), and the crawl's progress (its counters and the
// positions of its durable sinks). The crawler reads it with Lookup and
// changes it only through Commit, one Txn per page, built under a lock
// that also covers the page's writes to the durable sinks: a State that
// applies each Txn atomically, and after a crash comes back as of some
// committed Txn, lets a resumed crawl continue from the last committed
// page with every output consistent with it (IIR §20.2.3: the frontier
// "may grow to the point where it exceeds the memory of a single
// machine"; §20.1: a crawler must be robust).
//
// MemState keeps a State in memory (a new Crawler on the same MemState
// resumes in the same process); package crawldb keeps one on disk in
// Pebble. A Config without a State crawls with an in-memory state that
// keeps no pending URLs and cannot be resumed. Package statetest is the
// conformance suite. Implementations are safe for concurrent use, though
// the crawler never calls Commit concurrently.
type State interface {
	// Load calls each for every pending URL, in no particular order,
	// and returns the progress of the last committed Txn (nil for a new
	// state). The crawler calls it once, at the start of Run, before
	// anything else.
	Load(ctx context.Context, each func(Pending) error) (progress []byte, err error)
	// Lookup fills in q's answers. It sees every committed Txn.
	Lookup(ctx context.Context, q *Lookup) error
	// Commit applies t atomically and returns once Lookup sees it. What
	// survives a crash of the process or of the machine is for each
	// implementation to document.
	Commit(ctx context.Context, t *Txn) error
	// Close releases the state's resources; a durable state keeps what
	// was committed.
	Close() error
}

// Pending is the State's record of a URL admitted and not yet finished:
// the frontier entry (URL, Depth, Fingerprint, History and Due; Key and
// Priority are derived again when it is queued) and the retries it has
// used.
type Pending struct {
	URL     frontier.URL
	Retries int
	// Parked, if not "", is the URL a learned rewrite rule maps URL to:
	// the crawl fetches that one instead, and keeps URL out of the
	// frontier while the rule holds (see Config.URLRules). A resumed
	// crawl parks URL again, or queues it when the rule is gone.
	Parked string
}

// Lookup is one batch of reads from a State: the caller fills in the
// inputs, Lookup the outputs (reusing their capacity).
type Lookup struct {
	// URLs are fingerprints (dedup.Fingerprint of canonical URLs) to test
	// against the URL-seen set; Seen[i] answers URLs[i].
	URLs []uint64
	Seen []bool
	// Keys are host or domain keys; Records[i] answers Keys[i] (zero for
	// a key never recorded).
	Keys    []string
	Records []KeyRecord
	// Pending are URLs whose pending record is wanted; Found[i] reports
	// whether Pending[i] is pending, Records of it in PendingRecords[i].
	Pending        []string
	Found          []bool
	PendingRecords []Pending
}

// KeyRecord is the State's record of one host or registrable domain.
type KeyRecord struct {
	// Admitted counts the URLs admitted to the frontier under the key,
	// ever: the per-host and per-domain budgets are checked against it.
	Admitted int64
	// Next is the earliest time the key may be contacted again (the
	// politeness gap after its last request); zero when unknown.
	Next time.Time
	// Gap is the length of that gap. A resumed crawl waits at least Gap
	// before contacting the key, in case a request was in flight when the
	// last run ended (its own gap was never saved).
	Gap time.Duration
	// Pages counts the pages of new content fetched under a host key,
	// and Alike those whose content had been seen before (duplicates
	// and near-duplicates): the trap defence reads them (TrapOptions).
	Pages int64
	Alike int64
	// Backoff is the host's back-off state (see BackoffOptions): a
	// resumed crawl keeps backing off a host that throttled it.
	Backoff Backoff
}

// Backoff is the back-off state of one host (see BackoffOptions).
type Backoff struct {
	// Level counts the host's incidents (throttling answers, runs of
	// connection failures) since it was last forgiven: the next block
	// lasts BackoffOptions.Base × 2^Level.
	Level int32
	// Failures counts the connection failures in a row since the host
	// last answered.
	Failures int32
	// Last is when the last incident's block ended: the host is
	// forgiven (Level back to 0) after BackoffOptions.Forgive without an
	// incident from then.
	Last time.Time
}

// Apply changes r by d: the counts are added, a non-zero Next replaces
// the stored Next and Gap, a non-nil Backoff replaces the stored one.
// Every State applies deltas this way.
func (r *KeyRecord) Apply(d KeyDelta) {
	r.Admitted += d.Admitted
	r.Pages += d.Pages
	r.Alike += d.Alike
	if !d.Next.IsZero() {
		r.Next, r.Gap = d.Next, d.Gap
	}
	if d.Backoff != nil {
		r.Backoff = *d.Backoff
	}
}

// KeyDelta changes one KeyRecord (see KeyRecord.Apply).
type KeyDelta struct {
	Key      string
	Admitted int64
	Next     time.Time
	Gap      time.Duration
	Pages    int64
	Alike    int64
	Backoff  *Backoff // nil: unchanged
}

// Txn is one atomic change of a State: what one page, or one batch of
// seeds or received URLs, changed.
type Txn struct {
	// Add are new URLs: each goes into the URL-seen set and the pending
	// set.
	Add []Pending
	// Put sets the pending records of URLs, replacing what they had (a
	// retry's count, a revisit's schedule). They are not added to the
	// URL-seen set: Put is for URLs added before.
	Put []Pending
	// Done are URLs that reached their outcome: they leave the pending
	// set and stay in the URL-seen set.
	Done []string
	// Keys change host and domain records.
	Keys []KeyDelta
	// Progress, if not nil, replaces the saved progress (an encoding
	// private to the crawler).
	Progress []byte
	// Rules, if not nil, replaces the saved URL rewrite rules the crawl
	// learned (dust.Learner.AppendRules). A State that is not a
	// RuleStorer ignores it: its crawl relearns them after a resume.
	Rules []byte
	// Sent are the URLs the page of this Txn handed to the host
	// splitter (Config.Splitter) for other nodes, which may not be
	// stored yet. A State whose Txns must not outlive them (a cluster
	// member's journal) keeps them as an outbox, to send again if the
	// process dies before the splitter stored them; others ignore them.
	Sent []frontier.URL
}

// Stager is implemented by a State whose commits wait on a round trip (a
// cluster member's journal on NATS): the crawler stages each Txn under its
// commit lock and waits for it to be durable after releasing the lock, so
// the Txns of the pages committed meanwhile can share one write (a group
// commit), and a worker that waits lends its place to another (see
// Config.Workers). The crawler still calls Commit for some Txns.
// cluster.ShardState stages; MemState and crawldb commit at once (a nil
// wait). Package statetest checks the rules.
type Stager interface {
	// Stage applies t as Commit does, but may return before t is
	// durable. Lookup sees t once Stage returns, and the crawler calls
	// Stage for one Txn at a time, in order. wait returns nil once t and
	// every Txn staged before it are as durable as Commit would have made
	// them, or the error that kept t from being so (the crawl then
	// stops); a nil wait means t was durable when Stage returned. A Txn
	// may be waited for by one caller, once. Stage keeps no reference to
	// t: the crawler reuses it.
	Stage(ctx context.Context, t *Txn) (wait func(context.Context) error, err error)
}

// RuleStorer is implemented by a State that keeps the URL rewrite rules a
// crawl learned (Txn.Rules) with the rest of its state, so that a resumed
// crawl applies them from its first link and parks its parked URLs again.
// MemState and crawldb implement it.
type RuleStorer interface {
	// Rules returns the last committed Txn.Rules, nil if none.
	Rules() ([]byte, error)
}

// Reset empties t for reuse, keeping its capacity.
func (t *Txn) Reset() {
	clear(t.Add)
	clear(t.Put)
	clear(t.Done)
	clear(t.Keys)
	clear(t.Sent)
	*t = Txn{Add: t.Add[:0], Put: t.Put[:0], Done: t.Done[:0], Keys: t.Keys[:0], Sent: t.Sent[:0]}
}

// ErrStateClosed is returned by a MemState's methods after Close.
var ErrStateClosed = errors.New("crawlkit: state closed")

// QueueStorer is implemented by a State that also holds the default
// frontier's queues (package crawldb keeps them on disk), so that the
// frontier's memory stays bounded however many URLs are pending. The
// crawler calls QueueStore once per Run when Config.Frontier is nil; the
// frontier owns the store and closes it. The store starts empty: the
// crawler queues the pending URLs that Load reports.
type QueueStorer interface {
	QueueStore() (frontier.Store, error)
}

// ContentStorer is implemented by a State that also holds the "content
// seen?" sets (package crawldb keeps them on disk). When Config.ContentSeen
// is nil the crawler uses ContentSeen; the body set always comes from
// BodySeen. The State owns both and closes them.
type ContentStorer interface {
	ContentSeen() (dedup.ContentSeen, error)
	BodySeen() (BodySeen, error)
}

// ContactRecorder is implemented by a State that remembers, per worker,
// the host being contacted, so that a crawl resumed after a kill keeps the
// politeness gap after a request whose outcome was never committed (its
// gap was never saved). The crawler calls Contacting from worker w (0 ≤ w
// < Config.Workers) before the requests of every lease, robots.txt
// included, and Contacts once, at the start of Run, before any
// Contacting: the keys it reports are held back until their time. crawldb
// implements it with one write of a fixed-size slot per lease.
type ContactRecorder interface {
	// Contacting records that worker w is about to contact c.Key. It
	// must be cheap and safe for concurrent use by distinct workers.
	Contacting(w int, c Contact) error
	// Contacts returns the records of the last run.
	Contacts() ([]Contact, error)
}

// Contact is a record of ContactRecorder: at At, the key was about to be
// contacted, and must then not be contacted again before Until unless a
// commit made after At (a host record whose gap started at or after At)
// says when.
type Contact struct {
	Key   string
	At    time.Time
	Until time.Time
}

// BodySeen is the exact "content seen?" test for bodies without text
// (images, PDFs), keyed by a fingerprint of their bytes. dedup.ExactContent
// implements it. Safe for concurrent use.
type BodySeen interface {
	// Record returns the URL first recorded with fp, recording url if fp
	// is new (known false).
	Record(fp uint64, url string) (first string, known bool, err error)
	// Forget removes fp (a page whose content changed).
	Forget(ctx context.Context, fp uint64) error
}

var _ BodySeen = (*dedup.ExactContent)(nil)

// MemState is a State in memory: a new Crawler on the same MemState
// resumes where the last one stopped, in the same process, knowing the
// URLs and the content it saw before (it is a ContentStorer). Its URL-seen
// set is a dedup.Set; a pending URL costs about 200 bytes. Commit is
// atomic (one lock); nothing survives the process. Safe for concurrent
// use. The zero value is ready to use.
type MemState struct {
	mu       sync.Mutex
	seen     *dedup.Set
	pending  map[string]Pending
	keys     map[string]KeyRecord
	progress []byte
	rules    []byte
	content  *dedup.Content
	bodies   *dedup.ExactContent
	contacts map[int]Contact
	closed   bool
}

var (
	_ State           = (*MemState)(nil)
	_ ContentStorer   = (*MemState)(nil)
	_ ContactRecorder = (*MemState)(nil)
	_ RuleStorer      = (*MemState)(nil)
)

// Rules implements RuleStorer.
func (s *MemState) Rules() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrStateClosed
	}
	if len(s.rules) == 0 {
		return nil, nil
	}
	return append([]byte(nil), s.rules...), nil
}

// Contacting implements ContactRecorder.
func (s *MemState) Contacting(w int, c Contact) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStateClosed
	}
	if s.contacts == nil {
		s.contacts = make(map[int]Contact)
	}
	s.contacts[w] = c
	return nil
}

// Contacts implements ContactRecorder.
func (s *MemState) Contacts() ([]Contact, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrStateClosed
	}
	out := make([]Contact, 0, len(s.contacts))
	for _, c := range s.contacts {
		out = append(out, c)
	}
	return out, nil
}

// ContentSeen implements ContentStorer: a dedup.Content with the default
// options, the same one on every call.
func (s *MemState) ContentSeen() (dedup.ContentSeen, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrStateClosed
	}
	if s.content == nil {
		c, err := dedup.NewContent(nil)
		if err != nil {
			return nil, err
		}
		s.content = c
	}
	return s.content, nil
}

// BodySeen implements ContentStorer: a dedup.ExactContent, the same one
// on every call.
func (s *MemState) BodySeen() (BodySeen, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrStateClosed
	}
	if s.bodies == nil {
		s.bodies = new(dedup.ExactContent)
	}
	return s.bodies, nil
}

// NewMemState returns an empty MemState.
func NewMemState() *MemState { return &MemState{} }

func (s *MemState) init() {
	if s.seen == nil {
		s.seen = dedup.NewSet(1 << 10)
		s.pending = make(map[string]Pending)
		s.keys = make(map[string]KeyRecord)
	}
}

// Load implements State.
func (s *MemState) Load(ctx context.Context, each func(Pending) error) ([]byte, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrStateClosed
	}
	s.init()
	all := make([]Pending, 0, len(s.pending))
	for _, p := range s.pending {
		all = append(all, p)
	}
	progress := append([]byte(nil), s.progress...)
	s.mu.Unlock()
	for _, p := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := each(p); err != nil {
			return nil, err
		}
	}
	if len(progress) == 0 {
		progress = nil
	}
	return progress, nil
}

// Lookup implements State.
func (s *MemState) Lookup(ctx context.Context, q *Lookup) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStateClosed
	}
	s.init()
	q.Seen = q.Seen[:0]
	for _, fp := range q.URLs {
		q.Seen = append(q.Seen, s.seen.Contains(fp))
	}
	lookupKeys(q, func(k string) KeyRecord { return s.keys[k] })
	q.Found, q.PendingRecords = q.Found[:0], q.PendingRecords[:0]
	for _, u := range q.Pending {
		p, ok := s.pending[u]
		q.Found = append(q.Found, ok)
		q.PendingRecords = append(q.PendingRecords, p)
	}
	return nil
}

// lookupKeys fills q.Records from get.
func lookupKeys(q *Lookup, get func(string) KeyRecord) {
	q.Records = q.Records[:0]
	for _, k := range q.Keys {
		q.Records = append(q.Records, get(k))
	}
}

// Stage implements Stager: a MemState commits at once (a nil wait).
func (s *MemState) Stage(ctx context.Context, t *Txn) (func(context.Context) error, error) {
	return nil, s.Commit(ctx, t)
}

// Commit implements State.
func (s *MemState) Commit(ctx context.Context, t *Txn) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStateClosed
	}
	s.init()
	for _, p := range t.Add {
		s.seen.Add(dedup.Fingerprint(p.URL.URL))
		s.pending[p.URL.URL] = stripped(p)
	}
	for _, p := range t.Put {
		s.pending[p.URL.URL] = stripped(p)
	}
	for _, u := range t.Done {
		delete(s.pending, u)
	}
	for _, d := range t.Keys {
		r := s.keys[d.Key]
		r.Apply(d)
		s.keys[d.Key] = r
	}
	if t.Progress != nil {
		s.progress = append(s.progress[:0], t.Progress...)
	}
	if t.Rules != nil {
		s.rules = append(s.rules[:0], t.Rules...)
	}
	return nil
}

// stripped drops the fields of a pending URL that are not kept: the
// prioritizer's inputs and what is derived again when it is queued.
func stripped(p Pending) Pending {
	p.URL.Anchor, p.URL.Source = "", ""
	return p
}

// Close implements State; later calls fail with ErrStateClosed.
func (s *MemState) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.seen, s.pending, s.keys, s.content, s.bodies = nil, nil, nil, nil, nil
	return nil
}

// ephemeral is the State of a Config without one: URL-seen set and key
// records in memory, no pending URLs (nothing to resume) and no progress;
// only the retry counts of URLs being retried, which a crawl needs to
// stop retrying.
type ephemeral struct {
	seen *dedup.Set

	mu      sync.Mutex
	keys    map[string]KeyRecord
	retries map[string]int
}

func newEphemeral() *ephemeral {
	return &ephemeral{seen: dedup.NewSet(1 << 16), keys: make(map[string]KeyRecord), retries: make(map[string]int)}
}

func (e *ephemeral) Load(context.Context, func(Pending) error) ([]byte, error) { return nil, nil }

func (e *ephemeral) Lookup(ctx context.Context, q *Lookup) error {
	q.Seen = q.Seen[:0]
	for _, fp := range q.URLs {
		q.Seen = append(q.Seen, e.seen.Contains(fp))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	lookupKeys(q, func(k string) KeyRecord { return e.keys[k] })
	q.Found, q.PendingRecords = q.Found[:0], q.PendingRecords[:0]
	for _, u := range q.Pending {
		n, ok := e.retries[u]
		q.Found = append(q.Found, ok)
		q.PendingRecords = append(q.PendingRecords, Pending{URL: frontier.URL{URL: u}, Retries: n})
	}
	return nil
}

func (e *ephemeral) Commit(ctx context.Context, t *Txn) error {
	for _, p := range t.Add {
		e.seen.Add(dedup.Fingerprint(p.URL.URL))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range t.Keys {
		r := e.keys[d.Key]
		r.Apply(d)
		e.keys[d.Key] = r
	}
	for _, p := range t.Put {
		if p.Retries > 0 {
			e.retries[p.URL.URL] = p.Retries
		}
	}
	for _, u := range t.Done {
		delete(e.retries, u)
	}
	return nil
}

func (e *ephemeral) Close() error { return nil }
