package frontier

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Options configures NewMercator and NewFIFO. The zero value is usable;
// each field documents its default. Fields that only apply to Mercator say
// so.
type Options struct {
	// FrontQueues is F, the number of priority levels (Mercator only).
	// Default 8.
	FrontQueues int
	// Workers is the number of crawl threads expected; it sizes
	// BackQueues. Default 16.
	Workers int
	// BackQueues is B (Mercator only). Default 3 × Workers, Mercator's rule.
	BackQueues int
	// HostOrder is how Mercator chooses among hosts (Mercator only): which
	// of the hosts that may be contacted gets the next worker, where the
	// URLs of a host being crawled wait, and whether a host waiting out its
	// gap keeps its back queue. Default MostWork; EarliestContact is the
	// book's order, PriorityFirst MostWork ranked by priority first.
	HostOrder HostOrder
	// Prioritizer maps an added URL to a front queue (Mercator only).
	// Default Depth{} (breadth first).
	Prioritizer Prioritizer
	// Revisit maps a revisit that became due to a front queue (Mercator
	// only). Default ChangeRate{}.
	Revisit Prioritizer
	// Weights are the biased front queue selector's weights, one per front
	// queue, lowest priority first (Mercator only). A front queue is picked
	// at random among the non-empty ones with probability proportional to
	// its weight. Default, and for missing or non-positive entries: queue
	// i weighs i+1.
	Weights []float64
	// Seed seeds the front queue selector, so a run can be repeated.
	// Default 0 (a fixed seed).
	Seed uint64
	// Politeness is the gap policy. Defaults: K 10, MinDelay 0, MaxDelay 1h.
	Politeness
	// Clock is the source of time. Default SystemClock{}.
	Clock Clock
	// Store holds the queues; the frontier owns it and closes it on
	// Close. Default NewMemStore(). Queues already in the store (a store
	// reopened from disk) are taken over: URLs in back queues or beyond go
	// back to their front queue.
	Store Store
}

func (o *Options) ensureDefaults() {
	if o.FrontQueues <= 0 {
		o.FrontQueues = 8
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.BackQueues <= 0 {
		o.BackQueues = 3 * o.Workers
	}
	if o.HostOrder != EarliestContact && o.HostOrder != PriorityFirst {
		o.HostOrder = MostWork
	}
	if o.Prioritizer == nil {
		o.Prioritizer = Depth{}
	}
	if o.Revisit == nil {
		o.Revisit = ChangeRate{}
	}
	// Copied, so the caller's slice may change later; missing or
	// non-positive weights take the default.
	w := make([]float64, o.FrontQueues)
	for i := range w {
		w[i] = float64(i + 1)
		if i < len(o.Weights) && o.Weights[i] > 0 && !math.IsInf(o.Weights[i], 0) {
			w[i] = o.Weights[i]
		}
	}
	o.Weights = w
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	if o.Store == nil {
		o.Store = NewMemStore()
	}
}

// backQ is one back queue: the host it serves, the earliest time te it may
// be contacted again, its place in the heaps and its outstanding lease,
// and what the ready heap ranks it by: whether its first page is still to
// come, how many URLs it holds, its gap and the highest priority among
// its URLs.
type backQ struct {
	key   string
	kh    uint64 // keyHash(key)
	te    int64
	hidx  int32 // index in m.wait or m.ready (see ready), -1 when in neither
	ready bool  // hidx is in m.ready
	// fresh is set while the key has not been leased since it got this
	// queue and had no remembered te then (most likely never contacted),
	// and again when such a lease comes back with Result.Requeue: the
	// first lease fetches robots.txt, the next the page that shows how
	// big the host is. wasFresh is fresh as the lease out found it.
	fresh, wasFresh bool
	gap             int64 // the gap after the key's last contact, ns (MostWork's due)
	n               int32 // URLs queued for the key: the back queue plus again
	top             int32 // highest Priority among them, -1 when n is 0
	lease           *Lease
	// again holds the URLs that come out before the rest of the queue: a
	// URL handed back with Result.Requeue (first, as if never taken),
	// then the sitemaps added while the key has its queue (a sitemap
	// tells how much the host holds, and is not held up behind its
	// pages, which a Retry-After may hold for long).
	again []URL
}

// Mercator is the URL frontier of IIR Figure 20.3: F front FIFO queues fed
// by a Prioritizer, a biased front queue selector, B back FIFO queues each
// holding the URLs of one host, the host → back queue table T (Figure
// 20.4) and a heap of back queues keyed by the earliest contact time te.
//
// The heap is split in two: a wait heap of the back queues whose te lies
// ahead, by te, and a ready heap of those that may be contacted now,
// ordered by Options.HostOrder (with MostWork, the default: first page not
// yet fetched, then most overdue, its URLs queued times its gap counted as
// waiting). Next moves the queues whose te has come from the wait heap to
// the ready heap, takes the ready root, or waits for the wait root's te,
// and leases the head URL of its back queue; the queue leaves the heaps
// until Done, so one key has at most one lease. Done puts it back with te
// = now + Politeness.Gap; if the back queue is empty it is refilled from
// the front queues exactly as the book says: a front URL whose host
// already has a back queue is appended there and the refill goes on until
// a URL of a new host fills the empty queue. Two departures, both needed
// once the front queues can run dry: a back queue left empty waits idle
// and is refilled by the next Add, and a host that leaves the back queues
// keeps its te in a small table so it is not contacted early when it comes
// back. MostWork adds three more (see HostOrder): an added URL whose host
// has a back queue joins it at once (a sitemap robots.txt names, ahead of
// the host's pages), the URLs of a host that never had a back queue wait
// in their priority's lane, which a refill takes before the front queue
// three times in four, and a host with few URLs gives its queue up while
// it waits out its gap if other hosts wait for one. The table T is keyed
// by a 64-bit hash of the key (two keys with the same hash would share a
// back queue: still polite, only slower for them).
//
// Costs: Add O(1) plus the prioritizer (O(log B) when the URL joins a
// back queue in the ready heap); Next and Done O(log B) plus the refill,
// which moves URLs of hosts already in the back queues and is O(1)
// amortized per URL, and with MostWork a Done may move up to 64 URLs back
// to the front queues; a lease that takes a queue's last URL of its
// highest priority costs O(F). No allocation but the Lease. With the
// default store a queued URL costs its URL string plus about 96 bytes
// (plus its Key if that is not a substring of URL); each back queue
// costs 4F bytes of counters. Safe for concurrent use.
type Mercator struct {
	mu      sync.Mutex
	o       Options
	f, b    int
	store   Store
	mem     *MemStore // store, when it is the default: refill moves items in place
	clock   Clock
	rng     *rand.Rand
	back    []backQ
	lv      []int32   // lv[j*f+p]: URLs of priority p queued for back queue j
	flen    []int     // URLs of each priority waiting for a back queue (front queue and lane), mirrored to spare Store calls
	nfront  int       // sum of flen
	llen    []int     // of flen, those in the priority's lane (MostWork)
	known   keySet    // MostWork: the key hashes that have had a back queue
	laneRun int       // refills taken from a lane in a row while its front queue held URLs
	work    bool      // HostOrder is MostWork or PriorityFirst
	prio    bool      // HostOrder is PriorityFirst
	gap0    int64     // the gap a key is counted with before its first Done: Gap of a zero Result
	table   hostTable // T, by keyHash: refill reads no key bytes
	wait    []int32   // heap of back queues by te, te > now when pushed
	ready   []int32   // heap of back queues that may be contacted, by rank
	idle    []int32
	retired map[uint64]int64
	sweepAt int
	waitq   waitq
	closed  bool
	queued  int
	leased  int
	stats   Stats
	one     [1]URL
	dueBuf  []URL
}

var (
	_ Frontier     = (*Mercator)(nil)
	_ Checkpointer = (*Mercator)(nil)
	_ Poller       = (*Mercator)(nil)
	_ Stater       = (*Mercator)(nil)
	_ Syncer       = (*Mercator)(nil)
	_ Holder       = (*Mercator)(nil)
	_ io.Closer    = (*Mercator)(nil)
)

// NewMercator returns a Mercator frontier. It fails only when a
// persistent Store cannot be read. opts may be nil: every field takes its
// default. The options are copied, so the caller may change or reuse them
// afterwards.
func NewMercator(opts *Options) (*Mercator, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.ensureDefaults()
	m := &Mercator{
		o: o, f: o.FrontQueues, b: o.BackQueues, store: o.Store, clock: o.Clock,
		rng:     rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)),
		back:    make([]backQ, o.BackQueues),
		lv:      make([]int32, o.BackQueues*o.FrontQueues),
		flen:    make([]int, o.FrontQueues),
		llen:    make([]int, o.FrontQueues),
		table:   newHostTable(o.BackQueues),
		wait:    make([]int32, 0, o.BackQueues),
		ready:   make([]int32, 0, o.BackQueues),
		retired: make(map[uint64]int64),
		sweepAt: 1024,
		work:    o.HostOrder != EarliestContact,
		prio:    o.HostOrder == PriorityFirst,
		gap0:    int64(o.Gap(Result{})),
	}
	m.mem, _ = m.store.(*MemStore)
	for j := m.b - 1; j >= 0; j-- {
		m.back[j].hidx, m.back[j].top = -1, -1
		m.idle = append(m.idle, int32(j))
	}
	// Take over a reopened store: everything beyond the front queues goes
	// back to its front queue, since the table T is not persisted.
	for q := 0; q < m.store.Queues(); q++ {
		n := m.store.Len(q)
		m.queued += n
		if q < m.f {
			continue
		}
		for range n {
			u, ok, err := m.store.Pop(q)
			if err != nil {
				return nil, &Error{Op: "open", Err: err}
			}
			if !ok {
				break
			}
			u.Priority = m.clamp(u.Priority)
			m.one[0] = u
			if err := m.store.Push(u.Priority, m.one[:]...); err != nil {
				return nil, &Error{Op: "open", Err: err}
			}
		}
	}
	for q := range m.flen {
		m.flen[q] = m.store.Len(q)
		m.nfront += m.flen[q]
	}
	if err := m.fillIdle(m.clock.Now()); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	return m, nil
}

func (m *Mercator) clamp(p int) int { return min(max(p, 0), m.f-1) }

// Add implements Frontier: each URL is prioritized and appended to its
// front queue, or deferred when its Due lies ahead. Idle back queues are
// refilled at once. When the Store fails, the URLs before the failing
// one are in the frontier and the error says which one failed.
func (m *Mercator) Add(ctx context.Context, urls ...URL) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	defer m.wakeIfSooner(m.readyAt())
	now := m.clock.Now()
	for i := range urls {
		// m.one is the working copy: it lives in m, so handing its
		// address to the prioritizer costs no allocation.
		u := &m.one[0]
		*u = urls[i]
		if u.URL == "" {
			return &Error{Op: "add", Err: errEmptyURL}
		}
		if u.Key == "" {
			u.Key = HostKey(u.URL)
		}
		m.stats.Added++
		if u.Due.After(now) {
			if err := m.store.Defer(m.one[:]...); err != nil {
				return &Error{Op: "add", URL: u.URL, Err: err}
			}
			continue
		}
		u.Priority = m.clamp(m.o.Prioritizer.Priority(u, m.f))
		q, kh := u.Priority, keyHash(u.Key)
		j, ok := m.table.get(kh)
		if ok = ok && m.work; ok {
			// MostWork: the key has a back queue, and the URL joins it at
			// once, where the book's refill would move it later, so that
			// a host being crawled does not run dry and lose its queue
			// while its own links wait in the front queues.
			q = m.f + int(j)
		}
		if ok && u.Sitemap == 1 {
			// A sitemap robots.txt names (or /sitemap.xml) joins the
			// queue ahead of the host's pages: it tells how much the
			// host holds, and is not held up behind pages that a
			// Retry-After may keep waiting. Nested ones (level 2 and
			// up) wait their turn, so that a host's sitemap files do
			// not all come before the pages that find other hosts.
			b := &m.back[j]
			b.again = append(b.again, *u)
			m.count(j, u.Priority)
			m.queued++
			continue
		}
		// MostWork: a URL of a key that never had a back queue waits
		// for one in its priority's lane, which a refill takes first:
		// its host's robots.txt is fetched soon after the host is
		// found, not after every URL queued before it.
		lane := !ok && m.work && !m.hadQueue(kh)
		if lane {
			q = m.laneQ(u.Priority)
		}
		if m.mem != nil {
			m.mem.pushHashed(q, u, kh)
		} else if err := m.store.Push(q, m.one[:]...); err != nil {
			return &Error{Op: "add", URL: u.URL, Err: err}
		}
		if ok {
			m.count(j, u.Priority)
			m.queued++
			continue
		}
		m.flen[u.Priority]++
		m.nfront++
		m.queued++
		if lane {
			m.llen[u.Priority]++
		}
	}
	m.one[0] = URL{}
	if err := m.fillIdle(now); err != nil {
		return &Error{Op: "add", Err: err}
	}
	return nil
}

var errEmptyURL = errors.New("frontier: empty URL")

// Next implements Frontier.
func (m *Mercator) Next(ctx context.Context) (*Lease, error) {
	return next(ctx, m.clock, &m.mu, &m.waitq, m.poll)
}

// Poll implements Poller.
func (m *Mercator) Poll() (*Lease, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.poll()
}

func (m *Mercator) poll() (*Lease, time.Time, error) {
	if m.closed {
		return nil, time.Time{}, ErrClosed
	}
	now := m.clock.Now()
	if err := m.releaseDue(now); err != nil {
		return nil, time.Time{}, &Error{Op: "next", Err: err}
	}
	n := now.UnixNano()
	m.promote(n)
	if len(m.ready) > 0 {
		j := m.ready[0]
		b := &m.back[j]
		if len(b.again) > 0 {
			m.heapPop(&m.ready, true)
			l := &Lease{URL: b.again[0], Time: now, q: j, owner: m}
			m.uncount(j, l.URL.Priority)
			b.again[0] = URL{}
			b.again = b.again[1:]
			if len(b.again) == 0 {
				b.again = nil
			}
			return m.lease(b, l), time.Time{}, nil
		}
		u, ok, err := m.store.Pop(m.f + int(j))
		if err != nil {
			// j stays in the heap: the next call tries again.
			return nil, time.Time{}, &Error{Op: "next", Err: err}
		}
		m.heapPop(&m.ready, true)
		if !ok {
			// Cannot happen with a correct Store (a queue in the heap
			// is never empty); if a Store lost URLs, retire the queue
			// rather than stall on it.
			m.clearCounts(j)
			m.table.del(b.kh)
			b.key, b.kh = "", 0
			m.idle = append(m.idle, j)
			return m.poll()
		}
		m.uncount(j, u.Priority)
		return m.lease(b, &Lease{URL: u, Time: now, q: j, owner: m}), time.Time{}, nil
	}
	var ready time.Time
	if len(m.wait) > 0 {
		ready = time.Unix(0, m.back[m.wait[0]].te)
	}
	if d, ok := m.store.NextDue(); ok && (ready.IsZero() || d.Before(ready)) {
		ready = d
	}
	return nil, ready, nil
}

// lease records l, the lease of back queue b, as handed out.
func (m *Mercator) lease(b *backQ, l *Lease) *Lease {
	b.lease = l
	b.wasFresh, b.fresh = b.fresh, false
	m.queued--
	m.leased++
	m.stats.Leases++
	return l
}

// releaseDue moves revisits that became due into the front queues.
func (m *Mercator) releaseDue(now time.Time) error {
	for m.store.Deferred() > 0 {
		d, ok := m.store.NextDue()
		if !ok || d.After(now) {
			return nil
		}
		var err error
		m.dueBuf, err = m.store.Due(now, 256, m.dueBuf[:0])
		if err != nil {
			return err
		}
		for i := range m.dueBuf {
			u := &m.dueBuf[i]
			u.Priority = m.clamp(m.o.Revisit.Priority(u, m.f))
			if err := m.store.Push(u.Priority, m.dueBuf[i:i+1]...); err != nil {
				return err
			}
			m.flen[u.Priority]++
			m.nfront++
			m.queued++
		}
		clear(m.dueBuf)
		if err := m.fillIdle(now); err != nil {
			return err
		}
	}
	return nil
}

// Done implements Frontier.
func (m *Mercator) Done(l *Lease, r Result) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if l == nil || l.owner != m || int(l.q) >= m.b || l.q < 0 || m.back[l.q].lease != l {
		return ErrUnknownLease
	}
	defer m.wakeIfSooner(m.readyAt())
	j := l.q
	b := &m.back[j]
	b.lease = nil
	l.owner = nil
	m.leased--
	if r.Err != nil {
		m.stats.Errors++
	}
	now := m.clock.Now()
	gap, steady := m.o.gaps(r)
	te := r.since(now).Add(gap).UnixNano()
	if r.Skipped {
		te = b.te // not contacted: no gap
	} else {
		b.gap = int64(steady)
	}
	var derr error
	if r.Requeue {
		// Back to the head of the key's own back queue: the key keeps its
		// place in T and goes back into the heap at te below.
		u := l.URL
		u.Priority = m.clamp(u.Priority)
		b.again = slices.Insert(b.again, 0, u)
		b.fresh = b.wasFresh // robots.txt came first: the page is still to come
		m.count(j, u.Priority)
		m.queued++
	} else if !r.Revisit.IsZero() {
		m.one[0] = Revisit(l.URL, r, now)
		if err := m.store.Defer(m.one[:]...); err != nil {
			derr = &Error{Op: "done", URL: l.URL.URL, Err: err}
		}
		m.one[0] = URL{}
	}
	// The later of the gap and a time the key was held to (Hold during
	// the lease) wins.
	te = max(te, b.te)
	if m.work && te > now.UnixNano() && len(b.again) == 0 {
		if err := m.release(j); err != nil {
			derr = errors.Join(derr, &Error{Op: "done", Err: err})
		}
	}
	if len(b.again) > 0 || m.store.Len(m.f+int(j)) > 0 {
		b.te = te
		m.schedule(j, now.UnixNano())
		return derr
	}
	// The back queue is empty: its host leaves T, and the queue is refilled
	// from the front queues (IIR §20.2.3).
	m.table.del(b.kh)
	m.markHadQueue(b.kh) // again: the set remembers the latest hosts
	m.retire(b.kh, te, now)
	b.key, b.kh = "", 0
	m.clearCounts(j)
	err := m.refill(j)
	// Even when the refill failed, j must end up in the heap or idle, or
	// it would be lost to the crawl.
	if m.store.Len(m.f+int(j)) > 0 {
		m.activate(j, now)
	} else {
		m.idle = append(m.idle, j)
	}
	if err != nil {
		return &Error{Op: "done", Err: err}
	}
	return derr
}

// Hold implements Holder: key is not contacted before until. A key with
// a back queue has its te raised; any other keeps until in the table of
// retired keys, which activate reads when the key gets a back queue.
// O(log B).
func (m *Mercator) Hold(key string, until time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	kh, u := keyHash(key), until.UnixNano()
	if j, ok := m.table.get(kh); ok {
		if b := &m.back[j]; b.te < u {
			b.te = u
			switch {
			case b.hidx < 0: // leased: Done keeps the later te
			case b.ready:
				m.heapRemove(&m.ready, true, int(b.hidx))
				m.schedule(j, m.clock.Now().UnixNano())
			default:
				m.down(m.wait, false, int(b.hidx), len(m.wait))
			}
		}
		return
	}
	if m.retired[kh] < u {
		m.retire(kh, u, m.clock.Now())
	}
}

// Revisit returns u, a lease's URL, as a frontier queues it again after
// a fetch with result r at now: its History counts the fetch (and a change
// when r.Fingerprint differs from u.Fingerprint), its Fingerprint is
// r.Fingerprint, its validators r's (when r has any) and it is due at
// r.Revisit. A crawler that keeps its own
// record of pending URLs uses it to stay in step with the frontier.
func Revisit(u URL, r Result, now time.Time) URL {
	h := &u.History
	if h.Fetches > 0 && r.Fingerprint != u.Fingerprint {
		h.Changes++
	}
	h.Fetches++
	if h.First.IsZero() {
		h.First = now
	}
	h.Last = now
	u.Fingerprint = r.Fingerprint
	if r.ETag != "" || r.LastModified != "" {
		u.ETag, u.LastModified = r.ETag, r.LastModified
	}
	u.Due = r.Revisit
	return u
}

// retire remembers the te of a host that leaves the back queues, so that
// it is not contacted early if it comes back; expired entries are swept
// when the table doubles.
func (m *Mercator) retire(key uint64, te int64, now time.Time) {
	if te <= now.UnixNano() {
		return
	}
	m.retired[key] = te
	if len(m.retired) >= m.sweepAt {
		n := now.UnixNano()
		for k, t := range m.retired {
			if t <= n {
				delete(m.retired, k)
			}
		}
		m.sweepAt = max(1024, 2*len(m.retired))
	}
}

// pickFront is the biased front queue selector: a random non-empty front
// queue, chosen with probability proportional to its weight; -1 if all are
// empty. O(F).
func (m *Mercator) pickFront() int {
	total := 0.0
	last := -1
	for q, n := range m.flen {
		if n > 0 {
			total += m.o.Weights[q]
			last = q
		}
	}
	if last < 0 {
		return -1
	}
	r := m.rng.Float64() * total
	for q, n := range m.flen {
		if n > 0 {
			r -= m.o.Weights[q]
			if r < 0 {
				return q
			}
		}
	}
	return last
}

// refill fills the empty back queue j from the front queues: a URL whose
// host already has a back queue goes there and we reach back for another,
// until a URL of a new host lands in j or the front queues run dry. The
// biased selector chooses a priority; its lane (the URLs of keys that had
// no back queue yet when they were added, MostWork) goes before its front
// queue, which gets every fourth turn. A lane URL whose host has had a
// back queue since, and gave it up, moves to the front queue.
func (m *Mercator) refill(j int32) error {
	for {
		q := m.pickFront()
		if q < 0 {
			return nil
		}
		src, lane := q, m.llen[q] > 0
		if lane && m.flen[q] > m.llen[q] {
			// Both hold URLs: the lane goes first, and the front queue
			// every lanesPerFront+1-th time, so that a crawl finding
			// new hosts all the time still reaches the URLs of the
			// hosts it has contacted. The front queue's head is often
			// a host that just gave its queue up and must wait out its
			// gap; the lane's, a host never contacted.
			if m.laneRun >= lanesPerFront {
				lane, m.laneRun = false, 0
			} else {
				m.laneRun++
			}
		}
		if lane {
			src = m.laneQ(q)
		}
		if m.mem != nil && m.mem.Len(src) > 0 {
			// Front queue (or lane) src holds URLs of priority q.
			m.took(q, lane)
			kh := m.mem.headKeyHash(src)
			if k, ok := m.table.get(kh); ok {
				m.mem.move(src, m.f+int(k))
				m.count(k, q)
				continue
			}
			if lane && m.hadQueue(kh) {
				// Its host has had a back queue since, and gave it up:
				// the URL waits in the front queue like its host's others.
				m.mem.move(src, q)
				m.untook(q)
				continue
			}
			m.table.put(kh, j)
			m.markHadQueue(kh)
			m.back[j].key, m.back[j].kh = m.mem.headKey(src), kh
			m.mem.move(src, m.f+int(j))
			m.count(j, q)
			return nil
		}
		v, ok, err := m.store.Pop(src)
		if err != nil {
			return err
		}
		if !ok {
			// The store disagrees with the counts; trust the store.
			n := m.flen[q] - m.llen[q] // the front queue's part
			if lane {
				n = m.llen[q]
				m.llen[q] = 0
			}
			m.flen[q] -= n
			m.nfront -= n
			continue
		}
		m.took(q, lane)
		m.one[0] = v
		kh := keyHash(v.Key)
		p := m.clamp(v.Priority)
		if k, ok := m.table.get(kh); ok {
			err = m.store.Push(m.f+int(k), m.one[:]...)
			m.one[0] = URL{}
			if err != nil {
				return err
			}
			m.count(k, p)
			continue
		}
		if lane && m.hadQueue(kh) {
			err = m.store.Push(q, m.one[:]...)
			m.one[0] = URL{}
			if err != nil {
				return err
			}
			m.untook(q)
			continue
		}
		m.table.put(kh, j)
		m.markHadQueue(kh)
		m.back[j].key, m.back[j].kh = v.Key, kh
		err = m.store.Push(m.f+int(j), m.one[:]...)
		m.one[0] = URL{}
		if err == nil {
			m.count(j, p)
		}
		return err
	}
}

// took counts a URL of priority q taken from its front queue, or from its
// lane.
func (m *Mercator) took(q int, lane bool) {
	m.flen[q]--
	m.nfront--
	if lane {
		m.llen[q]--
	}
}

// untook counts a URL of priority q moved from its lane to its front
// queue; the move does not count as the lane's turn.
func (m *Mercator) untook(q int) {
	m.flen[q]++
	m.nfront++
	m.laneRun = max(m.laneRun-1, 0)
}

// lanesPerFront is how many refills the lanes get in a row while their
// front queues hold URLs too.
const lanesPerFront = 3

// laneQ is the store queue of priority p's lane: after the front and the
// back queues, so that a store written with other numbers of back queues
// (or by a version without lanes) reopens as any store does, every queue
// beyond the front ones going back to its front queue.
func (m *Mercator) laneQ(p int) int { return m.f + m.b + p }

// hadQueue reports whether key hash kh has had a back queue.
func (m *Mercator) hadQueue(kh uint64) bool { return m.known.has(kh) }

// markHadQueue records that kh has a back queue (MostWork).
func (m *Mercator) markHadQueue(kh uint64) {
	if m.work {
		m.known.add(kh)
	}
}

// activate puts the freshly refilled back queue j into the heap, at the
// later of now and its host's remembered te.
func (m *Mercator) activate(j int32, now time.Time) {
	b := &m.back[j]
	n := now.UnixNano()
	b.te, b.fresh, b.gap = n, true, m.gap0
	if len(m.retired) > 0 {
		if t, ok := m.retired[b.kh]; ok {
			b.te, b.fresh = max(b.te, t), false
			delete(m.retired, b.kh)
		}
	}
	m.schedule(j, n)
}

// fillIdle refills idle back queues while the front queues hold URLs.
func (m *Mercator) fillIdle(now time.Time) error {
	for len(m.idle) > 0 && m.pickFront() >= 0 {
		j := m.idle[len(m.idle)-1]
		m.idle = m.idle[:len(m.idle)-1]
		if err := m.refill(j); err != nil {
			m.idle = append(m.idle, j)
			return err
		}
		if m.store.Len(m.f+int(j)) == 0 {
			m.idle = append(m.idle, j)
			return nil
		}
		m.activate(j, now)
	}
	return nil
}

// readyAt returns when a waiting Next may next succeed: the heap root's
// te or the earliest revisit, math.MaxInt64 when there is neither.
func (m *Mercator) readyAt() int64 {
	r := int64(math.MaxInt64)
	if len(m.ready) > 0 {
		r = m.back[m.ready[0]].te
	}
	if len(m.wait) > 0 {
		r = min(r, m.back[m.wait[0]].te)
	}
	if d, ok := m.store.NextDue(); ok {
		r = min(r, d.UnixNano())
	}
	return r
}

// wakeIfSooner wakes the waiting Next calls when something may be ready
// before the time they are sleeping towards (before, the ready time they
// computed): waking them on every Add and Done would make 64 idle workers
// re-poll 64 times per fetch.
func (m *Mercator) wakeIfSooner(before int64) {
	if m.waitq.waiting() && m.readyAt() < before {
		m.waitq.sooner()
	}
}

// Stats implements Stater. O(1).
func (m *Mercator) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Queued = m.queued
	s.Leased = m.leased
	s.Waiting = m.store.Deferred()
	s.Keys = m.table.len()
	return s
}

// Checkpoint implements Checkpointer: it writes every queued URL, every
// outstanding lease's URL and every scheduled revisit to w in the format
// Restore reads. It holds the frontier's lock while writing: O(n).
func (m *Mercator) Checkpoint(w io.Writer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	return writeCheckpoint(w, m.store, m.held())
}

// held returns the leased and requeued URLs, which are out of the store.
func (m *Mercator) held() []URL {
	var held []URL
	for j := range m.back {
		if l := m.back[j].lease; l != nil {
			held = append(held, l.URL)
		}
		held = append(held, m.back[j].again...)
	}
	return held
}

// Close stops the frontier: blocked and later calls return ErrClosed.
// URLs still leased go back to their front queue, so a persistent Store
// keeps them, and the Store is closed.
func (m *Mercator) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.closed = true
	m.waitq.all()
	var err error
	for j := range m.back {
		b := &m.back[j]
		if l := b.lease; l != nil {
			b.lease = nil
			m.one[0] = l.URL
			err = errors.Join(err, m.store.Push(m.clamp(l.URL.Priority), m.one[:]...))
		}
		for _, u := range b.again {
			m.one[0] = u
			err = errors.Join(err, m.store.Push(m.clamp(u.Priority), m.one[:]...))
		}
		b.again = nil
	}
	m.one[0] = URL{}
	return errors.Join(err, m.store.Close())
}

// Sync implements Syncer: with a DurableStore, the queued URLs, the
// scheduled revisits and the outstanding leases become durable; a crash
// after it loses only what changed since. O(queues) plus the store's
// sync.
func (m *Mercator) Sync() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	return syncStore(m.store, m.held)
}
