package sinktest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
)

// Harness tells Run how to make the sink under test and how to read what
// it wrote.
type Harness struct {
	// Open returns a sink writing into dir, a directory of the suite's
	// own. Opened again on the same dir, the sink must find what the
	// earlier one left, as a new process would: for a DurableSink the
	// suite abandons the earlier sink without Close to simulate a kill,
	// so Open releases what the abandoned one holds that the death of a
	// process would release (a directory lock, a background goroutine),
	// without writing anything a killed process would not have written.
	// Required. The suite closes every sink it does not abandon, once;
	// whatever else Open creates is cleaned up through t.Cleanup.
	Open func(t *testing.T, dir string) (crawlkit.Sink, error)
	// Pages returns the URLs of the pages that the output in dir holds, as
	// a reader of that output sees them, in the order they were written
	// (see Unordered): a WARC file's pages (not the exchanges of an
	// ExchangeSink), the lines of a JSON Lines file, the sources of a link
	// log, the documents of an index. It is called after Close, and for a
	// DurableSink also while the last sink opened on dir is open or
	// abandoned: its Writes have returned, so what they wrote is there.
	// Required.
	Pages func(t *testing.T, dir string) []string
	// Exchanges returns the target URLs of the responses that the output
	// in dir archives as exchanges (ExchangeSink.Exchange), in the order
	// they were written. Required when the sink is an ExchangeSink.
	Exchanges func(t *testing.T, dir string) []string
	// Unordered says that Pages and Exchanges list the URLs in an order
	// of their own (an index ranks its documents): the suite then
	// compares them as sets.
	Unordered bool
	// NewOnWriter, for a sink that writes to an io.Writer its caller owns
	// (crawlkit.JSONLines, crawlkit.LinkLog), returns one writing to w:
	// the suite checks that Close flushes it and leaves it open. Nil
	// skips that check.
	NewOnWriter func(w io.Writer) crawlkit.Sink
	// RewindAfterWrite says what the Rewind of a DurableSink does once
	// the sink has written: the crawler never asks for it (it rewinds
	// once, before any Write), so each implementation documents its
	// choice and the suite holds it to it. The zero value is RewindFails.
	RewindAfterWrite RewindRule
}

// RewindRule is what a DurableSink's Rewind does after a Write.
type RewindRule int

const (
	// RewindFails: Rewind after a Write returns an error and changes
	// nothing; the sink goes on writing (crawlkit.WARCSink).
	RewindFails RewindRule = iota
	// RewindCuts: Rewind after a Write cuts the output back to the
	// position as it does before any Write, and the sink goes on writing
	// after it (crawlkit.JSONLinesFile, crawlkit.LinkLogFile,
	// crawlkit.IndexDirSink).
	RewindCuts
	// RewindIgnored: Rewind after a Write returns nil and changes
	// nothing.
	RewindIgnored
)

// String returns the constant's name.
func (r RewindRule) String() string {
	switch r {
	case RewindFails:
		return "RewindFails"
	case RewindCuts:
		return "RewindCuts"
	case RewindIgnored:
		return "RewindIgnored"
	}
	return fmt.Sprintf("RewindRule(%d)", int(r))
}

// TitleWord is a word in the title and the text of every page the suite
// writes (see Page), so that a harness reading an index finds them all
// with one query for it.
const TitleWord = "sinktest"

// Page returns the i-th page the suite writes (i ≥ 0), a new value on
// every call, built without a network: URL http://hN.sinktest.test/page/i
// (N = i mod 3), depth i mod 4, a small HTML body with its headers, a
// Document whose Title and Text hold TitleWord and the word "pI", and i
// mod 3 links (a page without links is written too). The page is what a
// crawler hands its sinks: Response and Document as the fetcher and the
// parser made them.
func Page(i int) *crawlkit.Page {
	raw := fmt.Sprintf("http://h%d.sinktest.test/page/%d", i%3, i)
	u, _ := url.Parse(raw)
	title := fmt.Sprintf("Sinktest page p%d", i)
	body := fmt.Sprintf("<!doctype html><html lang=en><title>%s</title><p>%s body of p%d</p></html>\n", title, TitleWord, i)
	fetched := epoch.Add(time.Duration(i) * time.Second)
	p := &crawlkit.Page{
		URL:     raw,
		Depth:   i % 4,
		Fetched: fetched,
		Response: &fetch.Response{
			URL:    u,
			Status: http.StatusOK,
			Header: http.Header{
				"Content-Type":   {"text/html; charset=utf-8"},
				"Content-Length": {fmt.Sprint(len(body))},
				"Date":           {fetched.Format(http.TimeFormat)},
			},
			Body:        []byte(body),
			ContentType: "text/html",
			Charset:     "utf-8",
			Addr:        netip.MustParseAddrPort("127.0.0.1:80"),
			WireBytes:   int64(len(body)),
			Timings:     fetch.Timings{Start: fetched, FirstByte: 2 * time.Millisecond, Total: 3 * time.Millisecond},
		},
		Document: &fetch.Document{
			URL:   u,
			Base:  u,
			Title: title,
			Text:  fmt.Sprintf("%s body of p%d", TitleWord, i),
			Lang:  "en",
		},
		Fingerprint: 0x9e3779b97f4a7c15 * uint64(i+1),
	}
	for j := range i % 3 {
		target := fmt.Sprintf("http://h%d.sinktest.test/page/%d", (i+j+1)%3, i+j+1)
		p.Links = append(p.Links, target)
		lu, _ := url.Parse(target)
		p.Document.Links = append(p.Document.Links, fetch.Link{URL: lu})
	}
	return p
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// exchange returns the i-th response the suite hands an ExchangeSink: a
// redirect, a robots.txt, a 404 and a 503 in turn, none of them a page.
func exchange(i int) *fetch.Response {
	host := fmt.Sprintf("x%d.sinktest.test", i%3)
	var (
		path, body, ct string
		status         int
		loc            *url.URL
	)
	switch i % 4 {
	case 0:
		path, status = fmt.Sprintf("/moved/%d", i), http.StatusMovedPermanently
		loc = &url.URL{Scheme: "http", Host: host, Path: fmt.Sprintf("/page/%d", i)}
	case 1:
		path, status, ct, body = fmt.Sprintf("/robots.txt?%d", i), http.StatusOK, "text/plain", "User-agent: *\nDisallow: /private/\n"
	case 2:
		path, status, ct, body = fmt.Sprintf("/gone/%d", i), http.StatusNotFound, "text/html", "<p>not found</p>"
	default:
		path, status = fmt.Sprintf("/busy/%d", i), http.StatusServiceUnavailable
	}
	u, _ := url.Parse("http://" + host + path)
	h := http.Header{}
	if ct != "" {
		h.Set("Content-Type", ct)
	}
	if loc != nil {
		h.Set("Location", loc.String())
	}
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	return &fetch.Response{URL: u, Status: status, Header: h, Body: []byte(body), Location: loc, ContentType: ct,
		Addr: netip.MustParseAddrPort("127.0.0.1:80"), WireBytes: int64(len(body))}
}

// pageURLs returns the URLs of Page(i) for i in [from, to).
func pageURLs(from, to int) []string {
	out := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, Page(i).URL)
	}
	return out
}

// caps are the optional interfaces the sink under test implements.
type caps struct {
	durable, preparing, exchange, wire bool
}

// Run runs the conformance suite as subtests of t: the rules of
// crawlkit.Sink on every sink, and those of DurableSink, PreparingSink,
// ExchangeSink and WireSink on a sink that implements them (the others
// skip, saying why). See the package documentation for the checks.
func Run(t *testing.T, h Harness) {
	if h.Open == nil || h.Pages == nil {
		t.Fatal("sinktest: Harness.Open and Harness.Pages are required")
	}
	c := probe(t, h)
	if c.exchange && h.Exchanges == nil {
		t.Fatal("sinktest: the sink is an ExchangeSink: Harness.Exchanges is required")
	}
	tests := []struct {
		name string
		need bool
		why  string
		fn   func(*testing.T, Harness)
	}{
		{"Empty", true, "", testEmpty},
		{"WriteClose", true, "", testWriteClose},
		{"Concurrent", true, "", testConcurrent},
		{"NoRetain", true, "", testNoRetain},
		{"LeavesWriterOpen", h.NewOnWriter != nil, "no Harness.NewOnWriter: the sink is given no writer", testLeavesWriterOpen},
		{"Rewind", c.durable, "not a DurableSink", testRewind},
		{"RewindToStart", c.durable, "not a DurableSink", testRewindToStart},
		{"RewindMalformed", c.durable, "not a DurableSink", testRewindMalformed},
		{"RewindBehind", c.durable, "not a DurableSink", testRewindBehind},
		{"RewindAfterWrite", c.durable, "not a DurableSink", testRewindAfterWrite},
		{"Prepare", c.preparing, "not a PreparingSink", testPrepare},
		{"Exchange", c.exchange, "not an ExchangeSink", testExchange},
		{"ExchangeRewind", c.exchange && c.durable, "not an ExchangeSink and a DurableSink", testExchangeRewind},
		{"WantsWire", c.wire, "not a WireSink", testWantsWire},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.need {
				t.Skip(tc.why)
			}
			tc.fn(t, h)
		})
	}
}

// probe opens a sink to find out what it implements.
func probe(t *testing.T, h Harness) caps {
	t.Helper()
	s := open(t, h, t.TempDir())
	var c caps
	_, c.durable = s.(crawlkit.DurableSink)
	_, c.preparing = s.(crawlkit.PreparingSink)
	_, c.exchange = s.(crawlkit.ExchangeSink)
	_, c.wire = s.(crawlkit.WireSink)
	closeSink(t, s)
	return c
}

func open(t *testing.T, h Harness, dir string) crawlkit.Sink {
	t.Helper()
	s, err := h.Open(t, dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	if s == nil {
		t.Fatalf("Open(%s) returned a nil sink", dir)
	}
	return s
}

func openDurable(t *testing.T, h Harness, dir string) crawlkit.DurableSink {
	t.Helper()
	s := open(t, h, dir)
	d, ok := s.(crawlkit.DurableSink)
	if !ok {
		t.Fatalf("Open returned a %T, which is not a DurableSink, where an earlier call's sink was one", s)
	}
	return d
}

func closeSink(t *testing.T, s crawlkit.Sink) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func write(t *testing.T, s crawlkit.Sink, p *crawlkit.Page) {
	t.Helper()
	if err := s.Write(context.Background(), p); err != nil {
		t.Fatalf("Write(%s): %v", p.URL, err)
	}
}

func position(t *testing.T, s crawlkit.DurableSink) []byte {
	t.Helper()
	pos, err := s.Position()
	if err != nil {
		t.Fatalf("Position: %v", err)
	}
	return pos
}

// writeAt writes Page(i) for i in [from, to) and returns the position
// after each.
func writeAt(t *testing.T, s crawlkit.DurableSink, from, to int) [][]byte {
	t.Helper()
	var out [][]byte
	for i := from; i < to; i++ {
		write(t, s, Page(i))
		out = append(out, position(t, s))
	}
	return out
}

// wantPages checks that the output in dir holds exactly want.
func wantPages(t *testing.T, h Harness, dir string, want []string, when string) {
	t.Helper()
	compare(t, "pages", h.Pages(t, dir), want, h.Unordered, when)
}

func wantExchanges(t *testing.T, h Harness, dir string, want []string, when string) {
	t.Helper()
	compare(t, "exchanges", h.Exchanges(t, dir), want, h.Unordered, when)
}

func compare(t *testing.T, what string, got, want []string, unordered bool, when string) {
	t.Helper()
	if unordered {
		got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: the output holds %d %s, want %d:\n%s", when, len(got), what, len(want), diff(got, want))
	}
}

// diff describes how got differs from want, briefly.
func diff(got, want []string) string {
	var b strings.Builder
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			fmt.Fprintf(&b, "\t[%d] got %q, want %q\n", i, g, w)
			if b.Len() > 1000 {
				b.WriteString("\t...\n")
				break
			}
		}
	}
	return b.String()
}

// testEmpty: a sink closed without a Write has no page.
func testEmpty(t *testing.T, h Harness) {
	dir := t.TempDir()
	closeSink(t, open(t, h, dir))
	wantPages(t, h, dir, nil, "after Close without a Write")
}

// testWriteClose: Write in turn, Close once: every page is there, in
// order, once.
func testWriteClose(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := open(t, h, dir)
	for i := range 6 {
		write(t, s, Page(i))
	}
	closeSink(t, s)
	wantPages(t, h, dir, pageURLs(0, 6), "after six Writes and Close")
}

// testConcurrent: Write from many goroutines at once (the crawler's
// workers) loses and doubles nothing.
func testConcurrent(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := open(t, h, dir)
	const workers, per = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				if err := s.Write(context.Background(), Page(100+w*per+i)); err != nil {
					t.Errorf("concurrent Write: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	closeSink(t, s)
	got := slices.Sorted(slices.Values(h.Pages(t, dir)))
	compare(t, "pages", got, slices.Sorted(slices.Values(pageURLs(100, 100+workers*per))), false,
		fmt.Sprintf("after %d concurrent Writes", workers*per))
}

// testNoRetain: a sink keeps nothing of the Page, its Response and its
// Document after Write returns (the crawler reuses them): changing them
// afterwards changes nothing in the output.
func testNoRetain(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := open(t, h, dir)
	for i := range 3 {
		p := Page(i)
		write(t, s, p)
		scribble(p)
	}
	closeSink(t, s)
	wantPages(t, h, dir, pageURLs(0, 3), "after the pages were changed once written")
}

// scribble overwrites what p holds, as a crawler reusing it would.
func scribble(p *crawlkit.Page) {
	const other = "http://scribbled.sinktest.test/"
	u, _ := url.Parse(other)
	p.URL = other
	p.Response.URL, p.Document.URL, p.Document.Base = u, u, u
	for i := range p.Response.Body {
		p.Response.Body[i] = 'x'
	}
	p.Response.Header.Set("Content-Type", "application/octet-stream")
	p.Document.Title, p.Document.Text = "scribbled", "scribbled"
	for i := range p.Links {
		p.Links[i] = other
	}
}

// closeRecorder is a writer its owner closes: a sink must not.
type closeRecorder struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
}

func (c *closeRecorder) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, io.ErrClosedPipe
	}
	return c.buf.Write(p)
}

func (c *closeRecorder) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

// testLeavesWriterOpen: a sink given a writer flushes it at Close and
// leaves it open, even when it is an io.Closer (os.Stdout is one).
func testLeavesWriterOpen(t *testing.T, h Harness) {
	w := &closeRecorder{}
	s := h.NewOnWriter(w)
	for i := range 2 {
		write(t, s, Page(i))
	}
	closeSink(t, s)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		t.Error("Close closed the writer the sink was given")
	}
	for _, u := range pageURLs(0, 2) {
		if !bytes.Contains(w.buf.Bytes(), []byte(u)) {
			t.Errorf("after Close the writer lacks %s: the sink did not flush (%d bytes written)", u, w.buf.Len())
		}
	}
}

// testRewind is a crash and a resume: a sink writes pages, taking a
// position after each; the process is killed (the sink abandoned without
// Close); a new one opens the directory and rewinds to a position in the
// middle: exactly the pages up to it are there. Killed before writing,
// the next process rewinds to the same position. It writes more: they
// follow. Killed again and resumed at its last position: nothing is cut.
func testRewind(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := openDurable(t, h, dir)
	pos := writeAt(t, s, 0, 6)
	wantPages(t, h, dir, pageURLs(0, 6), "after six Writes, before Close (a Write is durable once it returns)")
	// Killed: s is abandoned.

	s = openDurable(t, h, dir)
	if err := s.Rewind(pos[2]); err != nil {
		t.Fatalf("Rewind to the position after the third page: %v", err)
	}
	want := pageURLs(0, 3)
	wantPages(t, h, dir, want, "after Rewind to the position after the third page")
	// Killed before its first commit: the next run rewinds to the same
	// position.
	s = openDurable(t, h, dir)
	if err := s.Rewind(pos[2]); err != nil {
		t.Fatalf("Rewind again to the same position, in a new process: %v", err)
	}
	wantPages(t, h, dir, want, "after a second Rewind to the same position")
	more := writeAt(t, s, 6, 9)
	want = append(want, pageURLs(6, 9)...)
	wantPages(t, h, dir, want, "after three more Writes following the Rewind")
	// Killed again, and resumed at the last position taken.

	s = openDurable(t, h, dir)
	if err := s.Rewind(more[len(more)-1]); err != nil {
		t.Fatalf("Rewind to the last position taken: %v", err)
	}
	wantPages(t, h, dir, want, "after Rewind to the last position taken")
	write(t, s, Page(9))
	closeSink(t, s)
	wantPages(t, h, dir, append(want, Page(9).URL), "after a Write and Close following that Rewind")
}

// testRewindToStart: the position taken before the first Write (the
// crawler saves it when a new crawl starts) rewinds to an empty output.
func testRewindToStart(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := openDurable(t, h, dir)
	start := position(t, s)
	writeAt(t, s, 0, 3)

	s = openDurable(t, h, dir)
	if err := s.Rewind(start); err != nil {
		t.Fatalf("Rewind to the position before the first Write: %v", err)
	}
	wantPages(t, h, dir, nil, "after Rewind to the position before the first Write")
	writeAt(t, s, 3, 5)
	closeSink(t, s)
	wantPages(t, h, dir, pageURLs(3, 5), "after two Writes and Close following that Rewind")
}

// testRewindMalformed: a token Position never made is an error, and
// changes nothing.
func testRewindMalformed(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := openDurable(t, h, dir)
	pos := writeAt(t, s, 0, 3)

	s = openDurable(t, h, dir)
	last := pos[len(pos)-1]
	for _, bad := range [][]byte{
		[]byte("sinktest: not a position"),
		last[:len(last)-1],
		bytes.Repeat([]byte{0xff}, len(last)+7),
	} {
		if err := s.Rewind(bad); err == nil {
			t.Errorf("Rewind(%q) succeeded", bad)
		}
	}
	wantPages(t, h, dir, pageURLs(0, 3), "after Rewind to malformed positions")
	write(t, s, Page(3))
	closeSink(t, s)
	wantPages(t, h, dir, pageURLs(0, 4), "after a Write and Close following the failed Rewinds")
}

// testRewindBehind: a position beyond what the output holds (the output
// lost data the crawl's state counts as written) is an error, not a
// silent success.
func testRewindBehind(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := openDurable(t, h, dir)
	pos := writeAt(t, s, 0, 5)

	s = openDurable(t, h, dir)
	if err := s.Rewind(pos[1]); err != nil {
		t.Fatalf("Rewind to the position after the second page: %v", err)
	}
	// Killed before writing; the next run has a later position.
	s = openDurable(t, h, dir)
	if err := s.Rewind(pos[3]); err == nil {
		t.Error("Rewind to a position beyond the output succeeded")
	}
	wantPages(t, h, dir, pageURLs(0, 2), "after a Rewind beyond the output")
	closeSink(t, s)
}

// testRewindAfterWrite: Rewind once the sink has written does what the
// harness says the implementation documents.
func testRewindAfterWrite(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := openDurable(t, h, dir)
	pos := writeAt(t, s, 0, 3)
	err := s.Rewind(pos[0])
	var want []string
	switch h.RewindAfterWrite {
	case RewindFails:
		if err == nil {
			t.Errorf("Rewind after a Write succeeded; the harness says it fails (%v)", h.RewindAfterWrite)
		}
		want = pageURLs(0, 3)
	case RewindCuts:
		if err != nil {
			t.Fatalf("Rewind after a Write: %v; the harness says it cuts (%v)", err, h.RewindAfterWrite)
		}
		want = pageURLs(0, 1)
	case RewindIgnored:
		if err != nil {
			t.Errorf("Rewind after a Write: %v; the harness says it is ignored (%v)", err, h.RewindAfterWrite)
		}
		want = pageURLs(0, 3)
	default:
		t.Fatalf("sinktest: unknown Harness.RewindAfterWrite %v", h.RewindAfterWrite)
	}
	wantPages(t, h, dir, want, fmt.Sprintf("after Rewind following Writes (%v)", h.RewindAfterWrite))
	write(t, s, Page(3))
	closeSink(t, s)
	wantPages(t, h, dir, append(want, Page(3).URL), "after a Write and Close following that Rewind")
}

// testPrepare: pages prepared in parallel goroutines, and written in
// order as each is ready (the crawler's commit), make the output that
// Write makes; the positions taken after them rewind like Write's.
func testPrepare(t *testing.T, h Harness) {
	const n, workers = 24, 4
	dirA, dirB := t.TempDir(), t.TempDir()
	a := open(t, h, dirA).(crawlkit.PreparingSink)
	ready := make([]chan crawlkit.Prepared, n)
	for i := range ready {
		ready[i] = make(chan crawlkit.Prepared, 1)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				pr, err := a.Prepare(context.Background(), Page(i))
				if err != nil {
					t.Errorf("Prepare(%s): %v", Page(i).URL, err)
				}
				ready[i] <- pr
			}
		})
	}
	pos := make([][]byte, n)
	for i := range n {
		pr := <-ready[i]
		if pr == nil {
			continue
		}
		if err := pr.Write(); err != nil {
			t.Errorf("Prepared.Write of %s: %v", Page(i).URL, err)
		}
		pos[i] = position(t, a)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	wantPages(t, h, dirA, pageURLs(0, n), "after Prepared pages were written in order")

	b := open(t, h, dirB)
	for i := range n {
		write(t, b, Page(i))
	}
	closeSink(t, b)
	compare(t, "pages", h.Pages(t, dirA), h.Pages(t, dirB), h.Unordered, "prepared and written, against written")

	// Killed, and resumed two pages back.
	d := openDurable(t, h, dirA)
	if err := d.Rewind(pos[n-3]); err != nil {
		t.Fatalf("Rewind to the position after a prepared page: %v", err)
	}
	wantPages(t, h, dirA, pageURLs(0, n-2), "after Rewind to the position after a prepared page")

	// A page prepared and never written (its commit failed) leaves no
	// trace.
	if _, err := d.(crawlkit.PreparingSink).Prepare(context.Background(), Page(n)); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	write(t, d, Page(n+1))
	closeSink(t, d)
	wantPages(t, h, dirA, append(pageURLs(0, n-2), Page(n+1).URL), "after a page was prepared and not written")
}

// testExchange: the responses handed to Exchange — redirects,
// robots.txt, error statuses — are archived, from many goroutines at
// once, and are not pages.
func testExchange(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := open(t, h, dir)
	es := s.(crawlkit.ExchangeSink)
	ctx := context.Background()
	write(t, s, Page(0))
	for i := range 4 {
		r := exchange(i)
		if err := es.Exchange(ctx, r, epoch.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatalf("Exchange(%s %d): %v", r.URL, r.Status, err)
		}
	}
	write(t, s, Page(1))
	wantX := []string{exchange(0).URL.String(), exchange(1).URL.String(), exchange(2).URL.String(), exchange(3).URL.String()}

	const workers, per = 4, 6
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				k := 100 + w*per + i
				if err := s.Write(ctx, Page(k)); err != nil {
					t.Errorf("concurrent Write: %v", err)
				}
				if err := es.Exchange(ctx, exchange(k), epoch); err != nil {
					t.Errorf("concurrent Exchange: %v", err)
				}
			}
		})
	}
	wg.Wait()
	closeSink(t, s)

	got := h.Pages(t, dir)
	compare(t, "pages", got[:min(len(got), 2)], pageURLs(0, 2), h.Unordered, "after Writes and Exchanges")
	compare(t, "pages", slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(append(pageURLs(0, 2), pageURLs(100, 100+workers*per)...))), false,
		"after Writes and Exchanges from many goroutines")
	gotX := h.Exchanges(t, dir)
	compare(t, "exchanges", gotX[:min(len(gotX), len(wantX))], wantX, h.Unordered, "after four Exchanges")
	for k := 100; k < 100+workers*per; k++ {
		wantX = append(wantX, exchange(k).URL.String())
	}
	compare(t, "exchanges", slices.Sorted(slices.Values(gotX)), slices.Sorted(slices.Values(wantX)), false,
		"after Exchanges from many goroutines")
}

// testExchangeRewind: exchanges are cut back with the pages: the crawler
// writes a page's exchanges before taking the page's position, so an
// exchange after the position belongs to a commit that never was.
func testExchangeRewind(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := openDurable(t, h, dir)
	es := s.(crawlkit.ExchangeSink)
	ctx := context.Background()
	if err := es.Exchange(ctx, exchange(0), epoch); err != nil {
		t.Fatal(err)
	}
	write(t, s, Page(0))
	pos := position(t, s)
	if err := es.Exchange(ctx, exchange(1), epoch); err != nil {
		t.Fatal(err)
	}
	write(t, s, Page(1))

	s = openDurable(t, h, dir)
	if err := s.Rewind(pos); err != nil {
		t.Fatalf("Rewind: %v", err)
	}
	wantPages(t, h, dir, pageURLs(0, 1), "after Rewind to the position after the first page")
	wantExchanges(t, h, dir, []string{exchange(0).URL.String()}, "after Rewind to the position after the first page")
	closeSink(t, s)
}

// testWantsWire: WantsWire gives the same answer on every call, before
// and after Writes (the crawler asks once, when it configures its
// fetcher), and a page with its wire bytes is written.
func testWantsWire(t *testing.T, h Harness) {
	dir := t.TempDir()
	s := open(t, h, dir)
	ws := s.(crawlkit.WireSink)
	first := ws.WantsWire()
	for i := range 3 {
		p := Page(i)
		p.Response.Wire = bytes.Clone(p.Response.Body)
		write(t, s, p)
		if got := ws.WantsWire(); got != first {
			t.Errorf("WantsWire = %v after %d Writes, %v before", got, i+1, first)
		}
	}
	closeSink(t, s)
	wantPages(t, h, dir, pageURLs(0, 3), "after Writes of pages with their wire bytes")
}
