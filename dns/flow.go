package dns

import "time"

// Flow control of the queries to one nameserver. A crawler that has just
// fetched its seeds hands the resolver hundreds of new hosts at once; sent
// in one go, their A and AAAA queries arrive as a burst of thousands of
// datagrams. A socket's receive queue on a stock Linux kernel (rmem_max
// 212992, so at most 425,984 bytes whatever SO_RCVBUF asks for) holds
// about 512 small datagrams; the server's queue overflows, the kernel
// drops the rest, and every lost query waited out a whole attempt
// timeout. Two mechanisms, both per nameserver, keep that from happening
// and recover quickly when a server drops queries anyway:
//
//   - A window bounds the queries that may still sit in the server's
//     receive queue: those sent less than windowHold ago (or their
//     attempt's wait, if shorter) and not answered yet. It starts at
//     initialWindow and grows by one with each answer up to
//     Options.MaxInFlight (TCP's slow start), so that the first burst
//     goes out at the pace answers come back. Queries beyond it wait, in
//     order, for a place; retransmissions go before first attempts, so
//     that a lost query is not asked again only after the whole burst.
//     A query that takes long to answer (a slow name, a lost packet)
//     gives its place up after windowHold: slow names delay others by
//     at most that, and a burst of them is paced like any other. The
//     window never shrinks: on a loaded machine most timeouts are
//     answers that come late, not losses, and halving the window on
//     each (as TCP does) starved the waiting lookups for seconds.
//   - The retransmission timeout is adaptive (RFC 6298, as unbound keeps
//     one per server): a smoothed round-trip time and its variation give
//     RTO = SRTT + 4·RTTVAR, clamped to [Options.MinTimeout,
//     Options.Timeout]. Until the first answer it is Options.Timeout.
//     When it falls to half the value waiters may have started with, they
//     are told (rtoDrop), so that a query sent before the first answer
//     does not wait out the initial timeout.
//
// All fields are guarded by udpConn.mu.
type flow struct {
	minRTO, maxRTO time.Duration
	srtt, rttvar   time.Duration
	rto            time.Duration
	sampled        bool
	announced      time.Duration // the RTO waiters were last told of
	drop           chan struct{} // closed when rto falls to announced/2

	maxWnd   int
	cwnd     int
	inflight int
	retries  fifo // slots of retransmissions, served first
	firsts   fifo // slots of first attempts
}

// initialWindow is the window of a new nameserver: the queries sent
// before the first answer.
const initialWindow = 32

// windowHold is the longest a query keeps its place in the window without
// an answer. A server that keeps up has read it by then.
const windowHold = 100 * time.Millisecond

// slot is a place in the window asked for by a query about to be sent.
type slot struct {
	ready   chan struct{} // closed when granted
	granted bool
	gone    bool // the asker gave up before the grant
}

func newFlow(minRTO, maxRTO time.Duration, maxWnd int) flow {
	minRTO = min(minRTO, maxRTO)
	return flow{
		minRTO: minRTO, maxRTO: maxRTO, rto: maxRTO, announced: maxRTO,
		drop:   make(chan struct{}),
		maxWnd: maxWnd, cwnd: min(initialWindow, maxWnd),
	}
}

// sample feeds one round-trip time into the estimator (RFC 6298 §2).
// Every query has an ID of its own, so an answer always tells which send
// it answers: Karn's ambiguity does not arise and late answers to
// retransmitted names count too.
func (f *flow) sample(r time.Duration) {
	r = max(r, 0)
	if !f.sampled {
		f.srtt, f.rttvar, f.sampled = r, r/2, true
	} else {
		d := f.srtt - r
		if d < 0 {
			d = -d
		}
		f.rttvar = (3*f.rttvar + d) / 4
		f.srtt = (7*f.srtt + r) / 8
	}
	f.rto = min(max(f.srtt+4*f.rttvar, f.minRTO), f.maxRTO)
	switch {
	case f.rto > f.announced:
		f.announced = f.rto
	case f.rto <= f.announced/2:
		f.announced = f.rto
		close(f.drop)
		f.drop = make(chan struct{})
	}
}

// take asks for a place in the window for a query, a retransmission if
// retry: nil if one was free (it is taken), else a slot whose ready
// channel is closed when it is granted.
func (f *flow) take(retry bool) *slot {
	if f.retries.empty() && f.firsts.empty() && f.inflight < f.cwnd {
		f.inflight++
		return nil
	}
	s := &slot{ready: make(chan struct{})}
	if retry {
		f.retries.push(s)
	} else {
		f.firsts.push(s)
	}
	return s
}

// cancel gives up a slot asked for with take: a granted place is freed.
func (f *flow) cancel(s *slot) {
	if s.granted {
		f.release()
		return
	}
	s.gone = true
}

// release frees a place: the query was answered, forgotten, or has
// waited windowHold.
func (f *flow) release() {
	f.inflight--
	f.grant()
}

// answered widens the window after an answer.
func (f *flow) answered() {
	f.cwnd = min(f.cwnd+1, f.maxWnd)
	f.grant()
}

// grant hands free places to waiting slots: retransmissions first, each
// kind oldest first.
func (f *flow) grant() {
	for f.inflight < f.cwnd {
		s := f.retries.pop()
		if s == nil {
			s = f.firsts.pop()
		}
		if s == nil {
			return
		}
		s.granted = true
		f.inflight++
		close(s.ready)
	}
}

// fifo is a queue of slots.
type fifo struct {
	q    []*slot
	head int // q[head:] wait
}

func (q *fifo) empty() bool { return q.head == len(q.q) }

func (q *fifo) push(s *slot) { q.q = append(q.q, s) }

// pop removes and returns the oldest slot not given up, or nil.
func (q *fifo) pop() *slot {
	for q.head < len(q.q) {
		s := q.q[q.head]
		q.q[q.head] = nil
		q.head++
		if q.head == len(q.q) {
			q.q, q.head = q.q[:0], 0
		} else if q.head > 1024 && q.head > len(q.q)/2 {
			n := copy(q.q, q.q[q.head:])
			clear(q.q[n:])
			q.q, q.head = q.q[:n], 0
		}
		if !s.gone {
			return s
		}
	}
	return nil
}
