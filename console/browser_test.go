package console

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// chromium returns the path of a Chromium or Chrome binary:
// $CRAWLKIT_CHROMIUM, or the first of the usual names on $PATH.
func chromium() string {
	if p := os.Getenv("CRAWLKIT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome-headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// headless runs the browser on url with args and returns its standard
// output (the DOM with --dump-dom).
func headless(t *testing.T, bin, url string, args ...string) string {
	t.Helper()
	return unlessCrashed(t, bin, func() (string, error) { return headlessOnce(t, bin, url, args...) })
}

// unlessCrashed returns what run printed, running it again (up to three
// times in all) while the browser is killed by a signal.
func unlessCrashed(t *testing.T, bin string, run func() (string, error)) string {
	t.Helper()
	for attempt := 1; ; attempt++ {
		out, err := run()
		if err == nil {
			return out
		}
		if !browserCrashed(err) || attempt == 3 {
			t.Fatalf("%s: %v", bin, err)
		}
		t.Logf("%s crashed (%v); again", bin, firstLine(err))
	}
}

// headlessOnce runs the browser once; the error holds its stderr.
func headlessOnce(t *testing.T, bin, url string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all := []string{"--headless", "--disable-gpu", "--no-first-run", "--disable-extensions",
		"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir()}
	if os.Geteuid() == 0 {
		all = append(all, "--no-sandbox") // Chromium refuses to run as root with its sandbox
	}
	cmd := exec.CommandContext(ctx, bin, append(append(all, args...), url)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", &browserError{err: err, stderr: errb.String()}
	}
	return out.String(), nil
}

// browserError is a failed browser run with what it printed.
type browserError struct {
	err    error
	stderr string
}

func (e *browserError) Error() string { return e.err.Error() + "\n" + e.stderr }
func (e *browserError) Unwrap() error { return e.err }

// browserCrashed reports whether err is the browser killed by a signal
// (Chromium segfaults now and then on a loaded machine): a crash of the
// browser says nothing of the page, so the run is made again.
func browserCrashed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// countingHandler counts the requests of each path and keeps the last
// full page it served; the fragment's answers are slowed down, so that a
// browser whose virtual time waits for them spends real time while the
// crawl moves on.
type countingHandler struct {
	h        http.Handler
	delay    time.Duration
	page     atomic.Int32
	live     atomic.Int32
	mu       sync.Mutex
	lastPage string
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		c.page.Add(1)
		rec := httptest.NewRecorder()
		c.h.ServeHTTP(rec, r)
		c.mu.Lock()
		c.lastPage = rec.Body.String()
		c.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		return
	case "/live":
		c.live.Add(1)
		time.Sleep(c.delay)
	}
	c.h.ServeHTTP(w, r)
}

// TestBrowser drives headless Chromium against the console of a running
// crawl of the simulated web: it takes a screenshot (kept with go test
// -artifacts), checks that the page shows its key parts, that the page's
// script replaced the live part with newer figures without reloading the
// page (the server saw one page load and several fragment requests, and
// the browser's DOM shows a page count the page load did not), and that
// the console is still served, with the final figures, after the crawl
// has ended.
func TestBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium: install it (Debian: apt-get install -y chromium) or set CRAWLKIT_CHROMIUM to a Chrome binary")
	}
	// Answers delayed 40 ms: with the politeness gap (ten fetch times)
	// the crawl is about half done when the browser loads the console
	// (61 of some 130 pages under -race), and is stopped once the live
	// updates are checked. At 15 ms, with its largest host served from
	// the start, it could end before the browser looked.
	tc := newTestCrawl(t, 40*time.Millisecond, &Options{Refresh: time.Second, Controls: true})
	ch := &countingHandler{h: tc.k, delay: 300 * time.Millisecond}
	srv := httptest.NewServer(ch)
	defer srv.Close()
	time.Sleep(500 * time.Millisecond)

	shot := filepath.Join(t.ArtifactDir(), "console.png")
	headless(t, bin, srv.URL+"/", "--window-size=1400,1900", "--hide-scrollbars", "--virtual-time-budget=1500", "--screenshot="+shot)
	st, err := os.Stat(shot)
	if err != nil || st.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v (%d bytes)", shot, err, st.Size())
	}
	t.Logf("screenshot: %s (%d KiB)", shot, st.Size()>>10)

	// The loads are counted for the run that did not crash.
	var pagesBefore, livesBefore int32
	dom := unlessCrashed(t, bin, func() (string, error) {
		pagesBefore, livesBefore = ch.page.Load(), ch.live.Load()
		return headlessOnce(t, bin, srv.URL+"/", "--dump-dom", "--virtual-time-budget=4000")
	})
	pages, lives := ch.page.Load()-pagesBefore, ch.live.Load()-livesBefore
	ch.mu.Lock()
	served := ch.lastPage
	ch.mu.Unlock()
	for _, want := range []string{`<svg class="chart"`, "pages/s", "crawl time", ">running<", "Busiest hosts", "HTTP status codes",
		"Progress toward the limits", "Recent errors", `action="pause"`, "· live"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the browser's DOM lacks %q", want)
		}
	}
	if pages != 1 || lives < 2 {
		t.Errorf("the browser loaded the page %d times and the live part %d times; want 1 and at least 2", pages, lives)
	}
	first, last := figureRE.FindStringSubmatch(served), figureRE.FindStringSubmatch(dom)
	if first == nil || last == nil || first[1] == last[1] {
		t.Errorf("the page count in the browser did not move: served %q, shown %q", first, last)
	} else {
		t.Logf("pages: %s when the page loaded, %s in the browser after %d updates", first[1], last[1], lives)
	}

	tc.cancel()
	tc.wait(t)
	time.Sleep(150 * time.Millisecond)
	dom = headless(t, bin, srv.URL+"/", "--dump-dom", "--virtual-time-budget=2500")
	for _, want := range []string{">finished<", "(cancelled)", "/404/gone", "· live"} {
		if !strings.Contains(dom, want) {
			t.Errorf("after the crawl, the browser's DOM lacks %q", want)
		}
	}
	if strings.Contains(dom, `action="pause"`) {
		t.Error("a finished crawl still offers Pause")
	}
}
