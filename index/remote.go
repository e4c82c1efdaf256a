package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
)

// Transport carries one request message to a node and returns its reply,
// like http.RoundTripper for index messages. The cluster package provides
// one over NATS request-reply; Handler is the in-process loopback. A
// Transport must be safe for concurrent use and must not retain req.
type Transport interface {
	RoundTrip(ctx context.Context, req []byte) ([]byte, error)
}

// TransportFunc adapts a function to Transport.
type TransportFunc func(ctx context.Context, req []byte) ([]byte, error)

// RoundTrip calls f.
func (f TransportFunc) RoundTrip(ctx context.Context, req []byte) ([]byte, error) { return f(ctx, req) }

// Message kinds of the wire protocol (first byte of a request).
const (
	msgSearch   = 1
	msgStats    = 2
	msgPostings = 3
)

// wireVersion is the second byte of every request; a node refuses other
// versions instead of misreading them.
const wireVersion = 1

// Remote is a Searcher and PostingSource whose node sits behind a
// Transport: it encodes calls into compact binary messages (varints,
// length-prefixed strings, gap-encoded postings) and decodes the replies,
// rejecting malformed ones with ErrCorrupt. Safe for concurrent use if the
// Transport is.
type Remote struct {
	T Transport
}

var (
	_ Searcher      = (*Remote)(nil)
	_ PostingSource = (*Remote)(nil)
)

// NewRemote returns a Remote over t.
func NewRemote(t Transport) *Remote { return &Remote{T: t} }

func (r *Remote) call(ctx context.Context, op string, req []byte) (*dec, error) {
	resp, err := r.T.RoundTrip(ctx, req)
	if err != nil {
		return nil, &Error{Op: op, Subject: "remote", Err: err}
	}
	d := &dec{b: resp}
	switch d.byte1() {
	case 0:
		return d, nil
	case 1:
		msg := d.str()
		if d.err != nil {
			break
		}
		return nil, &Error{Op: op, Subject: "remote", Err: errors.New(msg)}
	}
	return nil, &Error{Op: op, Subject: "remote", Err: fmt.Errorf("%w: bad reply", ErrCorrupt)}
}

func header(kind byte) enc { return enc{b: []byte{kind, wireVersion}} }

// Search sends q and global to the node.
func (r *Remote) Search(ctx context.Context, q Query, global *Stats) (*Result, error) {
	q = q.Normalize()
	e := header(msgSearch)
	encodeQuery(&e, q)
	encodeStats(&e, global)
	d, err := r.call(ctx, "search", e.b)
	if err != nil {
		return nil, err
	}
	res := decodeResult(d)
	if d.err != nil || len(d.b) != 0 || !ranked(res.Hits, q.K) {
		return nil, &Error{Op: "search", Subject: "remote", Err: fmt.Errorf("%w: bad result", ErrCorrupt)}
	}
	return res, nil
}

// ranked reports whether hits is what a Result holds: at most k hits with
// finite scores, best first. A remote answer that is not is refused, not
// passed on as a ranking.
func ranked(hits []Hit, k int) bool {
	if len(hits) > k {
		return false
	}
	for i, h := range hits {
		if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) || i > 0 && !better(hits[i-1].Score, hits[i-1].URL, h.Score, h.URL) {
			return false
		}
	}
	return true
}

// Stats asks the node for its statistics.
func (r *Remote) Stats(ctx context.Context, terms []string) (*Stats, error) {
	e := header(msgStats)
	encodeTerms(&e, terms)
	d, err := r.call(ctx, "stats", e.b)
	if err != nil {
		return nil, err
	}
	st := decodeStats(d)
	if d.err != nil || st == nil || len(d.b) != 0 {
		return nil, &Error{Op: "stats", Subject: "remote", Err: fmt.Errorf("%w: bad stats", ErrCorrupt)}
	}
	return st, nil
}

// Postings fetches the posting lists of terms from the node.
func (r *Remote) Postings(ctx context.Context, terms []string) ([]PostingList, error) {
	e := header(msgPostings)
	encodeTerms(&e, terms)
	d, err := r.call(ctx, "postings", e.b)
	if err != nil {
		return nil, err
	}
	if n := d.count(1); d.err != nil || n != len(terms) {
		return nil, &Error{Op: "postings", Subject: "remote", Err: fmt.Errorf("%w: wrong number of lists", ErrCorrupt)}
	}
	out := make([]PostingList, len(terms))
	for i := range out {
		out[i].Term = terms[i]
		if d.byte1() == 1 {
			pl := d.postings(uint64(^uint32(0)), nil)
			if pl != nil {
				out[i].Docs, out[i].Freqs = pl.docs, pl.freqs32()
			}
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, &Error{Op: "postings", Subject: "remote", Err: fmt.Errorf("%w: bad postings", ErrCorrupt)}
	}
	return out, nil
}

// Handler serves index messages for a node: Searcher answers search and
// stats requests, Postings answers postings requests (either may be nil).
// Its RoundTrip method decodes a request, calls the node and encodes the
// reply, so a Handler is also the in-process loopback Transport. Malformed
// requests get an error reply, never a panic.
type Handler struct {
	Searcher Searcher
	Postings PostingSource
}

var _ Transport = (*Handler)(nil)

// RoundTrip handles one request message.
func (h *Handler) RoundTrip(ctx context.Context, req []byte) ([]byte, error) {
	out, err := h.handle(ctx, req)
	if err != nil {
		e := enc{b: []byte{1}}
		e.str(err.Error())
		return e.b, nil
	}
	return out, nil
}

var errBadRequest = fmt.Errorf("%w: bad request", ErrCorrupt)

func (h *Handler) handle(ctx context.Context, req []byte) ([]byte, error) {
	if len(req) < 2 || req[1] != wireVersion {
		return nil, errBadRequest
	}
	d := &dec{b: req[2:]}
	out := enc{b: []byte{0}}
	switch req[0] {
	case msgSearch:
		q := decodeQuery(d)
		st := decodeStats(d)
		if d.err != nil || len(d.b) != 0 || h.Searcher == nil {
			return nil, errBadRequest
		}
		res, err := h.Searcher.Search(ctx, q, st)
		if err != nil {
			return nil, err
		}
		encodeResult(&out, res)
	case msgStats:
		terms := decodeTerms(d)
		if d.err != nil || len(d.b) != 0 || h.Searcher == nil {
			return nil, errBadRequest
		}
		st, err := h.Searcher.Stats(ctx, terms)
		if err != nil {
			return nil, err
		}
		encodeStats(&out, st)
	case msgPostings:
		terms := decodeTerms(d)
		if d.err != nil || len(d.b) != 0 || h.Postings == nil {
			return nil, errBadRequest
		}
		lists, err := h.Postings.Postings(ctx, terms)
		if err != nil {
			return nil, err
		}
		out.uvarint(uint64(len(lists)))
		for _, l := range lists {
			if l.Docs == nil || l.Docs.IsEmpty() {
				out.byte1(0)
				continue
			}
			out.byte1(1)
			if int(l.Docs.GetCardinality()) != len(l.Freqs) {
				return nil, fmt.Errorf("%w: term %q: %d ids, %d frequencies", ErrCorrupt, l.Term, l.Docs.GetCardinality(), len(l.Freqs))
			}
			out.postings(l.Docs, len(l.Freqs), func(i int) uint32 { return l.Freqs[i] })
		}
	default:
		return nil, errBadRequest
	}
	return out.b, nil
}

// encodeTerms writes a term list; nil (every term) and empty differ.
func encodeTerms(e *enc, terms []string) {
	if terms == nil {
		e.byte1(0)
		return
	}
	e.byte1(1)
	e.uvarint(uint64(len(terms)))
	for _, t := range terms {
		e.str(t)
	}
}

func decodeTerms(d *dec) []string {
	if d.byte1() == 0 {
		return nil
	}
	n := d.count(1)
	terms := make([]string, 0, n)
	for range n {
		terms = append(terms, d.str())
	}
	return terms
}

func encodeQuery(e *enc, q Query) {
	encodeTerms(e, q.Terms)
	e.byte1(byte(q.Op))
	e.uvarint(uint64(q.K))
}

func decodeQuery(d *dec) Query {
	q := Query{Terms: decodeTerms(d)}
	op := d.byte1()
	if op > byte(And) {
		d.fail(errors.New("bad op"))
	}
	q.Op = Op(op)
	k := d.uvarint()
	if k > 1<<20 {
		d.fail(errors.New("k too large"))
	}
	q.K = int(k)
	return q
}

func encodeStats(e *enc, st *Stats) {
	if st == nil {
		e.byte1(0)
		return
	}
	e.byte1(1)
	e.varint(st.Docs)
	e.varint(st.Length)
	e.uvarint(uint64(len(st.DF)))
	for _, t := range st.Terms() { // sorted: deterministic messages
		e.str(t)
		e.varint(st.DF[t])
	}
}

func decodeStats(d *dec) *Stats {
	if d.byte1() == 0 {
		return nil
	}
	st := &Stats{Docs: d.varint(), Length: d.varint()}
	n := d.count(2)
	st.DF = make(map[string]int64, n)
	for range n {
		t := d.str()
		st.DF[t] = d.varint()
	}
	return st
}

func encodeResult(e *enc, r *Result) {
	e.uvarint(uint64(len(r.Hits)))
	for _, h := range r.Hits {
		e.str(h.URL)
		e.str(h.Title)
		e.float(h.Score)
	}
	e.varint(r.Postings)
}

func decodeResult(d *dec) *Result {
	n := d.count(10)
	r := &Result{Hits: make([]Hit, 0, n)}
	for range n {
		r.Hits = append(r.Hits, Hit{URL: d.str(), Title: d.str(), Score: d.float()})
	}
	r.Postings = d.varint()
	return r
}

// Meter is a Transport that counts the messages and bytes passing through
// another Transport: the "bytes moved between nodes" of a partitioning.
// Safe for concurrent use.
type Meter struct {
	T Transport

	calls, sent, received atomic.Int64
}

// RoundTrip forwards to m.T and counts.
func (m *Meter) RoundTrip(ctx context.Context, req []byte) ([]byte, error) {
	m.calls.Add(1)
	m.sent.Add(int64(len(req)))
	resp, err := m.T.RoundTrip(ctx, req)
	m.received.Add(int64(len(resp)))
	return resp, err
}

// Counts returns the number of round trips and the bytes sent and received
// so far.
func (m *Meter) Counts() (calls, sent, received int64) {
	return m.calls.Load(), m.sent.Load(), m.received.Load()
}
