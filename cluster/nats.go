package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSOptions configures the NATS Transport. The zero value means all
// defaults.
type NATSOptions struct {
	// Prefix starts every subject the transport uses. Default "crawlkit".
	// Two crawls on one NATS server need different prefixes and streams.
	Prefix string
	// Stream is the JetStream stream that holds the inboxes (work-queue
	// retention: a message is deleted when acknowledged). Default
	// "CRAWLKIT".
	Stream string
	// Replicas is the stream's replication factor in a NATS cluster.
	// Default 1.
	Replicas int
	// Memory keeps the stream in the servers' memory instead of files
	// (faster; lost if a server restarts). Default false.
	Memory bool
	// AckWait is how long a delivered message may stay unacknowledged
	// before it is delivered again: how long the batches a killed node
	// had taken from its inbox wait before its restart, or the member
	// draining its inbox, gets them. A handler that runs longer keeps its
	// message by telling the server it is in progress every AckWait/3.
	// Default 5 s (the library's 30 s held the end of a crawl that long
	// after a node was killed).
	AckWait time.Duration
	// RedeliverDelay is how long a message whose handler failed waits
	// before it is delivered again. Default 100 ms.
	RedeliverDelay time.Duration
	// PullExpiry is how long one pull request of a consumer waits for
	// messages; the server's idle heartbeats come at half of it. When the
	// server a consumer pulls from goes down, the consumer notices the
	// missing heartbeats and pulls again through another server within
	// about PullExpiry. Default 5 s (the library's 30 s left a consumer
	// idle for up to half a minute after a server failure).
	PullExpiry time.Duration
}

// NATS is the Transport over a NATS server or cluster: inboxes are the
// subjects PREFIX.urls.NODE of a JetStream work-queue stream, each
// consumed by a durable consumer named after its node; requests use core
// NATS request-reply on PREFIX.rpc.SUBJECT with a queue group, so several
// processes may serve one subject. Safe for concurrent use.
type NATS struct {
	nc     *nats.Conn
	owned  bool
	js     jetstream.JetStream
	stream jetstream.Stream
	opts   NATSOptions
}

// DialNATS connects to the NATS server at url (several separated by
// commas: the client fails over between them) and returns a transport
// that closes the connection on Close. opts may be nil, as for NewNATS.
func DialNATS(ctx context.Context, url string, opts *NATSOptions) (*NATS, error) {
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond), nats.Name("crawlkit"))
	if err != nil {
		return nil, &Error{Op: "dial", Subject: url, Err: err}
	}
	t, err := NewNATS(ctx, nc, opts)
	if err != nil {
		nc.Close()
		return nil, err
	}
	t.owned = true
	return t, nil
}

// NewNATS returns a transport over an open connection, creating (or
// updating) the inbox stream. Close does not close nc. opts may be nil:
// every field takes its default. The options are copied, so the caller
// may change or reuse them afterwards.
func NewNATS(ctx context.Context, nc *nats.Conn, opts *NATSOptions) (*NATS, error) {
	var o NATSOptions
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = "crawlkit"
	}
	if o.Stream == "" {
		o.Stream = "CRAWLKIT"
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.AckWait <= 0 {
		o.AckWait = 5 * time.Second
	}
	if o.RedeliverDelay <= 0 {
		o.RedeliverDelay = 100 * time.Millisecond
	}
	if o.PullExpiry <= 0 {
		o.PullExpiry = 5 * time.Second
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, &Error{Op: "jetstream", Err: err}
	}
	storage := jetstream.FileStorage
	if o.Memory {
		storage = jetstream.MemoryStorage
	}
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:      o.Stream,
		Subjects:  []string{o.Prefix + ".urls.*"},
		Retention: jetstream.WorkQueuePolicy,
		Storage:   storage,
		Replicas:  o.Replicas,
	})
	if err != nil {
		return nil, &Error{Op: "create stream", Subject: o.Stream, Err: err}
	}
	return &NATS{nc: nc, js: js, stream: st, opts: o}, nil
}

// Conn returns the underlying connection.
func (t *NATS) Conn() *nats.Conn { return t.nc }

// validToken reports whether s can be one token of a subject.
func validToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".*> \t\r\n")
}

// Publish implements Transport: a JetStream publish that returns after
// the stream stored the message (in a cluster: on a majority of replicas).
func (t *NATS) Publish(ctx context.Context, node string, data []byte) error {
	if !validToken(node) {
		return &Error{Op: "publish", Subject: node, Err: ErrUnknownNode}
	}
	if _, err := t.js.Publish(ctx, t.opts.Prefix+".urls."+node, data); err != nil {
		return &Error{Op: "publish", Subject: node, Err: err}
	}
	return nil
}

type natsConsumer struct {
	cc     jetstream.ConsumeContext
	cancel context.CancelFunc
	mu     sync.Mutex // held while a handler runs
}

func (c *natsConsumer) Close() error {
	c.cancel()
	// Drain, not Stop: the messages pulled ahead go through the handler,
	// which gives them back at once (Nak), rather than after AckWait.
	c.cc.Drain()
	c.mu.Lock()   // wait for a running handler
	c.mu.Unlock() //lint:ignore SA2001 a barrier: the lock is only waited for
	<-c.cc.Closed()
	return nil
}

// Consume implements Transport with a durable pull consumer named after
// node; a restarted node resumes where it stopped.
func (t *NATS) Consume(node string, h func(ctx context.Context, data []byte) error) (io.Closer, error) {
	if !validToken(node) {
		return nil, &Error{Op: "consume", Subject: node, Err: ErrUnknownNode}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := t.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       node,
		FilterSubject: t.opts.Prefix + ".urls." + node,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       t.opts.AckWait,
		MaxDeliver:    -1,
	})
	if err != nil {
		return nil, &Error{Op: "consume", Subject: node, Err: err}
	}
	hctx, hcancel := context.WithCancel(context.Background())
	c := &natsConsumer{cancel: hcancel}
	c.cc, err = cons.Consume(func(m jetstream.Msg) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if hctx.Err() != nil {
			_ = m.Nak()
			return
		}
		stop := inProgress(m, t.opts.AckWait/3)
		err := h(hctx, m.Data())
		stop()
		if err != nil {
			_ = m.NakWithDelay(t.opts.RedeliverDelay)
			return
		}
		// Acknowledged and confirmed: not delivered again. Not under
		// hctx: a Close that comes as h returns must not cut the
		// acknowledgement short, or the message would come again (Close
		// waits for it, bounded by the timeout).
		actx, acancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = m.DoubleAck(actx)
		acancel()
	}, jetstream.PullMaxMessages(consumeBuffer), jetstream.PullExpiry(t.opts.PullExpiry))
	if err != nil {
		hcancel()
		return nil, &Error{Op: "consume", Subject: node, Err: err}
	}
	return c, nil
}

// consumeBuffer is how many messages a consumer pulls ahead of its
// handler. Their AckWait runs from their delivery, so a handler slower
// than AckWait/consumeBuffer a message on average would see the last of
// them delivered again (harmless: a batch of URLs admitted twice is
// admitted once, but wasted work).
const consumeBuffer = 16

// inProgress tells the server every period that m is still being
// handled, so that a handler running longer than AckWait keeps it, until
// the returned stop is called.
func inProgress(m jetstream.Msg, period time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = m.InProgress()
			}
		}
	}()
	return func() { close(done) }
}

// Reply frames: a status byte, then the body (or the error text).
const (
	replyOK  = 0
	replyErr = 1
)

// Request implements Transport.
func (t *NATS) Request(ctx context.Context, subject string, req []byte) ([]byte, error) {
	m, err := t.nc.RequestWithContext(ctx, t.opts.Prefix+".rpc."+subject, req)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			err = errors.Join(ErrNoResponder, err)
		}
		return nil, &Error{Op: "request", Subject: subject, Err: err}
	}
	return unframe(subject, m.Data)
}

func unframe(subject string, d []byte) ([]byte, error) {
	if len(d) == 0 {
		return nil, &Error{Op: "request", Subject: subject, Err: ErrCorrupt}
	}
	switch d[0] {
	case replyOK:
		return d[1:], nil
	case replyErr:
		return nil, &Error{Op: "request", Subject: subject, Err: errors.Join(ErrRemote, errors.New(string(d[1:])))}
	}
	return nil, &Error{Op: "request", Subject: subject, Err: ErrCorrupt}
}

func frame(resp []byte, err error) []byte {
	if err != nil {
		return append([]byte{replyErr}, err.Error()...)
	}
	return append([]byte{replyOK}, resp...)
}

type natsServing struct {
	sub    *nats.Subscription
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (s *natsServing) Close() error {
	err := s.sub.Unsubscribe()
	s.cancel()
	s.wg.Wait()
	return err
}

// Serve implements Transport; each request runs in its own goroutine.
func (t *NATS) Serve(subject string, h func(ctx context.Context, req []byte) ([]byte, error)) (io.Closer, error) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &natsServing{cancel: cancel}
	sub, err := t.nc.QueueSubscribe(t.opts.Prefix+".rpc."+subject, "crawlkit", func(m *nats.Msg) {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			resp, err := h(ctx, m.Data)
			_ = m.Respond(frame(resp, err))
		}()
	})
	if err != nil {
		cancel()
		return nil, &Error{Op: "serve", Subject: subject, Err: err}
	}
	s.sub = sub
	if err := t.nc.FlushTimeout(5 * time.Second); err != nil {
		s.Close()
		return nil, &Error{Op: "serve", Subject: subject, Err: err}
	}
	return s, nil
}

// Backlog implements Transport from the stream's state: Published is its
// last sequence number, Pending its stored (unacknowledged) messages, and
// ByNode those of each inbox subject.
func (t *NATS) Backlog(ctx context.Context) (Backlog, error) {
	prefix := t.opts.Prefix + ".urls."
	info, err := t.stream.Info(ctx, jetstream.WithSubjectFilter(prefix+"*"))
	if err != nil {
		return Backlog{}, &Error{Op: "backlog", Subject: t.opts.Stream, Err: err}
	}
	by := make(map[string]uint64, len(info.State.Subjects))
	for subj, n := range info.State.Subjects {
		by[strings.TrimPrefix(subj, prefix)] = n
	}
	return Backlog{Published: info.State.LastSeq, Pending: info.State.Msgs, ByNode: by}, nil
}

// Close implements Transport.
func (t *NATS) Close() error {
	if t.owned {
		t.nc.Close()
	}
	return nil
}

// ServerOptions configures an embedded NATS server.
type ServerOptions struct {
	// Addr is the client listen address. Default "127.0.0.1:0" (a random
	// port on loopback).
	Addr string
	// StoreDir holds the JetStream files. Required.
	StoreDir string
	// Name is the server's name, unique in a cluster. Default: generated.
	Name string
	// Cluster, if set, is the name of the NATS cluster to form with
	// Routes over ClusterAddr (required then).
	Cluster     string
	ClusterAddr string
	Routes      []string
	// ReadyTimeout bounds the wait for the server to accept connections.
	// Default 10 s; a loaded machine may need more.
	ReadyTimeout time.Duration
}

// StartServer starts an embedded NATS server with JetStream and waits
// until it accepts connections; its ClientURL is what DialNATS takes.
// Stop it with Shutdown and WaitForShutdown.
//
// opts may be nil, but StoreDir is required: nil fails with an *Error.
// The options are read, not kept: the caller may change or reuse them
// afterwards.
func StartServer(opts *ServerOptions) (*server.Server, error) {
	if opts == nil {
		return nil, &Error{Op: "start server", Err: errors.New("nil ServerOptions: StoreDir is required")}
	}
	o := *opts
	host, port, err := splitAddr(o.Addr, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	so := &server.Options{
		Host: host, Port: port, ServerName: o.Name,
		JetStream: true, StoreDir: o.StoreDir,
		NoLog: true, NoSigs: true,
	}
	if o.Cluster != "" {
		ch, cp, err := splitAddr(o.ClusterAddr, "")
		if err != nil {
			return nil, err
		}
		so.Cluster = server.ClusterOpts{Name: o.Cluster, Host: ch, Port: cp}
		so.Routes = server.RoutesFromStr(strings.Join(o.Routes, ","))
	}
	s, err := server.NewServer(so)
	if err != nil {
		return nil, &Error{Op: "start server", Subject: o.Addr, Err: err}
	}
	s.Start()
	wait := o.ReadyTimeout
	if wait <= 0 {
		wait = 10 * time.Second
	}
	if !s.ReadyForConnections(wait) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, &Error{Op: "start server", Subject: o.Addr, Err: fmt.Errorf("not ready after %v", wait)}
	}
	return s, nil
}

func splitAddr(addr, def string) (string, int, error) {
	if addr == "" {
		addr = def
	}
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", 0, &Error{Op: "address", Subject: addr, Err: errors.New("missing port")}
	}
	var port int
	if _, err := fmt.Sscanf(addr[i+1:], "%d", &port); err != nil || port < 0 || port > 65535 {
		return "", 0, &Error{Op: "address", Subject: addr, Err: errors.New("bad port")}
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return addr[:i], port, nil
}
