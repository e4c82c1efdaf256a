package cluster

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Transport carries the messages of a cluster: durable per-node inboxes
// for URL batches (the host splitter's output) and request-reply for
// lookups (content seen, index queries, status). Implementations must be
// safe for concurrent use. NATS is the default (JetStream inboxes, core
// request-reply); Mem is an in-process one for tests.
type Transport interface {
	// Publish appends data to node's inbox and returns once the message
	// is stored: it survives the receiving node's restart and is
	// delivered until the node's consumer acknowledges it.
	Publish(ctx context.Context, node string, data []byte) error
	// Consume delivers node's inbox to h, one message at a time, oldest
	// first. A message is acknowledged (removed) when h returns nil and
	// delivered again later when h returns an error or the consumer is
	// closed or dies before h returns. Closing the returned Closer stops
	// delivery and waits for a running h to return.
	Consume(node string, h func(ctx context.Context, data []byte) error) (io.Closer, error)
	// Request sends req to the server of subject and returns its reply;
	// an error the server's handler returned comes back as an *Error
	// wrapping ErrRemote. Request must not retain req.
	Request(ctx context.Context, subject string, req []byte) ([]byte, error)
	// Serve answers the requests of subject with h, which may be called
	// concurrently. Closing the returned Closer stops serving and waits
	// for running handlers.
	Serve(subject string, h func(ctx context.Context, req []byte) ([]byte, error)) (io.Closer, error)
	// Backlog reports the inbox totals over all nodes.
	Backlog(ctx context.Context) (Backlog, error)
	// Close releases the transport (for NATS, the connection if the
	// transport opened it).
	Close() error
}

// Backlog are the inbox totals of a Transport: how many messages were ever
// published and how many are not acknowledged yet (stored or being
// handled). A cluster is quiet only when Pending is 0 and Published does
// not move.
type Backlog struct {
	Published uint64
	Pending   uint64
	// ByNode is Pending per node inbox; nodes without pending messages
	// may be missing.
	ByNode map[string]uint64
}

// Mem is an in-process Transport: inboxes are slices, requests are
// function calls. Several nodes of one test share one Mem. It keeps the
// delivery contract of Transport (a message stays until acknowledged,
// redelivery after an error or a closed consumer), so the code above it
// behaves as on NATS. Safe for concurrent use; the zero value is not
// usable, call NewMem.
type Mem struct {
	mu        sync.Mutex
	cond      *sync.Cond
	inbox     map[string]*memInbox
	servers   map[string]*memServer
	published uint64
	pending   uint64
	closed    bool
	// RedeliverDelay is how long a message whose handler failed waits
	// before it is delivered again. Set before use; default 50 ms.
	RedeliverDelay time.Duration
}

type memInbox struct {
	msgs      [][]byte
	consumers int
	notBefore time.Time
}

type memServer struct {
	h  func(ctx context.Context, req []byte) ([]byte, error)
	wg sync.WaitGroup
}

// NewMem returns an empty in-process transport.
func NewMem() *Mem {
	m := &Mem{inbox: map[string]*memInbox{}, servers: map[string]*memServer{}, RedeliverDelay: 50 * time.Millisecond}
	m.cond = sync.NewCond(&m.mu)
	return m
}

func (m *Mem) box(node string) *memInbox {
	b := m.inbox[node]
	if b == nil {
		b = &memInbox{}
		m.inbox[node] = b
	}
	return b
}

// Publish implements Transport.
func (m *Mem) Publish(ctx context.Context, node string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: "publish", Subject: node, Err: err}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return &Error{Op: "publish", Subject: node, Err: ErrClosed}
	}
	b := m.box(node)
	b.msgs = append(b.msgs, append([]byte(nil), data...))
	m.published++
	m.pending++
	m.cond.Broadcast()
	return nil
}

type memConsumer struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (c *memConsumer) Close() error {
	c.cancel()
	<-c.done
	return nil
}

// Consume implements Transport. Only one consumer per inbox is allowed at
// a time, as with a durable JetStream consumer.
func (m *Mem) Consume(node string, h func(ctx context.Context, data []byte) error) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, &Error{Op: "consume", Subject: node, Err: ErrClosed}
	}
	b := m.box(node)
	if b.consumers > 0 {
		return nil, &Error{Op: "consume", Subject: node, Err: errors.New("inbox already has a consumer")}
	}
	b.consumers++
	ctx, cancel := context.WithCancel(context.Background())
	c := &memConsumer{cancel: cancel, done: make(chan struct{})}
	stop := context.AfterFunc(ctx, func() {
		m.mu.Lock()
		m.cond.Broadcast()
		m.mu.Unlock()
	})
	go func() {
		defer close(c.done)
		defer stop()
		for {
			m.mu.Lock()
			for ctx.Err() == nil && !m.closed && (len(b.msgs) == 0 || time.Now().Before(b.notBefore)) {
				if len(b.msgs) > 0 {
					// Wait out the redelivery delay without a timer
					// goroutine of our own: a short sleep outside the lock.
					m.mu.Unlock()
					time.Sleep(5 * time.Millisecond)
					m.mu.Lock()
					continue
				}
				m.cond.Wait()
			}
			if ctx.Err() != nil || m.closed {
				b.consumers--
				m.mu.Unlock()
				return
			}
			msg := b.msgs[0]
			m.mu.Unlock()
			err := h(ctx, msg)
			m.mu.Lock()
			if err == nil {
				b.msgs = b.msgs[1:]
				m.pending--
			} else {
				b.notBefore = time.Now().Add(m.RedeliverDelay)
			}
			m.mu.Unlock()
		}
	}()
	return c, nil
}

// Request implements Transport.
func (m *Mem) Request(ctx context.Context, subject string, req []byte) ([]byte, error) {
	m.mu.Lock()
	s := m.servers[subject]
	closed := m.closed
	if s != nil {
		s.wg.Add(1)
	}
	m.mu.Unlock()
	if closed {
		return nil, &Error{Op: "request", Subject: subject, Err: ErrClosed}
	}
	if s == nil {
		return nil, &Error{Op: "request", Subject: subject, Err: ErrNoResponder}
	}
	if err := ctx.Err(); err != nil {
		s.wg.Done()
		return nil, &Error{Op: "request", Subject: subject, Err: err}
	}
	// The handler runs in its own goroutine, as a remote server's would,
	// so that the caller returns when its context ends whatever the
	// handler does; the server's Close still waits for it.
	type reply struct {
		resp []byte
		err  error
	}
	done := make(chan reply, 1)
	go func() {
		defer s.wg.Done()
		resp, err := s.h(ctx, append([]byte(nil), req...))
		done <- reply{resp, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			if err := ctx.Err(); err != nil {
				return nil, &Error{Op: "request", Subject: subject, Err: err}
			}
			return nil, &Error{Op: "request", Subject: subject, Err: errors.Join(ErrRemote, errors.New(r.err.Error()))}
		}
		return r.resp, nil
	case <-ctx.Done():
		return nil, &Error{Op: "request", Subject: subject, Err: ctx.Err()}
	}
}

type memServing struct {
	m       *Mem
	subject string
	s       *memServer
}

func (c *memServing) Close() error {
	c.m.mu.Lock()
	if c.m.servers[c.subject] == c.s {
		delete(c.m.servers, c.subject)
	}
	c.m.mu.Unlock()
	c.s.wg.Wait()
	return nil
}

// Serve implements Transport; one server per subject.
func (m *Mem) Serve(subject string, h func(ctx context.Context, req []byte) ([]byte, error)) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, &Error{Op: "serve", Subject: subject, Err: ErrClosed}
	}
	if m.servers[subject] != nil {
		return nil, &Error{Op: "serve", Subject: subject, Err: errors.New("subject already served")}
	}
	s := &memServer{h: h}
	m.servers[subject] = s
	return &memServing{m: m, subject: subject, s: s}, nil
}

// Backlog implements Transport.
func (m *Mem) Backlog(ctx context.Context) (Backlog, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	by := make(map[string]uint64, len(m.inbox))
	for node, b := range m.inbox {
		if len(b.msgs) > 0 {
			by[node] = uint64(len(b.msgs))
		}
	}
	return Backlog{Published: m.published, Pending: m.pending, ByNode: by}, nil
}

// Close implements Transport: consumers stop, stored messages are dropped
// with the transport.
func (m *Mem) Close() error {
	m.mu.Lock()
	m.closed = true
	m.cond.Broadcast()
	m.mu.Unlock()
	return nil
}

// Meter is a Transport that counts the messages and bytes another
// Transport carries: published inbox messages and request/reply pairs.
// Counting costs two atomic additions per call. Safe for concurrent use
// if T is.
type Meter struct {
	T Transport

	messages, bytes atomic.Uint64
}

// Counts returns the messages (publishes, requests and replies) and bytes
// (their payloads) carried so far.
func (m *Meter) Counts() (messages, bytes uint64) { return m.messages.Load(), m.bytes.Load() }

// Publish implements Transport.
func (m *Meter) Publish(ctx context.Context, node string, data []byte) error {
	m.messages.Add(1)
	m.bytes.Add(uint64(len(data)))
	return m.T.Publish(ctx, node, data)
}

// Consume implements Transport.
func (m *Meter) Consume(node string, h func(ctx context.Context, data []byte) error) (io.Closer, error) {
	return m.T.Consume(node, h)
}

// Request implements Transport.
func (m *Meter) Request(ctx context.Context, subject string, req []byte) ([]byte, error) {
	resp, err := m.T.Request(ctx, subject, req)
	m.messages.Add(2)
	m.bytes.Add(uint64(len(req) + len(resp)))
	return resp, err
}

// Serve implements Transport.
func (m *Meter) Serve(subject string, h func(ctx context.Context, req []byte) ([]byte, error)) (io.Closer, error) {
	return m.T.Serve(subject, h)
}

// Backlog implements Transport.
func (m *Meter) Backlog(ctx context.Context) (Backlog, error) { return m.T.Backlog(ctx) }

// Close implements Transport.
func (m *Meter) Close() error { return m.T.Close() }
