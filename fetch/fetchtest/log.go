package fetchtest

import (
	"net/url"
	"slices"
	"sort"
	"time"
)

// Request is one entry of the web's request log.
type Request struct {
	Host      string    // host name, lower case, without port
	Method    string    // GET, HEAD, ...
	Path      string    // path and query as requested (the request URI)
	UserAgent string    // the User-Agent header
	Cookie    string    // the Cookie header, "" if none
	ConnID    uint64    // which TCP connection carried it (1, 2, ...)
	Remote    string    // the client's address as the server saw it, IP:port
	Start     time.Time // when the handler began (before any latency)
	End       time.Time // when the handler returned
	Status    int       // status sent (499 if the client left during latency)
	Bytes     int64     // body bytes written (after compression)
}

// Log returns a copy of the request log, in order of completion. It grows by
// one entry per request (about 200 bytes) until ResetLog.
func (w *Web) Log() []Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.log)
}

// ResetLog empties the request log.
func (w *Web) ResetLog() {
	w.mu.Lock()
	w.log = nil
	w.mu.Unlock()
}

// MaxConcurrency returns, for each host in log, the largest number of
// requests to it that were in progress at the same time. A polite crawler
// scores 1 on every host. A request ending at the very instant another starts
// does not overlap it. O(n log n).
func MaxConcurrency(log []Request) map[string]int {
	type event struct {
		t     time.Time
		delta int
	}
	by := make(map[string][]event)
	for _, r := range log {
		by[r.Host] = append(by[r.Host], event{r.Start, +1}, event{r.End, -1})
	}
	out := make(map[string]int, len(by))
	for host, ev := range by {
		sort.Slice(ev, func(i, j int) bool {
			if !ev[i].t.Equal(ev[j].t) {
				return ev[i].t.Before(ev[j].t)
			}
			return ev[i].delta < ev[j].delta // ends first
		})
		cur, best := 0, 0
		for _, e := range ev {
			cur += e.delta
			best = max(best, cur)
		}
		out[host] = best
	}
	return out
}

// MinGap returns, for each host with at least two requests in log, the
// smallest time between the start of a request and the end of the latest
// earlier-started request to that host. A negative gap means two requests
// overlapped. Filter the log first (for example to drop robots.txt fetches)
// if some requests should not count. O(n log n).
func MinGap(log []Request) map[string]time.Duration {
	by := make(map[string][]Request)
	for _, r := range log {
		by[r.Host] = append(by[r.Host], r)
	}
	out := make(map[string]time.Duration)
	for host, rs := range by {
		if len(rs) < 2 {
			continue
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
		lastEnd := rs[0].End
		gap := time.Duration(1<<63 - 1)
		for _, r := range rs[1:] {
			gap = min(gap, r.Start.Sub(lastEnd))
			if r.End.After(lastEnd) {
				lastEnd = r.End
			}
		}
		out[host] = gap
	}
	return out
}

// RobotsViolations returns every logged request (from any client) that the
// robots.txt of its host forbids to agent (a product token such as
// "crawlkit"; a full User-Agent string is reduced to its token). Requests
// for robots.txt itself, and for the hops of a redirected robots.txt, never
// count. O(len(log)).
func (w *Web) RobotsViolations(agent string) []Request {
	var out []Request
	for _, r := range w.Log() {
		h := w.byName[r.Host]
		if h == nil {
			continue
		}
		u, err := url.ParseRequestURI(r.Path)
		if err != nil {
			continue
		}
		pq := u.EscapedPath()
		if u.RawQuery != "" {
			pq += "?" + u.RawQuery
		}
		if isRobotsPath(h, pq) {
			continue
		}
		if !allowedBy(robotsOf(h), agent, pq) {
			out = append(out, r)
		}
	}
	return out
}
