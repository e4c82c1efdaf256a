package frontier

import (
	"fmt"
	"math/bits"
)

// HostOrder is how a Mercator frontier chooses among hosts
// (Options.HostOrder): which host a free worker contacts, and which hosts
// hold the B back queues.
//
// The book's Mercator (IIR §20.2.3) serves the back queue whose host may
// be contacted earliest and refills a back queue only when it runs
// empty; URLs reach a back queue only through the front queues. Its
// crawl ends when its largest host, found late and then served one page
// per gap behind the others, is done. BUbiNG (Boldi et al.) keeps every
// host with URLs on its workbench, ordered by when it may next be
// contacted, and fetches robots.txt first when a host is created; it
// does not look at how much a host holds. MostWork takes both and adds
// the size: the end of a crawl is set by the host with the most pages
// left times its gap, so that host must be served at every gap, from as
// early as possible, and a host that merely waits out its gap must not
// keep a back queue from a host that could be contacted now.
type HostOrder int

const (
	// MostWork, the default, orders hosts so that a crawl ends as early
	// as its politeness allows:
	//
	//   - Among the back queues whose host may be contacted now, the next
	//     lease goes to a host whose first page has not been fetched yet
	//     (its first lease fetches robots.txt, its second the page that
	//     shows how big it is and which hosts it links to), then to the
	//     host that is most overdue: due at its earliest contact time
	//     less its URLs queued times its gap. A host holding n URLs is
	//     due n gaps early, because draining it takes n gaps, and a host
	//     with few URLs that has waited longer than that goes first. So
	//     the hosts with the most work are served at every gap, and a
	//     host with little is delayed, never starved; neither waits for
	//     an idle worker. The Prioritizer orders the URLs of a host and
	//     decides which hosts get back queues (front queues and lanes,
	//     below), as in the book, where the back queue heap knows no
	//     priority; PriorityFirst ranks ready hosts by it too.
	//   - A URL whose host has a back queue joins that queue at once,
	//     instead of waiting in the front queues for a refill to move it
	//     there, so a host being crawled keeps its queue while its own
	//     links come in, and its queue length is its known work. A
	//     sitemap robots.txt names (URL.Sitemap 1) joins it ahead of the
	//     host's pages, after a URL handed back with Result.Requeue: it
	//     shows how much the host holds, and it is not held up behind
	//     pages a Retry-After keeps waiting.
	//   - A URL of a key that has never had a back queue waits for one
	//     in its priority's lane, not at the tail of the front queue.
	//     When a back queue comes free, the lane goes first and the
	//     front queue every fourth time: a host found while thousands of
	//     URLs wait for a back queue has its robots.txt fetched soon,
	//     not after them, and a crawl that keeps finding hosts still
	//     serves the hosts it has contacted. The keys that have had a
	//     back queue are remembered in two generations of 1 MiB bit
	//     sets: the latest half million to million hosts to get or give
	//     up a queue. A key whose bit another key set (at most 12% of
	//     them, however large the crawl) is taken for one of them, and
	//     waits in the front queue; a key forgotten is new again.
	//   - A host that must wait out its gap gives its back queue up when
	//     other hosts wait for one and it holds at most 64 URLs: they go
	//     back to their front queues, the host keeps its next contact
	//     time, and the queue is refilled at once. Hosts with more work
	//     keep their queues; with the default B = 3 × workers and gaps of
	//     K = 10 fetch times, a queue kept through every gap would leave
	//     most workers idle.
	//
	// Politeness is unchanged: one lease per host, the same gaps.
	MostWork HostOrder = iota
	// EarliestContact is the book's Mercator: the back queue whose host
	// may be contacted earliest is served first, and URLs reach a back
	// queue only when a refill moves them from the front queues.
	EarliestContact
	// PriorityFirst is MostWork, except that among the back queues whose
	// host may be contacted now, the one holding a URL of the highest
	// priority goes first, before hosts not yet fetched and hosts with
	// more work. For a focused crawl, whose Prioritizer scores pages by
	// relevance and whose best pages must not wait behind large hosts.
	// With the default Depth it is breadth first across hosts, and a
	// crawl takes longer: a host found deep in the link graph, however
	// large, waits behind every shallower page.
	PriorityFirst
)

// String returns "MostWork", "EarliestContact" or "PriorityFirst".
func (o HostOrder) String() string {
	switch o {
	case MostWork:
		return "MostWork"
	case PriorityFirst:
		return "PriorityFirst"
	case EarliestContact:
		return "EarliestContact"
	}
	return fmt.Sprintf("HostOrder(%d)", int(o))
}

// maxRelease is the most URLs a host may hold and still give its back
// queue up while it waits out its gap: moving them costs O(maxRelease)
// per Done. A host with more keeps its queue: it is among the largest,
// whose pages set the end of the crawl.
const maxRelease = 64

// release returns the URLs of back queue j, whose host has just been
// served and now waits out its gap, to their front queues when other
// hosts wait for a back queue (MostWork). Done then retires the host,
// with its te, and refills j as it does any empty queue. j holds no
// URL in again (those must come out first) and is in neither heap.
func (m *Mercator) release(j int32) error {
	q := m.f + int(j)
	k := m.store.Len(q)
	if k == 0 || k > maxRelease || len(m.idle) > 0 || m.nfront == 0 {
		return nil
	}
	for range k {
		var p int
		if m.mem != nil {
			p = m.clamp(m.mem.headPrio(q))
			m.mem.move(q, p)
		} else {
			u, ok, err := m.store.Pop(q)
			if err != nil || !ok {
				m.recount(j)
				return err
			}
			p = m.clamp(u.Priority)
			m.one[0] = u
			err = m.store.Push(p, m.one[:]...)
			m.one[0] = URL{}
			if err != nil {
				m.recount(j)
				return err
			}
		}
		m.flen[p]++
		m.nfront++
	}
	m.clearCounts(j)
	return nil
}

// recount makes the count of back queue j agree with the store after a
// failed release; the priorities counted may then be too high, which
// only affects the order.
func (m *Mercator) recount(j int32) {
	b := &m.back[j]
	b.n = int32(m.store.Len(m.f + int(j)))
	b.n += int32(len(b.again))
	if b.n == 0 {
		m.clearCounts(j)
	}
}

// promote moves the back queues whose te has come (te ≤ now, in
// nanoseconds) from the wait heap to the ready heap. Each queue moves
// once per lease: O(log B) amortized.
func (m *Mercator) promote(now int64) {
	for len(m.wait) > 0 && m.back[m.wait[0]].te <= now {
		m.heapPush(&m.ready, true, m.heapPop(&m.wait, false))
	}
}

// schedule puts back queue j, which holds URLs and is in neither heap,
// into the ready heap if its te has come, else into the wait heap.
func (m *Mercator) schedule(j int32, now int64) {
	if m.back[j].te <= now {
		m.heapPush(&m.ready, true, j)
	} else {
		m.heapPush(&m.wait, false, j)
	}
}

// count records a URL of priority p joining back queue j: O(1), plus
// O(log B) when j waits in the ready heap, whose rank it raises.
func (m *Mercator) count(j int32, p int) {
	b := &m.back[j]
	b.n++
	m.lv[int(j)*m.f+p]++
	b.top = max(b.top, int32(p))
	if b.ready && b.hidx >= 0 {
		m.up(m.ready, true, int(b.hidx))
	}
}

// uncount records a URL of priority p leaving back queue j (leased).
// O(F) when it was the last of the highest priority, else O(1); j is in
// neither heap.
func (m *Mercator) uncount(j int32, p int) {
	b := &m.back[j]
	b.n--
	lv := m.lv[int(j)*m.f : int(j+1)*m.f]
	p = m.clamp(p)
	if lv[p] > 0 {
		lv[p]--
	}
	for b.top >= 0 && lv[b.top] == 0 {
		b.top--
	}
	if b.n <= 0 {
		m.clearCounts(j)
	}
}

// clearCounts forgets the URLs counted for back queue j. O(F).
func (m *Mercator) clearCounts(j int32) {
	b := &m.back[j]
	b.n, b.top = 0, -1
	clear(m.lv[int(j)*m.f : int(j+1)*m.f])
}

// The two heaps of back queue numbers (container/heap's algorithm on a
// typed slice, to avoid interface boxing): the wait heap orders the
// queues whose te lies ahead by te, Mercator's timing heap; the ready
// heap orders the queues that may be contacted now by rank (see less).

// less orders two back queues of the ready heap (ready) or of the wait
// heap: the rank of MostWork or PriorityFirst (see HostOrder), te
// otherwise.
func (m *Mercator) less(ready bool, a, b int32) bool {
	x, y := &m.back[a], &m.back[b]
	if ready && m.work {
		if m.prio && x.top != y.top {
			return x.top > y.top
		}
		if x.fresh != y.fresh {
			return x.fresh
		}
		if dx, dy := x.due(), y.due(); dx != dy {
			return dx < dy
		}
	}
	return x.te < y.te
}

// maxLead bounds backQ.due's lead, a host's URLs times its gap, so that te
// less it cannot overflow: about 73 years.
const maxLead = int64(1) << 61

// due is when MostWork counts b as due (see HostOrder): te less the time
// its queued URLs take at its gap.
func (b *backQ) due() int64 {
	hi, lead := bits.Mul64(uint64(max(b.n, 0)), uint64(max(b.gap, 0)))
	if hi != 0 || lead > uint64(maxLead) {
		lead = uint64(maxLead)
	}
	return b.te - int64(lead)
}

func (m *Mercator) swap(h []int32, a, b int) {
	h[a], h[b] = h[b], h[a]
	m.back[h[a]].hidx = int32(a)
	m.back[h[b]].hidx = int32(b)
}

func (m *Mercator) heapPush(h *[]int32, ready bool, j int32) {
	*h = append(*h, j)
	b := &m.back[j]
	b.hidx, b.ready = int32(len(*h)-1), ready
	m.up(*h, ready, len(*h)-1)
}

func (m *Mercator) heapPop(h *[]int32, ready bool) int32 {
	return m.heapRemove(h, ready, 0)
}

// heapRemove removes the element at index i of heap h and returns it.
func (m *Mercator) heapRemove(h *[]int32, ready bool, i int) int32 {
	n := len(*h) - 1
	if n != i {
		m.swap(*h, i, n)
		if !m.down(*h, ready, i, n) {
			m.up(*h, ready, i)
		}
	}
	j := (*h)[n]
	*h = (*h)[:n]
	m.back[j].hidx, m.back[j].ready = -1, false
	return j
}

func (m *Mercator) up(h []int32, ready bool, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !m.less(ready, h[i], h[p]) {
			break
		}
		m.swap(h, i, p)
		i = p
	}
}

// down sifts element i of h[:n] down and reports whether it moved.
func (m *Mercator) down(h []int32, ready bool, i0, n int) bool {
	i := i0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && m.less(ready, h[r], h[l]) {
			c = r
		}
		if !m.less(ready, h[c], h[i]) {
			break
		}
		m.swap(h, i, c)
		i = c
	}
	return i > i0
}
