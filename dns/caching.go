package dns

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	mdns "github.com/miekg/dns"
)

// Caching is the crawler's own resolver (IIR §20.2.2): it asks the
// configured nameservers directly, caches answers by their TTL, shares one
// resolution among concurrent lookups of a name, and retries with growing
// waits. Create it with New; the zero value is not usable. It is safe for
// concurrent use: a lookup holds a lock only for a map access, never during
// a query, so any number of lookups proceed independently. Only the pacing
// of the queries to a nameserver (Options.MaxInFlight) can hold a query
// back, behind the others of a burst; a slow name gives its place up
// after 100 ms, so it delays no other by more.
//
// A cache hit costs well under 100 ns of CPU and does not allocate: the
// returned slice is the cached one and must not be modified. A miss starts a resolution in
// a goroutine of its own that outlives the caller's context (its answer
// still fills the cache); Close ends them.
type Caching struct {
	opts  Options
	cache *cache
	udp   []*udpConn
	tcp   *mdns.Client

	// life is the resolver's lifetime, not a request's: resolutions run
	// under it (not under the context of whichever caller started them)
	// and Close cancels it.
	life   context.Context
	cancel context.CancelFunc
	closed atomic.Bool
	wg     sync.WaitGroup
	once   sync.Once

	// The resolver's clock counts nanoseconds since base. Cache hits read
	// coarse, refreshed every clockTick by a goroutine, instead of calling
	// time.Now (the largest cost of a hit); with an injected Options.Now,
	// hits call it instead.
	base   time.Time
	coarse atomic.Int64
	fake   bool

	stats counters
}

var (
	_ Resolver   = (*Caching)(nil)
	_ Prefetcher = (*Caching)(nil)
)

// clockTick is the resolution of the cache-hit clock: an entry may be
// served about this long after its TTL ran out (longer if the scheduler
// starves the clock goroutine). The goroutine wakes 1/clockTick times a
// second, also when the resolver is idle.
const clockTick = 50 * time.Millisecond

// New returns a caching resolver configured by opts (nil: all defaults).
// It opens one UDP socket and starts one reader goroutine per nameserver,
// plus a clock goroutine; Close releases them.
func New(opts *Options) (*Caching, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Caching{
		opts:  o,
		cache: newCache(o.CacheSize),
		tcp:   &mdns.Client{Net: "tcp", Timeout: o.MaxTimeout, UDPSize: o.UDPSize},
	}
	for _, s := range o.Nameservers {
		u, err := o.dialUDP(s, nil)
		if err != nil {
			for _, u := range c.udp {
				u.close()
			}
			return nil, fmt.Errorf("dns: nameserver %s: %w", s, err)
		}
		c.udp = append(c.udp, u)
	}
	c.life, c.cancel = context.WithCancel(context.Background())
	c.base = o.Now()
	c.fake = opts != nil && opts.Now != nil
	if !c.fake {
		c.wg.Add(1)
		go c.tick()
	}
	return c, nil
}

// dialUDP opens the socket to nameserver server with o's answer size and
// flow control; gate is dialUDPGated's (nil but in tests).
func (o *Options) dialUDP(server string, gate <-chan struct{}) (*udpConn, error) {
	return dialUDPGated(server, int(o.UDPSize)+512, newFlow(o.MinTimeout, o.Timeout, o.MaxInFlight), gate)
}

// tick refreshes the coarse clock until Close.
func (c *Caching) tick() {
	defer c.wg.Done()
	t := time.NewTicker(clockTick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			c.coarse.Store(c.preciseNow())
		case <-c.life.Done():
			return
		}
	}
}

// now returns the resolver's clock for cache lookups. After Close the
// coarse clock stops, so the precise one takes over.
func (c *Caching) now() int64 {
	if c.fake || c.closed.Load() {
		return c.preciseNow()
	}
	return c.coarse.Load()
}

// preciseNow returns the resolver's clock, read from Options.Now.
func (c *Caching) preciseNow() int64 {
	return int64(c.opts.Now().Sub(c.base))
}

// Close cancels the resolutions in progress (their waiters get an *Error
// wrapping ErrClosed), waits for every goroutine the resolver started, and
// closes its sockets. Lookups after Close still answer from the cache and
// fail otherwise. Close is safe to call more than once.
func (c *Caching) Close() error {
	c.once.Do(func() {
		c.closed.Store(true)
		// A lookup checks closed and registers its goroutine under its
		// shard's lock: passing every lock once orders all of them before
		// the Wait below.
		for i := range c.cache.shards {
			c.cache.shards[i].mu.Lock()
			c.cache.shards[i].mu.Unlock() //lint:ignore SA2001 a barrier, see above
		}
		c.cancel()
		c.wg.Wait()
		for _, u := range c.udp {
			u.close()
		}
	})
	return nil
}

// LookupNetIP implements Resolver. IP literals and localhost names are
// answered at once; other names from the cache if a live entry exists,
// else by a resolution shared with concurrent lookups of the same name.
// If ctx ends first, LookupNetIP returns an *Error of kind Timeout (deadline)
// or Unknown (canceled) while the resolution goes on in the background.
// The returned slice is shared and must not be modified.
func (c *Caching) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	name, kind, addr, hash := canonicalHost(host, c.cache.seed)
	switch kind {
	case hostLiteral:
		c.stats.local.Add(1)
		return []netip.Addr{addr}, nil
	case hostLocalhost:
		c.stats.local.Add(1)
		return loopback(c.opts.Network), nil
	case hostInvalid:
		return nil, &Error{Name: host, Kind: BadName, Err: errBadName}
	}
	now := c.now()
	s := c.cache.shard(hash)
	s.mu.Lock()
	if e := s.getLocked(name, now); e != nil {
		if e.err != nil {
			s.negHits++
		} else {
			s.hits++
		}
		addrs, err := e.addrs, e.err
		s.mu.Unlock()
		return addrs, err
	}
	f := c.startLocked(s, name)
	s.mu.Unlock()
	if f == nil {
		return nil, &Error{Name: name, Kind: Unknown, Err: ErrClosed}
	}
	select {
	case <-f.done:
		return f.addrs, f.err
	case <-ctx.Done():
		return nil, &Error{Name: name, Kind: ctxKind(ctx.Err()), Err: ctx.Err()}
	}
}

// Prefetch starts resolving the hosts that are neither cached nor being
// resolved, and returns without waiting: the frontier calls it when a host
// enters a back queue, so that the address is known by the time the host's
// turn to be fetched comes. Invalid names and IP literals are ignored.
// Cost: one cache probe per host, plus a goroutine per resolution started.
func (c *Caching) Prefetch(hosts ...string) {
	for _, host := range hosts {
		name, kind, _, hash := canonicalHost(host, c.cache.seed)
		if kind != hostName {
			continue
		}
		now := c.now()
		s := c.cache.shard(hash)
		s.mu.Lock()
		if s.getLocked(name, now) == nil && s.flights[name] == nil {
			if c.startLocked(s, name) != nil {
				c.stats.prefetches.Add(1)
			}
		}
		s.mu.Unlock()
	}
}

// startLocked joins the resolution of name in flight or starts one; nil
// after Close. s.mu must be held.
func (c *Caching) startLocked(s *shard, name string) *flight {
	if f := s.flights[name]; f != nil {
		s.shared++
		return f
	}
	if c.closed.Load() {
		return nil
	}
	f := &flight{done: make(chan struct{})}
	s.flights[name] = f
	s.misses++
	c.wg.Add(1)
	go c.resolve(s, name, f)
	return f
}

// resolve runs one resolution, caches its outcome and wakes its waiters.
func (c *Caching) resolve(s *shard, name string, f *flight) {
	defer c.wg.Done()
	start := time.Now()
	addrs, ttl, err := c.query(name)
	c.stats.observe(time.Since(start), err)

	expires := c.preciseNow() + int64(ttl)
	s.mu.Lock()
	if err == nil || errors.Is(err, NotFound) {
		s.putLocked(name, addrs, err, expires)
	}
	delete(s.flights, name)
	f.addrs, f.err = addrs, err
	s.mu.Unlock()
	close(f.done)
}

// typeResult is the outcome of resolving one name and type.
type typeResult struct {
	addrs  []netip.Addr
	ttl    uint32 // of a positive answer
	negTTL uint32 // of a negative answer, from the SOA; 0 if unknown
	err    *Error
}

// query resolves name for the configured families and returns the
// addresses (A before AAAA) or the error, and how long to cache the outcome.
//
// With Network "ip" both families are asked in parallel; once one has
// answered with addresses, the other gets at most Options.Timeout more, so
// that a server which drops AAAA queries (there are such) does not hold a
// host's IPv4 addresses back for the whole retry schedule.
func (c *Caching) query(name string) ([]netip.Addr, time.Duration, error) {
	ctx, cancel := context.WithCancel(c.life)
	defer cancel()
	fqdn := name + "."
	var r4, r6 typeResult
	switch c.opts.Network {
	case "ip4":
		r4 = c.lookupType(ctx, name, fqdn, mdns.TypeA)
		r6.err = &Error{Name: name, Kind: NotFound, Err: errNoAddress}
	case "ip6":
		r6 = c.lookupType(ctx, name, fqdn, mdns.TypeAAAA)
		r4.err = &Error{Name: name, Kind: NotFound, Err: errNoAddress}
	default:
		ch4, ch6 := make(chan typeResult, 1), make(chan typeResult, 1)
		go func() { ch4 <- c.lookupType(ctx, name, fqdn, mdns.TypeA) }()
		go func() { ch6 <- c.lookupType(ctx, name, fqdn, mdns.TypeAAAA) }()
		var grace *time.Timer
		var graceC <-chan time.Time
		for got4, got6 := false, false; !got4 || !got6; {
			select {
			case r4 = <-ch4:
				got4 = true
				ch4 = nil
			case r6 = <-ch6:
				got6 = true
				ch6 = nil
			case <-graceC:
				cancel() // the laggard returns at once, with an error
				graceC = nil
			}
			if grace == nil && (len(r4.addrs) > 0 || len(r6.addrs) > 0) && (!got4 || !got6) {
				grace = time.NewTimer(c.opts.Timeout)
				graceC = grace.C
			}
		}
		if grace != nil {
			grace.Stop()
		}
	}
	if n := len(r4.addrs) + len(r6.addrs); n > 0 {
		addrs := make([]netip.Addr, 0, n)
		addrs = append(append(addrs, r4.addrs...), r6.addrs...)
		ttl := uint32(math.MaxUint32)
		if len(r4.addrs) > 0 {
			ttl = r4.ttl
		}
		if len(r6.addrs) > 0 {
			ttl = min(ttl, r6.ttl)
		}
		return addrs, clamp(ttl, c.opts.MinTTL, c.opts.MaxTTL), nil
	}
	if r4.err.Kind == NotFound && r6.err.Kind == NotFound {
		e := r4.err
		if !errors.Is(e.Err, errNXDomain) && errors.Is(r6.err.Err, errNXDomain) {
			e = r6.err
		}
		neg := r4.negTTL
		if neg == 0 || (r6.negTTL != 0 && r6.negTTL < neg) {
			neg = r6.negTTL
		}
		return nil, clamp(neg, c.opts.MinTTL, max(c.opts.MinTTL, c.opts.MaxNegativeTTL)), e
	}
	if r4.err.Kind != NotFound {
		return nil, 0, r4.err
	}
	return nil, 0, r6.err
}

func clamp(ttl uint32, lo, hi time.Duration) time.Duration {
	d := time.Duration(ttl) * time.Second
	return min(max(d, lo), hi)
}

// lookupType resolves one name and type, following CNAMEs across queries
// when the server does not.
func (c *Caching) lookupType(ctx context.Context, name, fqdn string, qtype uint16) typeResult {
	seen := map[string]bool{fqdn: true}
	cur := fqdn
	hops := 0
	ttl := uint32(math.MaxUint32)
	for {
		m, server, err := c.exchange(ctx, name, cur, qtype)
		if err != nil {
			return typeResult{err: err}
		}
		a, xerr := extract(m, cur, qtype, seen, c.opts.MaxCNAME-hops)
		hops += a.hops
		if xerr != nil {
			return typeResult{err: &Error{Name: name, Kind: CNAMELoop, Server: server, Err: xerr}}
		}
		ttl = min(ttl, a.ttl)
		switch {
		case len(a.addrs) > 0:
			return typeResult{addrs: a.addrs, ttl: ttl}
		case a.next != "":
			cur = a.next
		case a.nxdomain:
			return typeResult{negTTL: a.negTTL, err: &Error{Name: name, Kind: NotFound, Server: server, Err: errNXDomain}}
		default:
			return typeResult{negTTL: a.negTTL, err: &Error{Name: name, Kind: NotFound, Server: server, Err: errNoAddress}}
		}
	}
}

// exchange asks the nameservers about (fqdn, qtype) until one gives a usable
// answer (NOERROR or NXDOMAIN), following Mercator's timed waits: attempt i
// goes to nameserver i mod n. An attempt that gets no answer is sent again
// after the server's retransmission timeout scaled by Backoff^i (see
// Options.Timeout), at most Timeout×Backoff^i (capped at MaxTimeout); the
// queries sent earlier stay open, and the first usable answer to any of
// them wins, until the whole schedule Σ Timeout×Backoff^i has run out. An
// attempt that fails fast (SERVFAIL, REFUSED, unreachable, garbage) moves
// on at once while there are nameservers not yet tried; after that it
// sits out its wait Timeout×Backoff^i first, so that one server is asked
// again only after growing pauses. Truncated UDP answers are asked again
// over TCP. The first query to each server waits for a place in its
// window (Options.MaxInFlight).
func (c *Caching) exchange(ctx context.Context, name, fqdn string, qtype uint16) (*mdns.Msg, string, *Error) {
	x := &exchange{c: c, ctx: ctx, name: name,
		results: make(chan udpResult, c.opts.Attempts),
		final:   time.Now().Add(c.opts.schedule()),
		current: -1,
	}
	if c.opts.Attempts <= len(x.buf) {
		x.sent = x.buf[:c.opts.Attempts]
	} else {
		x.sent = make([]sentQuery, c.opts.Attempts)
	}
	defer x.forget()
	n := len(c.udp)
	for i := range c.opts.Attempts {
		u := c.udp[i%n]
		// The lookup's first query to a server waits for a place in
		// its window; a retransmission goes when its timeout says.
		first := i < n
		if first {
			if out, done := x.acquire(u); done {
				return out.msg, out.server, out.err
			}
		}
		q := new(mdns.Msg)
		q.SetQuestion(fqdn, qtype)
		q.SetEdns0(c.opts.UDPSize, false) // per query: packing writes into the OPT record
		c.stats.queries.Add(1)
		if i > 0 {
			c.stats.retries.Add(1)
		}
		id, w, rto, err := u.start(q, i, x.results, first)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				return nil, u.server, c.stopped(name, u.server)
			}
			x.last = &Error{Name: name, Kind: Unknown, Server: u.server, Err: err}
			if out, done := x.pause(i, time.Now()); done {
				return out.msg, out.server, out.err
			}
			continue
		}
		x.sent[i] = sentQuery{u: u, id: id, w: w}
		x.open++
		if out, done := x.await(i, rto); done {
			return out.msg, out.server, out.err
		}
	}
	// Every attempt is out: an answer to any of them may still come.
	for x.open > 0 {
		if ev, _, out := x.wait(x.last.Server, time.Time{}, nil, nil); ev == evDone {
			return out.msg, out.server, out.err
		}
	}
	return nil, x.last.Server, x.last
}

// exchange is the state of one Caching.exchange.
type exchange struct {
	c       *Caching
	ctx     context.Context
	name    string
	results chan udpResult // of every query sent; room for one each
	sent    []sentQuery    // by attempt; zero if not sent
	buf     [5]sentQuery   // sent, for up to 5 attempts
	open    int            // queries sent whose result has not come
	last    *Error         // the latest failure
	final   time.Time      // the end of the schedule
	timer   *time.Timer    // wait's, armed for armed
	armed   time.Time
	current int // the attempt awaited; -1: none
}

// sentQuery is an attempt registered with its nameserver's socket.
type sentQuery struct {
	u  *udpConn
	id uint16
	w  *waiter
}

// outcome is the result of an exchange that is over.
type outcome struct {
	msg    *mdns.Msg
	server string
	err    *Error
}

// event is what exchange.wait saw.
type event int

const (
	evFailure event = iota // a result that is a failure, now x.last
	evTick                 // the time given has come
	evSignal               // the channel given
	evDone                 // the exchange is over
)

func (x *exchange) forget() {
	if x.timer != nil {
		x.timer.Stop()
	}
	for _, s := range x.sent {
		if s.w != nil {
			s.u.forget(s.id, s.w)
		}
	}
}

// wait waits for one event: a result, the time until (none if zero), the
// channel signal or a place in a window (either may be nil: none), the
// end of the schedule or of ctx. For
// evFailure it returns the attempt that failed, for evDone the outcome;
// server is the one an error names when no query's server is to blame.
// One timer serves every wait of the exchange.
func (x *exchange) wait(server string, until time.Time, signal <-chan struct{}, place chan<- struct{}) (event, int, outcome) {
	at := x.final
	if !until.IsZero() && until.Before(at) {
		at = until
	}
	if x.timer == nil {
		x.timer = time.NewTimer(time.Until(at))
		x.armed = at
	} else if !at.Equal(x.armed) {
		x.timer.Reset(time.Until(at))
		x.armed = at
	}
	// A result that has come goes first, whatever else is ready: a wait
	// whose time is up still takes the answer that came with it.
	select {
	case r := <-x.results:
		return x.result(r)
	default:
	}
	select {
	case r := <-x.results:
		return x.result(r)
	case <-x.timer.C:
		x.armed = time.Time{} // fired: arm again whatever the next time
		if time.Now().Before(x.final) {
			return evTick, 0, outcome{}
		}
		if x.current >= 0 { // its wait ends with the schedule
			s := x.sent[x.current]
			x.c.stats.timeouts.Add(1)
			x.last = &Error{Name: x.name, Kind: Timeout, Server: s.u.server, Err: context.DeadlineExceeded}
		}
		if x.last == nil {
			x.last = &Error{Name: x.name, Kind: Timeout, Server: server, Err: context.DeadlineExceeded}
		}
		return evDone, 0, outcome{server: x.last.Server, err: x.last}
	case <-signal:
		return evSignal, 0, outcome{}
	case place <- struct{}{}:
		return evSignal, 0, outcome{}
	case <-x.ctx.Done():
		return evDone, 0, outcome{server: server, err: x.c.stopped(x.name, server)}
	}
}

// result is wait's event for result r.
func (x *exchange) result(r udpResult) (event, int, outcome) {
	x.open--
	m, srv, e := x.take(r)
	if m != nil {
		return evDone, 0, outcome{msg: m, server: srv}
	}
	if x.ctx.Err() != nil {
		return evDone, 0, outcome{server: srv, err: x.c.stopped(x.name, srv)}
	}
	x.last = e
	return evFailure, r.attempt, outcome{}
}

// take reads one result: a usable answer and its server, or the failure.
func (x *exchange) take(r udpResult) (*mdns.Msg, string, *Error) {
	c := x.c
	u := x.sent[r.attempt].u
	m, err := r.msg, r.err
	if err == nil && m.Truncated && len(m.Question) == 1 {
		c.stats.tcp.Add(1)
		tctx, cancel := context.WithTimeout(x.ctx, c.opts.wait(r.attempt))
		q := new(mdns.Msg)
		q.SetQuestion(m.Question[0].Name, m.Question[0].Qtype)
		q.SetEdns0(c.opts.UDPSize, false)
		m, _, err = c.tcp.ExchangeContext(tctx, q, u.server)
		if err == nil && m.Truncated {
			err = errTruncatedTCP
		}
		if err != nil && tctx.Err() != nil {
			err = tctx.Err()
		}
		cancel()
	}
	kind := Unknown
	if err == nil {
		switch m.Rcode {
		case mdns.RcodeSuccess, mdns.RcodeNameError:
			return m, u.server, nil
		case mdns.RcodeServerFailure:
			err = errServFail
		case mdns.RcodeRefused:
			err = errRefused
		default:
			err = fmt.Errorf("%w %s", errRcode, mdns.RcodeToString[m.Rcode])
		}
		kind = ServerFailure
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		c.stats.timeouts.Add(1)
		kind = Timeout
	case errors.Is(err, errBadResponse), errors.Is(err, errTruncatedTCP):
		kind = BadResponse
	case errors.Is(err, errConnRefused):
		kind = ServerFailure
	}
	return nil, u.server, &Error{Name: x.name, Kind: kind, Server: u.server, Err: err}
}

// acquire waits for a place in u's window, taking results meanwhile.
func (x *exchange) acquire(u *udpConn) (outcome, bool) {
	select {
	case u.places() <- struct{}{}:
		return outcome{}, false
	default:
	}
	for {
		switch ev, _, out := x.wait(u.server, time.Time{}, nil, u.places()); ev {
		case evSignal:
			return outcome{}, false
		case evDone:
			return out, true
		}
	}
}

// await waits for the result of attempt i, sent when the server's
// retransmission timeout was rto, until that timeout scaled by Backoff^i
// (recomputed when the RTO drops), taking the results of earlier
// attempts meanwhile. The query gives its place in the window up after
// windowHold, or when its wait ends if that comes first.
//
// A wait that ends while answers have come and are not handed over yet
// (udpConn.behind) is not over: on a machine whose cores are all busy,
// the socket's reader may not run for tens of milliseconds after an
// answer came (a goroutine a socket wakes is found when a core runs out
// of work, or by the runtime's monitor at most every 10 ms), and the
// answer would be asked for again. Until the reader has caught up, for
// at most one more wait, the attempt waits for it; an answer lost leaves
// the reader nothing to do, and is asked again at once as before.
func (x *exchange) await(i int, rto rtoState) (outcome, bool) {
	c := x.c
	s := x.sent[i]
	hold := s.w.sent.Add(windowHold)
	holding := true
	var grace time.Time      // while set, the wait is over and answers were unread
	var read <-chan struct{} // closed when the reader has read a batch
	x.current = i
	defer func() { x.current = -1 }()
	for {
		until, signal := s.w.sent.Add(c.opts.waitFrom(rto.rto, i)), rto.drop
		if !grace.IsZero() {
			until, signal = grace, read
		}
		if holding && hold.Before(until) {
			until = hold
		}
		ev, failed, out := x.wait(s.u.server, until, signal, nil)
		switch {
		case ev == evDone:
			if !grace.IsZero() && out.msg != nil {
				c.stats.lateReads.Add(1)
			}
			return out, true
		case ev == evTick && holding:
			holding = false
			s.u.release(s.w)
			if until.Before(s.w.sent.Add(c.opts.waitFrom(rto.rto, i))) {
				continue
			}
			fallthrough
		case ev == evTick:
			if grace.IsZero() {
				grace = time.Now().Add(c.opts.waitFrom(rto.rto, i))
			}
			if read = s.u.readSignal(); time.Now().Before(grace) && s.u.behind() {
				continue
			}
			// No answer in time.
			c.stats.timeouts.Add(1)
			x.last = &Error{Name: x.name, Kind: Timeout, Server: s.u.server, Err: context.DeadlineExceeded}
			return outcome{}, false
		case ev == evSignal && !grace.IsZero():
			// The reader has read a batch: its answers are taken first
			// by the next wait. With the socket read empty, that wait
			// is the last.
			if read = s.u.readSignal(); !s.u.behind() {
				grace = time.Now()
			}
		case ev == evSignal:
			rto = s.u.rto()
		case failed == i: // this attempt failed
			x.current = -1
			if x.last.Kind == Timeout { // over TCP: its wait is spent
				return outcome{}, false
			}
			return x.pause(i, s.w.sent)
		}
	}
}

// pause follows a fast failure of attempt i, sent at start: the next
// attempt goes out at once to a server not yet tried, else after the
// rest of Timeout×Backoff^i, results being taken meanwhile.
func (x *exchange) pause(i int, start time.Time) (outcome, bool) {
	c := x.c
	if i+1 < len(c.udp) || i+1 == c.opts.Attempts {
		return outcome{}, false
	}
	until := start.Add(c.opts.wait(i))
	if !time.Now().Before(until) {
		return outcome{}, false
	}
	for {
		switch ev, _, out := x.wait(x.last.Server, until, nil, nil); ev {
		case evTick:
			return outcome{}, false
		case evDone:
			return out, true
		}
	}
}

// stopped is the error of a query cut short by Close or by query giving up
// on the slower address family.
func (c *Caching) stopped(name, server string) *Error {
	if c.life.Err() != nil {
		return &Error{Name: name, Kind: Unknown, Server: server, Err: ErrClosed}
	}
	return &Error{Name: name, Kind: Unknown, Server: server, Err: context.Canceled}
}
