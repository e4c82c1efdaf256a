package fetchtest

import (
	"bytes"
	"compress/gzip"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

var gzPool = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

// statusWriter records what the handler sent, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Flush lets slow answers push bytes out as they go.
func (s *statusWriter) Flush() {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap serves http.ResponseController.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(p)
	s.bytes += int64(n)
	return n, err
}

func (w *Web) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: rw}
	host := hostOnly(r.Host)
	defer func() {
		id, _ := r.Context().Value(connKey{}).(uint64)
		remote, _ := r.Context().Value(remoteKey{}).(string)
		req := Request{
			Host: host, Method: r.Method, Path: r.URL.RequestURI(),
			UserAgent: r.UserAgent(), Cookie: r.Header.Get("Cookie"), ConnID: id, Remote: remote,
			Start: start, End: time.Now(), Status: sw.status, Bytes: sw.bytes,
		}
		w.mu.Lock()
		w.log = append(w.log, req)
		w.mu.Unlock()
	}()

	lat := w.cfg.Latency
	if d, ok := w.cfg.HostLatency[host]; ok {
		lat = d
	}
	if lat > 0 {
		t := time.NewTimer(lat)
		select {
		case <-t.C:
		case <-w.closing:
			t.Stop()
			sw.status = 499
			return
		case <-r.Context().Done():
			t.Stop()
			sw.status = 499 // client went away, as nginx logs it
			return
		}
	}

	h := w.lookupHost(host)
	if h == nil {
		http.Error(sw, "fetchtest: unknown host "+host, http.StatusMisdirectedRequest)
		return
	}
	if l, ok := w.cfg.RateLimits[host]; ok && w.throttled(host, start, l.Interval) {
		http.Error(sw, strconv.Itoa(l.Status)+" "+http.StatusText(l.Status), l.Status)
		return
	}
	if h.kind == kindMembers {
		w.serveMembers(sw, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		sw.Header().Set("Allow", "GET, HEAD")
		http.Error(sw, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rt := w.route(h, r.URL.EscapedPath(), r.URL.RawQuery)
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)

	switch rt.kind {
	case routeScript, routeScriptFile:
		path := r.URL.EscapedPath()
		if h.kind == kindApp && w.serveApp(sw, r, path, buf) || h.kind == kindShop && w.serveShop(sw, r, path, buf) {
			return
		}
		http.Error(sw, "404 page not found", http.StatusNotFound)
	case routePage:
		w.servePage(sw, r, h, rt.page, buf)
	case routeCharset:
		ctype := w.renderCharset(buf, h, rt.page)
		w.send(sw, r, 200, ctype, buf.Bytes(), time.Time{})
	case routeJavadoc:
		renderJavadoc(buf, rt.page)
		w.send(sw, r, 200, "text/html", buf.Bytes(), time.Time{})
	case routeAlias:
		w.renderAlias(buf, rt.page)
		w.send(sw, r, 200, "text/html; charset=utf-8", buf.Bytes(), time.Time{})
	case routeCanon:
		w.serveCanon(sw, r, rt.page, buf)
	case routeRobots:
		v := robotsOf(h)
		if rt.name != "" {
			// A BusyRobots file not served yet when routed: decide
			// again under the lock, as concurrent requests may race.
			rt.status = v.status
			if w.countRequest(rt.name) == 0 {
				rt.status = 503
				sw.Header().Set("Retry-After", w.retryAfterValue())
			}
		}
		if rt.status != 200 {
			http.Error(sw, http.StatusText(rt.status), rt.status)
			return
		}
		w.send(sw, r, 200, "text/plain; charset=utf-8", []byte(w.renderRobots(v, w.robotsHost(h))), time.Time{})
	case routeSitemap:
		w.serveSitemap(sw, r, h, rt.name, buf)
	case routeRedirect:
		sw.Header().Set("Location", rt.location)
		sw.Header().Set("Content-Type", "text/html; charset=utf-8")
		sw.WriteHeader(rt.status)
		_, _ = sw.Write([]byte("<html><body><a href=\"" + rt.location + "\">moved</a></body></html>\n"))
	case routeStatus, routeRetryOK:
		if n, ok := retryLimit(rt.name); ok && h.kind == kindStatus {
			// Decide again under the lock: concurrent requests each
			// consume one failure.
			if w.countRequest(rt.name) >= n {
				w.send(sw, r, 200, "text/html; charset=utf-8",
					[]byte("<!DOCTYPE html><html><head><title>Recovered</title></head><body><p>Back after "+
						strconv.Itoa(n)+" failures.</p></body></html>\n"), time.Time{})
				return
			}
			rt.status = 503
		}
		if rt.status == 429 || rt.status == 503 {
			sw.Header().Set("Retry-After", w.retryAfterValue())
		}
		http.Error(sw, strconv.Itoa(rt.status)+" "+http.StatusText(rt.status), rt.status)
	case routeHostile:
		w.serveHostile(sw, r, r.URL.EscapedPath())
	case routeTrap:
		w.renderTrap(buf, h, r.URL.EscapedPath())
		w.send(sw, r, 200, "text/html; charset=utf-8", buf.Bytes(), time.Time{})
	default:
		http.Error(sw, "404 page not found", http.StatusNotFound)
	}
}

func (w *Web) servePage(sw http.ResponseWriter, r *http.Request, h *hostInfo, j int, buf *bytes.Buffer) {
	o := h
	if h.kind == kindMirror {
		o = w.ordinary[h.index]
	}
	m := o.model()
	p := m.pages[j]
	var ctype string
	switch p.kind {
	case pagePDF:
		ctype = "application/pdf"
		w.renderPDF(buf, o, j)
	case pagePNG:
		ctype = "image/png"
		w.renderPNG(buf, o, j)
	case pageJSON:
		ctype = "application/json"
		w.renderJSON(buf, o, j)
	default:
		ctype = "text/html; charset=utf-8"
		w.renderHTML(buf, o, j)
	}
	_, since := w.version(o.index, j, p.period)
	w.send(sw, r, 200, ctype, buf.Bytes(), since)
}

// send writes body with an ETag, Last-Modified (when lastMod is set), answers
// conditional requests with 304 and compresses text when the client accepts
// gzip.
func (w *Web) send(sw http.ResponseWriter, r *http.Request, status int, ctype string, body []byte, lastMod time.Time) {
	hd := sw.Header()
	hd.Set("Content-Type", ctype)
	hf := fnv.New64a()
	_, _ = hf.Write(body)
	etag := `"` + strconv.FormatUint(hf.Sum64(), 16) + `"`
	hd.Set("ETag", etag)
	if !lastMod.IsZero() {
		hd.Set("Last-Modified", lastMod.UTC().Format(http.TimeFormat))
	}
	if status == 200 {
		if inm := r.Header.Get("If-None-Match"); inm != "" {
			if inm == etag || inm == "*" {
				sw.WriteHeader(http.StatusNotModified)
				return
			}
		} else if ims := r.Header.Get("If-Modified-Since"); ims != "" && !lastMod.IsZero() {
			if t, err := http.ParseTime(ims); err == nil && !lastMod.Truncate(time.Second).After(t) {
				sw.WriteHeader(http.StatusNotModified)
				return
			}
		}
	}
	compressible := strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "application/json") ||
		strings.HasPrefix(ctype, "application/xml")
	if compressible && len(body) > 128 && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		zb := bufPool.Get().(*bytes.Buffer)
		zb.Reset()
		defer bufPool.Put(zb)
		zw := gzPool.Get().(*gzip.Writer)
		zw.Reset(zb)
		_, _ = zw.Write(body)
		_ = zw.Close()
		gzPool.Put(zw)
		hd.Set("Content-Encoding", "gzip")
		hd.Set("Vary", "Accept-Encoding")
		body = zb.Bytes()
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	sw.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = sw.Write(body)
	}
}

// acceptsGzip reports whether an Accept-Encoding value admits gzip (q > 0).
func acceptsGzip(ae string) bool {
	for part := range strings.SplitSeq(ae, ",") {
		tok, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(tok), "gzip") {
			continue
		}
		params = strings.ReplaceAll(params, " ", "")
		return !(params == "q=0" || params == "q=0.0" || params == "q=0.00" || params == "q=0.000")
	}
	return false
}

// throttled records a request to a rate-limited host starting at start
// and reports whether it came sooner than interval after the previous one.
func (w *Web) throttled(host string, start time.Time, interval time.Duration) bool {
	w.rateMu.Lock()
	defer w.rateMu.Unlock()
	if w.lastReq == nil {
		w.lastReq = make(map[string]time.Time)
	}
	last, seen := w.lastReq[host]
	w.lastReq[host] = start
	return seen && start.Sub(last) < interval
}

// retryAfterValue is the Retry-After header of 429 and 503 answers:
// Config.RetryAfter in whole seconds, rounded up.
func (w *Web) retryAfterValue() string {
	return strconv.Itoa(int((w.cfg.RetryAfter + time.Second - 1) / time.Second))
}

// busyRobots returns the key counting the requests for h's robots.txt
// when Config.BusyRobots makes h answer the first one 503.
func (w *Web) busyRobots(h *hostInfo) (string, bool) {
	n := w.cfg.BusyRobots
	if n <= 0 || h.kind != kindOrdinary || h.index%n != n-1 || robotsVariants[h.variant].status != 200 {
		return "", false
	}
	return "robots.txt of " + h.name, true
}

// requests returns how many requests key has counted (countRequest).
func (w *Web) requests(key string) int {
	w.retryMu.Lock()
	defer w.retryMu.Unlock()
	return w.retries[key]
}

// countRequest counts a request for key and returns the count before it.
func (w *Web) countRequest(key string) int {
	w.retryMu.Lock()
	defer w.retryMu.Unlock()
	w.retries[key]++
	return w.retries[key] - 1
}
