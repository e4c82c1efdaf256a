package dns

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mdns "github.com/miekg/dns"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// udpConn multiplexes the queries to one nameserver over one UDP socket, as
// Mercator did (IIR §20.2.2): any number of lookups send their query and
// wait on their own channel; a single reader goroutine hands each response to
// the waiter whose query ID and question it matches. A lookup blocked on a
// slow name therefore never delays another, and thousands of queries in
// flight cost one socket and one goroutine.
//
// How many queries are on the wire at once is bounded by a window, and
// when an unanswered query counts as lost by an adaptive timeout (see
// flow): a burst of new names is paced instead of overflowing the
// server's receive queue, and a query lost anyway is asked again after
// a few round-trip times rather than after a fixed timeout.
//
// Query IDs are random among the free ones; responses whose ID, question or
// QR bit do not match a waiter are dropped. A single socket means a single
// source port, which makes off-path spoofing easier than with per-query
// ports; the crawler accepts that for speed.
type udpConn struct {
	server string
	conn   *net.UDPConn
	batch  batchConn
	bufLen int // receive buffer per datagram

	// Writes are combined: a goroutine with a packet to send appends it to
	// queue; if no other goroutine is writing, it becomes the writer and
	// sends everything queued, in batches (sendmmsg), until the queue is
	// empty. Under load, one system call carries many queries.
	wmu     sync.Mutex
	queue   [][]byte
	spare   [][]byte
	writing bool
	out     []ipv4.Message // the writer's, reused

	mu      sync.Mutex
	pending map[uint16]*waiter
	closed  bool
	flow    flow
	read1   chan struct{} // closed when the reader has read a batch; nil: nobody waits

	// delivering is set while the reader holds answers read from the
	// socket and not all handed to their waiters.
	delivering atomic.Bool

	done chan struct{}   // closed when the reader has returned
	gate <-chan struct{} // tests': see dialUDPGated
}

// waiter is one query sent and not yet answered or forgotten.
type waiter struct {
	name    string // FQDN asked
	qtype   uint16
	attempt int            // of its lookup, reported with the result
	ch      chan udpResult // room for one result of each query sent on it
	sent    time.Time      // zero if never sent (tests)
	slot    bool           // holds a place in the window
}

type udpResult struct {
	msg     *mdns.Msg
	err     error
	attempt int // waiter.attempt
}

// maxPending bounds the queries in flight on one socket: the 16-bit ID
// space, with headroom so that finding a free ID stays cheap.
const maxPending = 60000

// batchConn reads and writes many datagrams per system call (recvmmsg and
// sendmmsg on Linux; one at a time elsewhere).
type batchConn interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

// udpBatch is the number of datagrams read or written per system call.
const udpBatch = 32

// dialUDP connects to server; bufLen bounds the size of answers accepted,
// fl is the flow control of the queries (newFlow).
func dialUDP(server string, bufLen int, fl flow) (*udpConn, error) {
	return dialUDPGated(server, bufLen, fl, nil)
}

// dialUDPGated is dialUDP whose reader, if gate is not nil, takes a value
// from gate (or finds it closed) before each read: tests hold the reader
// back as a starved machine does.
func dialUDPGated(server string, bufLen int, fl flow, gate <-chan struct{}) (*udpConn, error) {
	raddr, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		return nil, err
	}
	// Best effort: room for bursts of answers (capped by rmem_max; the
	// window keeps the answers in flight well below a stock kernel's cap).
	_ = conn.SetReadBuffer(4 << 20)
	u := &udpConn{
		server:  server,
		conn:    conn,
		batch:   ipv4.NewPacketConn(conn),
		bufLen:  max(bufLen, 4096),
		pending: make(map[uint16]*waiter),
		flow:    fl,
		done:    make(chan struct{}),
		gate:    gate,
	}
	if raddr.IP.To4() == nil {
		u.batch = ipv6.NewPacketConn(conn)
	}
	go u.read()
	return u, nil
}

// places returns the channel a query sends to to take a place in the
// window, and receives from (release) to free it. It may block; while it
// does, the query may give up.
func (u *udpConn) places() chan struct{} { return u.flow.sem }

// start sends q (its ID is set here) as attempt number attempt of a
// lookup; the response, or an error that fails every query of the socket,
// is sent on ch, which needs room for it. If slot, the caller holds a
// place in the window (places), which the query takes over: an answer,
// release, forget or a failure frees it. The query stays registered, and
// its answer welcome, until forget. start returns the server's retransmission
// timeout as the query left.
func (u *udpConn) start(q *mdns.Msg, attempt int, ch chan udpResult, slot bool) (uint16, *waiter, rtoState, error) {
	w := &waiter{name: q.Question[0].Name, qtype: q.Question[0].Qtype, attempt: attempt, ch: ch}
	u.mu.Lock()
	if u.closed || len(u.pending) >= maxPending {
		closed := u.closed
		u.mu.Unlock()
		if slot {
			<-u.flow.sem
		}
		if closed {
			return 0, nil, rtoState{}, ErrClosed
		}
		return 0, nil, rtoState{}, errBusy
	}
	id := uint16(rand.Uint32())
	for u.pending[id] != nil {
		id = uint16(rand.Uint32())
	}
	u.pending[id] = w
	w.slot, w.sent = slot, time.Now()
	rto := rtoState{u.flow.rto, u.flow.drop}
	u.mu.Unlock()

	q.Id = id
	b, err := q.Pack()
	if err != nil {
		u.forget(id, w)
		return 0, nil, rtoState{}, err
	}
	u.send(b)
	return id, w, rto, nil
}

// release frees w's place in the window, if it still holds one: w has
// waited windowHold or its whole wait. w stays registered: a late answer
// is still taken.
func (u *udpConn) release(w *waiter) {
	u.mu.Lock()
	held := w.slot
	w.slot = false
	u.mu.Unlock()
	if held {
		<-u.flow.sem
	}
}

// rtoState is a nameserver's retransmission timeout and the channel
// closed when it has dropped enough that waiters should recompute their
// waits.
type rtoState struct {
	rto  time.Duration
	drop <-chan struct{}
}

// rto returns the server's retransmission timeout.
func (u *udpConn) rto() rtoState {
	u.mu.Lock()
	defer u.mu.Unlock()
	return rtoState{u.flow.rto, u.flow.drop}
}

// exchange sends q and waits for the matching response for at most wait
// (then it returns context.DeadlineExceeded) or until ctx is done: one
// query on its own, without retries. It is safe for concurrent use.
func (u *udpConn) exchange(ctx context.Context, q *mdns.Msg, wait time.Duration) (*mdns.Msg, error) {
	select {
	case u.places() <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ch := make(chan udpResult, 1)
	id, w, _, err := u.start(q, 0, ch, true)
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.msg, r.err
	case <-t.C:
		u.forget(id, w)
		return nil, context.DeadlineExceeded
	case <-ctx.Done():
		u.forget(id, w)
		return nil, ctx.Err()
	}
}

// send queues packet b and, unless another goroutine is writing already,
// writes the queue out. A write error fails the waiters only when it says
// the server is unreachable; otherwise the queries time out.
func (u *udpConn) send(b []byte) {
	u.wmu.Lock()
	u.queue = append(u.queue, b)
	if u.writing {
		u.wmu.Unlock()
		return
	}
	u.writing = true
	for len(u.queue) > 0 {
		batch := u.queue
		u.queue = u.spare[:0]
		u.wmu.Unlock()
		u.write(batch)
		clear(batch)
		u.wmu.Lock()
		u.spare = batch[:0]
	}
	u.writing = false
	u.wmu.Unlock()
}

// write sends packets; only the current writer calls it.
func (u *udpConn) write(packets [][]byte) {
	for len(packets) > 0 {
		n := min(len(packets), udpBatch)
		u.out = u.out[:0]
		for _, p := range packets[:n] {
			u.out = append(u.out, ipv4.Message{Buffers: [][]byte{p}})
		}
		k, err := u.batch.WriteBatch(u.out, 0)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				u.failAll(errConnRefused)
			}
			k = max(k, 1) // skip the packet that failed
		}
		packets = packets[k:]
	}
}

// forget unregisters a query: its answer, if one comes, is dropped.
func (u *udpConn) forget(id uint16, w *waiter) {
	u.mu.Lock()
	if u.pending[id] == w {
		delete(u.pending, id)
	}
	held := w.slot
	w.slot = false
	u.mu.Unlock()
	if held {
		<-u.flow.sem
	}
}

// read is the socket's reader goroutine; it reads answers in batches
// (recvmmsg).
func (u *udpConn) read() {
	defer close(u.done)
	in := make([]ipv4.Message, udpBatch)
	for i := range in {
		in[i].Buffers = [][]byte{make([]byte, u.bufLen)}
	}
	for {
		if u.gate != nil {
			<-u.gate
		}
		n, err := u.batch.ReadBatch(in, 0)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				// ICMP port unreachable: nobody listens there. Fail what
				// waits so that the lookups fail over at once.
				u.failAll(errConnRefused)
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				u.failAll(ErrClosed)
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			u.failAll(err)
			return
		}
		u.delivering.Store(true)
		for i := range n {
			u.deliver(in[i].Buffers[0][:in[i].N])
		}
		u.mu.Lock()
		u.delivering.Store(false)
		if u.read1 != nil {
			close(u.read1)
			u.read1 = nil
		}
		u.mu.Unlock()
	}
}

// behind reports whether answers have come that the reader has not
// handed over yet: datagrams unread in the socket (where the system
// tells), or a batch read and not all delivered.
func (u *udpConn) behind() bool {
	return u.delivering.Load() || u.unread()
}

// readSignal returns a channel closed when the reader has read and
// delivered its next batch of answers.
func (u *udpConn) readSignal() <-chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.read1 == nil {
		u.read1 = make(chan struct{})
	}
	return u.read1
}

// deliver hands one received packet to its waiter, if any.
func (u *udpConn) deliver(p []byte) {
	if len(p) < 12 {
		return
	}
	id := binary.BigEndian.Uint16(p)
	u.mu.Lock()
	w := u.pending[id]
	u.mu.Unlock()
	if w == nil {
		return
	}
	m := new(mdns.Msg)
	res := udpResult{msg: m, attempt: w.attempt}
	if err := m.Unpack(p); err != nil {
		// A mangled packet with a pending ID is most likely the answer:
		// report it, so that the lookup moves on instead of waiting.
		res = udpResult{err: errBadResponse, attempt: w.attempt}
	} else if !m.Response || len(m.Question) != 1 ||
		m.Question[0].Qtype != w.qtype || !strings.EqualFold(m.Question[0].Name, w.name) {
		return // not the answer to this query
	}
	u.mu.Lock()
	if u.pending[id] != w {
		u.mu.Unlock()
		return
	}
	delete(u.pending, id)
	if !w.sent.IsZero() {
		u.flow.sample(time.Since(w.sent))
	}
	held := w.slot
	w.slot = false
	u.flow.answered()
	u.mu.Unlock()
	if held {
		<-u.flow.sem
	}
	w.ch <- res
}

func (u *udpConn) failAll(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for id, w := range u.pending {
		delete(u.pending, id)
		if w.slot {
			w.slot = false
			<-u.flow.sem // never blocks: w's value is in it
		}
		w.ch <- udpResult{err: err, attempt: w.attempt}
	}
}

// close closes the socket and waits for the reader to return; waiters get
// ErrClosed. Queries waiting for a place in the window wait on; their
// lookups end with the resolver's context.
func (u *udpConn) close() {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	u.conn.Close()
	<-u.done
}
