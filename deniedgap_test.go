package crawlkit

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// deniedSite is one host whose root page links 5 pages, each of them
// followed by 4 links into a directory robots.txt disallows. It logs
// when each request arrives.
type deniedSite struct {
	mu  sync.Mutex
	log []deniedHit
}

type deniedHit struct {
	path string
	at   time.Time
}

func (s *deniedSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.log = append(s.log, deniedHit{r.URL.Path, time.Now()})
	s.mu.Unlock()
	switch {
	case r.URL.Path == "/robots.txt":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	case r.URL.Path == "/":
		var b strings.Builder
		b.WriteString("<html><body>")
		for i := range 5 {
			fmt.Fprintf(&b, `<a href="/p%d.html">page %d</a>`, i, i)
			for j := range 4 {
				fmt.Fprintf(&b, `<a href="/private/d%d-%d.html">denied</a>`, i, j)
			}
		}
		b.WriteString("</body></html>")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, b.String())
	case strings.HasPrefix(r.URL.Path, "/p"):
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><p>page %s, a text of its own</p></body></html>", r.URL.Path)
	default:
		http.NotFound(w, r)
	}
}

// TestRobotsDeniedCostsNoGap: a URL robots.txt denies is not a request to
// its host, so it must not cost the host a politeness gap. Before, each
// denied lease was reported to the frontier as a contact: a host whose
// pages link many disallowed URLs waited a whole gap for each, here 4
// gaps between every two real requests.
func TestRobotsDeniedCostsNoGap(t *testing.T) {
	const gap = 200 * time.Millisecond
	site := &deniedSite{}
	srv := httptest.NewServer(site)
	defer srv.Close()
	c, err := New(Config{
		Seeds:        []string{srv.URL + "/"},
		AllowPrivate: true,
		Workers:      4,
		DelayFactor:  -1,
		MinDelay:     gap,
		MaxRetries:   -1,
		NoSitemaps:   true,
		Logger:       quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Outcomes[RobotsDenied]; got != 20 {
		t.Fatalf("%d URLs denied by robots.txt, want 20", got)
	}
	site.mu.Lock()
	log := append([]deniedHit(nil), site.log...)
	site.mu.Unlock()
	sort.Slice(log, func(i, j int) bool { return log[i].at.Before(log[j].at) })
	var paths []string
	for _, h := range log {
		paths = append(paths, h.path)
		if strings.HasPrefix(h.path, "/private/") {
			t.Errorf("%s requested: robots.txt denies it", h.path)
		}
	}
	if len(log) != 7 {
		t.Fatalf("requests %v, want robots.txt, / and 5 pages", paths)
	}
	// Each request waits the gap after the one before, and not a gap
	// more: a denied URL between them would add one.
	for i := 1; i < len(log); i++ {
		d := log[i].at.Sub(log[i-1].at)
		if d < gap {
			t.Errorf("%s %v after %s: less than the gap", log[i].path, d, log[i-1].path)
		}
		if d > gap*9/5 {
			t.Errorf("%s %v after %s: more than the gap, as if a denied URL had been a request", log[i].path, d, log[i-1].path)
		}
	}
}
