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
//   - A window bounds the first attempts that may still sit in the
//     server's receive queue: those sent less than windowHold ago (or
//     their attempt's wait, if shorter) and not answered yet. It starts
//     at initialWindow and grows by one with each answer up to
//     Options.MaxInFlight (TCP's slow start), so that the first burst
//     goes out at the pace answers come back. Queries beyond it wait, in
//     order. A query that takes long to answer (a slow name, a lost
//     packet) gives its place up after windowHold: slow names delay
//     others by at most that, and a burst of them is paced like any
//     other. Retransmissions do not wait: they go out when their
//     lookup's own timeout says, spread in time like the queries they
//     repeat. The window never shrinks: on a loaded machine most
//     timeouts are answers that come late, not losses, and halving the
//     window on each (as TCP does) starved the waiting lookups for
//     seconds.
//
//     The window is a buffered channel, a place being a value in it:
//     a query waiting for a place is parked by the runtime and handed
//     the place directly when one frees. A mutex-guarded queue made
//     every query take the socket's lock once more, and on a starved
//     machine (load 12 on 2 cores) hundreds of goroutines then queued on
//     that lock, the answers' reader among them, for seconds.
//
//   - The retransmission timeout is adaptive (RFC 6298, as unbound keeps
//     one per server): a smoothed round-trip time and its variation give
//     RTO = SRTT + 4·RTTVAR, clamped to [Options.MinTimeout,
//     Options.Timeout]. Until the first answer it is Options.Timeout.
//     When it falls to half the value waiters may have started with, they
//     are told (drop), so that a query sent before the first answer
//     does not wait out the initial timeout.
//
// The fields but sem are guarded by udpConn.mu.
type flow struct {
	minRTO, maxRTO time.Duration
	srtt, rttvar   time.Duration
	rto            time.Duration
	sampled        bool
	announced      time.Duration // the RTO waiters were last told of
	drop           chan struct{} // closed when rto falls to announced/2

	// sem holds a value for each place taken: by a query, or reserved
	// until slow start opens it. A query takes a place by sending to it
	// and frees one by receiving from it.
	sem      chan struct{}
	reserved int
}

// initialWindow is the window of a new nameserver: the queries sent
// before the first answer.
const initialWindow = 32

// windowHold is the longest a query keeps its place in the window without
// an answer. A server that keeps up has read it by then.
const windowHold = 100 * time.Millisecond

func newFlow(minRTO, maxRTO time.Duration, maxWnd int) flow {
	minRTO = min(minRTO, maxRTO)
	f := flow{
		minRTO: minRTO, maxRTO: maxRTO, rto: maxRTO, announced: maxRTO,
		drop:     make(chan struct{}),
		sem:      make(chan struct{}, maxWnd),
		reserved: maxWnd - min(initialWindow, maxWnd),
	}
	for range f.reserved {
		f.sem <- struct{}{}
	}
	return f
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

// answered widens the window after an answer, while places are reserved.
// It never blocks: sem holds at least the reserved values.
func (f *flow) answered() {
	if f.reserved > 0 {
		f.reserved--
		<-f.sem
	}
}
