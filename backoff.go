package crawlkit

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/internal/retryafter"
)

// BackoffOptions tunes the per-host back-off: how the crawl leaves a
// host alone that tells it, or shows it, that it is overloaded.
//
// An incident is an answer with one of Statuses (429 Too Many Requests
// and 503 Service Unavailable) without Retry-After, or, when Failures is
// set, that many connection failures in a row (refused, reset, timed
// out, no DNS answer). Each incident blocks the whole host, not only the
// URL: no request goes to it for Base, then 2 × Base at the next
// incident, then 4 × Base, up to Max (and never beyond Config.MaxDelay,
// the cap of every wait), each block stretched or shrunk at random by up
// to Jitter of its length so that hosts blocked together do not all
// come back together. A host without an incident for Forgive after its last
// block ended starts again at Base. The URL that met the incident is
// retried after the block while it has retries left (Config.MaxRetries).
//
// A Retry-After is the server's own word: the host is left alone for as
// long as it asks (within Config.MaxDelay), and the level does not grow.
//
// This is the scheme of StormCrawler's URLFrontier and Nutch (60 s
// doubling, capped at a day, forgiven after 30 quiet minutes), with the
// state kept where the politeness state is: in the State's record of the
// host (KeyRecord.Backoff), so a resumed crawl keeps backing off, and
// one incident per block at most, since a blocked host gets no request
// that could raise another. Stats.Outcomes counts the retries (Retried)
// and Stats.Backoffs the blocks.
//
// Connection failures are not incidents by default: a host that is
// gone for good fails every URL it has, and blocks of minutes between
// every few of them would hold the end of the crawl for hours, where
// the per-URL retries (1 s, 2 s, 4 s ..., Config.MaxRetries) let the
// crawl finish. Set Failures for a crawl that must not press a host
// that drops connections under load.
type BackoffOptions struct {
	// Base is the first block. Default 60 s; negative turns the
	// back-off off (429 and 503 then retry the URL alone, after
	// Retry-After or 1 s, 2 s, 4 s ...).
	Base time.Duration
	// Max caps a block. Default 24 h.
	Max time.Duration
	// Jitter is the largest fraction by which a block is lengthened or
	// shortened at random. Default 0.1; negative means none.
	Jitter float64
	// Forgive is how long after its last block a host must go without an
	// incident to start again at Base. Default 30 min.
	Forgive time.Duration
	// Statuses are the answers that are incidents when they come
	// without Retry-After. Default 429 and 503 (403 is left out: it
	// mostly means forbidden, not busy). A status listed here is retried
	// like 429 and 503.
	Statuses []int
	// Failures, if above 0, is how many connection failures in a row
	// make an incident. Default 0: never (see above).
	Failures int
}

// resolved returns the options with their defaults, or an error naming
// an invalid field.
func (o *BackoffOptions) resolved() (BackoffOptions, error) {
	var r BackoffOptions
	if o != nil {
		r = *o
		r.Statuses = slices.Clone(o.Statuses)
	}
	switch {
	case math.IsNaN(r.Jitter) || math.IsInf(r.Jitter, 0) || r.Jitter >= 1:
		return r, fmt.Errorf("Backoff.Jitter %v: want a fraction below 1", r.Jitter)
	case r.Max < 0 || r.Forgive < 0:
		return r, fmt.Errorf("Backoff.Max %v, Forgive %v: want ≥ 0", r.Max, r.Forgive)
	case r.Base > 0 && r.Max > 0 && r.Max < r.Base:
		return r, fmt.Errorf("Backoff.Max %v below Base %v", r.Max, r.Base)
	}
	for _, s := range r.Statuses {
		if s < 400 || s > 599 {
			return r, fmt.Errorf("Backoff.Statuses: %d is not an error status (400..599)", s)
		}
	}
	if r.Base == 0 {
		r.Base = time.Minute
	}
	if r.Max == 0 {
		r.Max = max(24*time.Hour, r.Base)
	}
	if r.Jitter == 0 {
		r.Jitter = 0.1
	}
	r.Jitter = max(r.Jitter, 0)
	if r.Forgive == 0 {
		r.Forgive = 30 * time.Minute
	}
	if r.Statuses == nil {
		r.Statuses = []int{429, 503}
	}
	if r.Failures < 0 {
		return r, fmt.Errorf("Backoff.Failures %d: want ≥ 0", r.Failures)
	}
	return r, nil
}

// on reports whether the back-off is on.
func (o *BackoffOptions) on() bool { return o.Base > 0 }

// throttles reports whether status is an incident (without Retry-After).
func (o *BackoffOptions) throttles(status int) bool {
	return o.on() && slices.Contains(o.Statuses, status)
}

// block returns the length of the block of an incident at level (1 for
// the first), with its jitter.
func (o *BackoffOptions) block(level int32) time.Duration {
	d := o.Base
	for i := int32(1); i < level && d < o.Max; i++ {
		d *= 2
	}
	d = min(d, o.Max)
	if o.Jitter > 0 {
		d = time.Duration(float64(d) * (1 + o.Jitter*(2*rand.Float64()-1)))
	}
	return d
}

// busy reports whether status says the server is busy: 429, 503, or a
// status of BackoffOptions.Statuses.
func (c *Crawler) busy(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable || c.backoff.throttles(status)
}

// retryBusy handles a busy answer (see busy) to w's fetch: the URL is
// retried after the server's Retry-After or, without one, after the
// host's back-off block (set in commit, for the whole host). It reports
// whether the URL was retried.
func (c *Crawler) retryBusy(ctx context.Context, w *work, resp *fetch.Response) bool {
	ra, said := retryafter.Parse(resp.Header.Get("Retry-After"), time.Now())
	w.res.RetryAfter = ra
	wait := ra // "0" too: at once, after the politeness gap
	switch {
	case said:
	case c.backoff.throttles(resp.Status):
		w.signal, wait = signalThrottle, backoffWait
	default:
		wait = scheduledWait
	}
	return c.retry(ctx, w, wait)
}

// signal is what a lease's fetch says about its host's load.
type signal uint8

const (
	signalNone     signal = iota // no contact, or nothing to learn
	signalAnswered               // the host answered, and not with an incident
	signalThrottle               // an incident status without Retry-After
	signalFailed                 // a connection failure
)

// backoffLocked updates the back-off state of the lease's host from its
// signal and returns the host's block (0 when none) and the delta for
// the State (nil when nothing changed). Called with commitMu held.
func (c *Crawler) backoffLocked(ctx context.Context, w *work, key string, now time.Time) (time.Duration, *Backoff, error) {
	if !c.backoff.on() || w.signal == signalNone {
		return 0, nil, nil
	}
	bo, known := c.bo[key]
	if !known && w.signal == signalAnswered {
		return 0, nil, nil // the common case: a host never in trouble
	}
	if !known {
		// The first trouble of the host in this run: an earlier run may
		// have left it backed off.
		q := &Lookup{Keys: []string{key}}
		if err := c.state.Lookup(ctx, q); err != nil {
			return 0, nil, &Error{Op: "state lookup", Err: err}
		}
		bo = q.Records[0].Backoff
	}
	old := bo
	var block time.Duration
	switch w.signal {
	case signalAnswered:
		bo.Failures = 0
	case signalFailed:
		if c.backoff.Failures == 0 {
			return 0, nil, nil
		}
		bo.Failures++
		if int(bo.Failures) < c.backoff.Failures {
			break
		}
		bo.Failures = 0
		fallthrough
	case signalThrottle:
		if !bo.Last.IsZero() && now.Sub(bo.Last) > c.backoff.Forgive {
			bo.Level = 0
		}
		bo.Level = min(bo.Level+1, 64)
		block = min(c.backoff.block(bo.Level), c.pol.MaxDelay)
		bo.Last = now.Add(block)
		c.c.backoffs.Add(1)
		c.cfg.Logger.Info("crawlkit: host backed off", "host", strings.TrimPrefix(key, "h:"),
			"for", block.Round(time.Millisecond), "level", bo.Level, "status", w.res.Status)
	}
	if bo == (Backoff{}) {
		delete(c.bo, key)
	} else {
		c.bo[key] = bo
	}
	if bo == old {
		return block, nil, nil
	}
	return block, &bo, nil
}

// signalOf classifies a fetch error for the back-off.
func signalOf(k fetch.Kind) signal {
	if transient(k) {
		return signalFailed
	}
	return signalNone
}
