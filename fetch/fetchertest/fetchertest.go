package fetchertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// Harness tells Run how to make the fetcher under test.
type Harness struct {
	// New returns the fetcher under test, answering for the URLs of w: a
	// fetcher that goes over HTTP reaches w's server on 127.0.0.1 (see
	// WebOptions), one that answers from stored content is filled with
	// w's answers to URLs(w) (see Record). It is called once per
	// subtest; cleanup (Close) belongs in t.Cleanup.
	New func(t *testing.T, w *fetchtest.Web) fetch.Fetcher
	// Skip names subtests that the implementation is known to fail, each
	// with the reason, which the subtest reports as it skips.
	Skip map[string]string
	// Rendered declares a fetcher that may answer an HTML page with the
	// document after its scripts ran (Response.Rendered, a browser's
	// serialisation of the DOM). Such a body is checked for the title,
	// the text and the links the page as received has, not byte for
	// byte; Wire, when kept, must still be the bytes received. Since
	// rendering costs a browser tab and a few hundred milliseconds a
	// page, Concurrent then fetches each URL about once across its
	// workers instead of once per worker.
	Rendered bool
}

// Run runs the conformance suite as subtests of t, on a simulated web of
// its own.
func Run(t *testing.T, h Harness) {
	w := newWeb(t)
	want := expectations(t, w)
	for i := range want {
		want[i].rendered = h.Rendered
	}
	tests := []struct {
		name string
		fn   func(*testing.T, fetch.Fetcher, *fetchtest.Web, []expected)
	}{
		{"Responses", testResponses},
		{"Redirects", testRedirects},
		{"NotModified", testNotModified},
		{"Unknown", testUnknown},
		{"NoRequest", testNoRequest},
		{"NotHTTP", testNotHTTP},
		{"Canceled", testCanceled},
		{"Deadline", testDeadline},
		{"CancelDuringFetch", testCancelDuring},
		{"Concurrent", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if reason, ok := h.Skip[tc.name]; ok {
				t.Skip("known deviation: " + reason)
			}
			tc.fn(t, h.New(t, w), w, want)
		})
	}
}

// expected is what a fetcher must answer for one URL.
type expected struct {
	url         string
	status      int
	header      http.Header
	body        []byte // after charset conversion for text
	contentType string
	charset     string
	location    string // canonical target of a redirect, "" otherwise
	rendered    bool   // Harness.Rendered
}

// sameBody reports whether resp's body is the one x expects: the same
// bytes, or for a rendered page of a fetcher that renders, the same
// title, text and links.
func sameBody(x expected, resp *fetch.Response) bool {
	if !resp.Rendered {
		return bytes.Equal(resp.Body, x.body)
	}
	if !x.rendered || x.contentType != "text/html" {
		return false
	}
	p := fetch.HTML{Scripting: true}
	a, b := p.ParseBytes(x.body, resp.URL), p.ParseBytes(resp.Body, resp.URL)
	if a.Title != b.Title || a.Text != b.Text || len(a.Links) != len(b.Links) {
		return false
	}
	for i := range a.Links {
		if a.Links[i].URL.String() != b.Links[i].URL.String() || a.Links[i].Text != b.Links[i].Text {
			return false
		}
	}
	return true
}

// isText reports the types whose body a fetcher converts to UTF-8.
func isText(mt string) bool { return strings.HasPrefix(mt, "text/") || mt == "application/xhtml+xml" }

var canon = urlnorm.Canonicalizer{SortQuery: true}

// expectations takes the suite's expectations from w's own answers.
func expectations(t *testing.T, w *fetchtest.Web) []expected {
	t.Helper()
	var out []expected
	for _, e := range Record(t, w, URLs(w)) {
		p := parse(t, e)
		ct := p.header.Get("Content-Type")
		x := expected{url: e.URL, status: p.status, header: p.header, body: p.body, contentType: fetch.ContentTypeOf(ct, p.body)}
		if isText(x.contentType) {
			x.body, x.charset = fetch.ToUTF8(p.body, ct)
		}
		if p.status/100 == 3 && p.location != "" {
			base, _ := url.Parse(e.URL)
			loc, err := urlnorm.Resolve(base, p.location)
			if err != nil {
				t.Fatalf("fetchertest: %s: Location %q: %v", e.URL, p.location, err)
			}
			if x.location, err = canon.Canonical(loc.String()); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, x)
	}
	return out
}

// get fetches rawURL, with etag if not empty, under a generous deadline.
func get(f fetch.Fetcher, rawURL string, etag string) (*fetch.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return f.Fetch(ctx, &fetch.Request{URL: u, ETag: etag})
}

// wantError checks that err is a *fetch.Error of kind k wrapping target
// (nil: any cause), and returns it.
func wantError(t *testing.T, what string, resp *fetch.Response, err error, k fetch.Kind, target error) *fetch.Error {
	t.Helper()
	var fe *fetch.Error
	switch {
	case err == nil:
		t.Errorf("%s: status %d, no error; want a *fetch.Error of kind %q", what, resp.Status, k)
		return nil
	case !errors.As(err, &fe):
		t.Errorf("%s: error %v (%T) is not a *fetch.Error", what, err, err)
		return nil
	case fe.Kind != k:
		t.Errorf("%s: error %v of kind %q, want %q", what, err, fe.Kind, k)
	case target != nil && !errors.Is(err, target):
		t.Errorf("%s: error %v does not wrap %v", what, err, target)
	}
	if resp != nil {
		t.Errorf("%s: a response (status %d) beside the error", what, resp.Status)
	}
	return fe
}

// checkResponse compares one answer with its expectation.
func checkResponse(t *testing.T, x expected, resp *fetch.Response, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v (the web answers %d: a fetcher returns a response for every status)", x.url, err, x.status)
		return
	}
	if resp.URL == nil || resp.URL.String() != x.url {
		t.Errorf("%s: Response.URL = %v, want the requested URL", x.url, resp.URL)
	}
	if resp.Status != x.status {
		t.Errorf("%s: Status = %d, want %d", x.url, resp.Status, x.status)
	}
	if !sameBody(x, resp) {
		t.Errorf("%s: Body (%d bytes, rendered %v) %.60q differs from the web's (%d bytes) %.60q", x.url, len(resp.Body), resp.Rendered, resp.Body, len(x.body), x.body)
	}
	if resp.Rendered && resp.Wire != nil && bytes.Equal(resp.Wire, resp.Body) {
		t.Errorf("%s: rendered, and Wire holds the rendered body, not the bytes received", x.url)
	}
	if resp.ContentType != x.contentType || resp.Charset != x.charset {
		t.Errorf("%s: ContentType %q, Charset %q; want %q, %q", x.url, resp.ContentType, resp.Charset, x.contentType, x.charset)
	}
	if resp.Header == nil {
		t.Errorf("%s: Header is nil", x.url)
		return
	}
	for _, k := range []string{"Content-Type", "Content-Encoding", "ETag", "Last-Modified", "Retry-After", "Location"} {
		if g, w := resp.Header.Get(k), x.header.Get(k); g != w {
			t.Errorf("%s: Header %s = %q, want %q as received", x.url, k, g, w)
		}
	}
	if resp.ETag != x.header.Get("ETag") || resp.LastModified != x.header.Get("Last-Modified") {
		t.Errorf("%s: ETag %q, LastModified %q; want the validators %q, %q", x.url, resp.ETag, resp.LastModified, x.header.Get("ETag"), x.header.Get("Last-Modified"))
	}
	switch {
	case x.location == "" && resp.Location != nil:
		t.Errorf("%s: Location %v on a %d answer", x.url, resp.Location, resp.Status)
	case x.location != "":
		got := ""
		if resp.Location != nil {
			got, _ = canon.Canonical(resp.Location.String())
		}
		if resp.Location == nil || !resp.Location.IsAbs() || got != x.location {
			t.Errorf("%s: Location %v, want the absolute %s", x.url, resp.Location, x.location)
		}
	}
	if resp.Truncated {
		t.Errorf("%s: Truncated on a %d-byte body", x.url, len(x.body))
	}
	if resp.WireBytes < 0 {
		t.Errorf("%s: WireBytes %d", x.url, resp.WireBytes)
	}
	if tm := resp.Timings; tm.Total < 0 || tm.Total > 0 && (tm.DNS > tm.Total || tm.Connect > tm.Total || tm.FirstByte > tm.Total) {
		t.Errorf("%s: inconsistent Timings %+v", x.url, tm)
	}
	if resp.Addr.IsValid() && !resp.Addr.Addr().IsLoopback() {
		t.Errorf("%s: Addr %v: the web is on loopback", x.url, resp.Addr)
	}
}

func testResponses(t *testing.T, f fetch.Fetcher, _ *fetchtest.Web, want []expected) {
	statuses := map[int]bool{}
	for _, x := range want {
		resp, err := get(f, x.url, "")
		checkResponse(t, x, resp, err)
		statuses[x.status] = true
	}
	for _, s := range []int{200, 301, 404, 410, 429, 500, 503} {
		if !statuses[s] {
			t.Errorf("the suite's web answered no %d: the check is incomplete", s)
		}
	}
}

func testRedirects(t *testing.T, f fetch.Fetcher, w *fetchtest.Web, want []expected) {
	before := len(w.Log())
	n := 0
	for _, x := range want {
		if x.location == "" {
			continue
		}
		n++
		resp, err := get(f, x.url, "")
		if err != nil {
			t.Errorf("%s: %v", x.url, err)
			continue
		}
		if !resp.Redirect() || resp.URL.String() != x.url {
			t.Errorf("%s: status %d, URL %v, Redirect() %v: a redirect must come back unfollowed", x.url, resp.Status, resp.URL, resp.Redirect())
		}
	}
	if n < 3 {
		t.Fatalf("only %d redirects among the suite's URLs", n)
	}
	for _, r := range w.Log()[before:] {
		if r.Host != w.Host(fetchtest.Redirects) {
			t.Errorf("fetching redirects requested %s%s: a redirect was followed", r.Host, r.Path)
		}
	}
}

func testNotModified(t *testing.T, f fetch.Fetcher, _ *fetchtest.Web, want []expected) {
	n := 0
	for _, x := range want {
		etag := x.header.Get("ETag")
		if x.status != http.StatusOK || etag == "" {
			continue
		}
		n++
		resp, err := get(f, x.url, etag)
		if err != nil || !resp.NotModified() || len(resp.Body) != 0 || resp.URL.String() != x.url {
			t.Errorf("%s with its ETag: %v, %v; want 304 Not Modified without a body", x.url, summary(resp), err)
		}
		resp, err = get(f, x.url, `"not-the-etag"`)
		checkResponse(t, x, resp, err)
	}
	if n == 0 {
		t.Fatal("no page with an ETag among the suite's URLs")
	}
}

// summary describes a response in an error message.
func summary(r *fetch.Response) string {
	if r == nil {
		return "no response"
	}
	return fmt.Sprintf("status %d, %d bytes", r.Status, len(r.Body))
}

// testUnknown: a URL the fetcher has no answer for is either the web's
// 404 or a *fetch.Error, never anything else.
func testUnknown(t *testing.T, f fetch.Fetcher, w *fetchtest.Web, _ []expected) {
	for _, u := range []string{
		w.URL(w.OrdinaryHosts()[1], "/never-recorded"),
		"http://no-such-host.invalid:" + w.Port() + "/",
	} {
		resp, err := get(f, u, "")
		var fe *fetch.Error
		switch {
		case err != nil && !errors.As(err, &fe):
			t.Errorf("%s: error %v (%T) is not a *fetch.Error", u, err, err)
		case err != nil && resp != nil:
			t.Errorf("%s: a response beside the error %v", u, err)
		case err == nil && (resp == nil || resp.Status != http.StatusNotFound):
			t.Errorf("%s: %s; want 404 or a *fetch.Error", u, summary(resp))
		}
	}
}

func testNoRequest(t *testing.T, f fetch.Fetcher, _ *fetchtest.Web, _ []expected) {
	ctx := context.Background()
	resp, err := f.Fetch(ctx, nil)
	wantError(t, "Fetch(nil request)", resp, err, fetch.KindBadURL, fetch.ErrScheme)
	resp, err = f.Fetch(ctx, &fetch.Request{})
	wantError(t, "Fetch(request without URL)", resp, err, fetch.KindBadURL, fetch.ErrScheme)
}

// testNotHTTP: Request.URL must be an absolute http or https URL;
// anything else is refused before any lookup (fetch.ErrScheme).
func testNotHTTP(t *testing.T, f fetch.Fetcher, w *fetchtest.Web, _ []expected) {
	for _, raw := range []string{
		"/relative/path",
		"//" + w.OrdinaryHosts()[0] + ":" + w.Port() + "/",
		"ftp://" + w.OrdinaryHosts()[0] + ":" + w.Port() + "/",
		"mailto:someone@example.com",
		"file:///etc/passwd",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := f.Fetch(context.Background(), &fetch.Request{URL: u})
		wantError(t, raw, resp, err, fetch.KindBadURL, fetch.ErrScheme)
	}
}

func testCanceled(t *testing.T, f fetch.Fetcher, _ *fetchtest.Web, want []expected) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	u, _ := url.Parse(want[0].url)
	resp, err := f.Fetch(ctx, &fetch.Request{URL: u})
	wantError(t, "Fetch with a canceled context", resp, err, fetch.KindCanceled, context.Canceled)
}

func testDeadline(t *testing.T, f fetch.Fetcher, _ *fetchtest.Web, want []expected) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	u, _ := url.Parse(want[0].url)
	resp, err := f.Fetch(ctx, &fetch.Request{URL: u})
	var fe *fetch.Error
	if !errors.As(err, &fe) || !errors.Is(err, context.DeadlineExceeded) || resp != nil {
		t.Fatalf("Fetch past its deadline = %s, %v (%T); want a *fetch.Error wrapping context.DeadlineExceeded", summary(resp), err, err)
	}
	if fe.Kind != fetch.KindTimeout && fe.Kind != fetch.KindCanceled {
		t.Errorf("Fetch past its deadline: kind %q, want timeout or canceled", fe.Kind)
	}
}

// testCancelDuring: a fetch from a host that answers after a minute
// returns promptly when its context is canceled. A fetcher that answers
// from stored content answers at once, or fails as for a URL it does not
// hold.
func testCancelDuring(t *testing.T, f fetch.Fetcher, w *fetchtest.Web, _ []expected) {
	u, _ := url.Parse(w.URL(w.Host(slowLabel), "/"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	resp, err := f.Fetch(ctx, &fetch.Request{URL: u})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Fetch canceled after 100ms returned after %v", d)
	}
	var fe *fetch.Error
	switch {
	case err == nil:
		if resp == nil {
			t.Error("no response and no error")
		}
	case !errors.As(err, &fe):
		t.Errorf("error %v (%T) is not a *fetch.Error", err, err)
	case errors.Is(err, context.Canceled) && fe.Kind != fetch.KindCanceled:
		t.Errorf("canceled fetch: kind %q, want %q", fe.Kind, fetch.KindCanceled)
	case time.Since(start) >= 100*time.Millisecond && !errors.Is(err, context.Canceled):
		t.Errorf("canceled fetch: %v does not wrap context.Canceled", err)
	}
}

func testConcurrent(t *testing.T, f fetch.Fetcher, _ *fetchtest.Web, want []expected) {
	const workers = 8
	per := len(want) // fetches per worker; workers overlap on every URL
	if raceEnabled {
		per = max(1, len(want)/4)
	}
	if want[0].rendered {
		per = len(want)/workers + 1
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				x := want[(i+w*5)%len(want)]
				resp, err := get(f, x.url, "")
				if err != nil || resp.Status != x.status || !sameBody(x, resp) {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %s, %v", x.url, summary(resp), err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d of %d concurrent fetches differ from the web's answers, e.g. %s", len(failures), workers*per, failures[0])
	}
}
