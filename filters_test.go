package crawlkit

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

// repeatTrap serves a spider trap that only the URL filters stop: every
// page, /x/, /x/x/, /x/x/x/ ..., links one level deeper with a relative
// link, and each says something new, so the content-seen test does not
// stop it either. It also links an off-scope page, /elsewhere. It
// records the paths requested.
type repeatTrap struct {
	mu    sync.Mutex
	paths []string
}

func (t *repeatTrap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t.mu.Lock()
	t.paths = append(t.paths, r.URL.Path)
	n := len(t.paths)
	t.mu.Unlock()
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<html><head><title>Page %d</title></head><body><p>Visit number %d of %s, with words of its own: %s.</p>
<a href="x/">deeper</a> <a href="/elsewhere">elsewhere</a></body></html>`, n, n, r.URL.Path, strings.Repeat(fmt.Sprintf("w%d ", n), n%7+1))
}

func (t *repeatTrap) requested() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.paths...)
}

// TestExtraFiltersKeepDefaultGuards: ExtraFilters add to the default URL
// filters, so the repeated-segment guard still stops a trap, and the
// extra filter is applied too. Setting Filters to the same extra filter
// replaces the defaults, and the trap runs on to the page budget: the
// guard, not something else, is what stopped it.
func TestExtraFiltersKeepDefaultGuards(t *testing.T) {
	noElsewhere := frontier.FilterFunc(func(u *url.URL) error {
		if u.Path == "/elsewhere" {
			return fmt.Errorf("off scope: %s", u)
		}
		return nil
	})
	const budget = 25
	crawl := func(t *testing.T, mod func(*Config)) []string {
		trap := &repeatTrap{}
		srv := httptest.NewServer(trap)
		defer srv.Close()
		cfg := Config{
			Seeds:        []string{srv.URL + "/x/"},
			AllowPrivate: true,
			Workers:      2,
			DelayFactor:  -1, // no politeness gap: one host, a short chain
			MaxPages:     budget,
			MaxRetries:   -1,
			NoURLRules:   true,
			Traps:        &TrapOptions{AlikePages: -1},
			Logger:       quietLogger(),
		}
		mod(&cfg)
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		return trap.requested()
	}
	deepest := func(paths []string) int {
		d := 0
		for _, p := range paths {
			d = max(d, strings.Count(p, "x/"))
		}
		return d
	}

	t.Run("ExtraFilters", func(t *testing.T) {
		paths := crawl(t, func(c *Config) { c.ExtraFilters = []frontier.URLFilter{noElsewhere} })
		for _, p := range paths {
			if p == "/elsewhere" {
				t.Errorf("the extra filter's refused URL was fetched")
			}
		}
		// The guard refuses a path with a segment DefaultRepeatedSegments
		// times: /x/x/ is the last page.
		if d := deepest(paths); d != frontier.DefaultRepeatedSegments-1 {
			t.Errorf("deepest page %d levels down, want %d (the repeated-segment guard): %v", d, frontier.DefaultRepeatedSegments-1, paths)
		}
	})
	t.Run("Filters replaces the guards", func(t *testing.T) {
		paths := crawl(t, func(c *Config) { c.Filters = noElsewhere })
		if d := deepest(paths); d < budget-1 {
			t.Errorf("with Filters replacing the defaults the trap stopped at %d levels, want the page budget: %v", d, paths)
		}
	})
}

// TestExtraFiltersValidated: a nil entry is a Config error, not a panic
// at the first link.
func TestExtraFiltersValidated(t *testing.T) {
	_, err := New(Config{Seeds: []string{"http://a.test/"}, ExtraFilters: []frontier.URLFilter{nil}})
	if err == nil || !strings.Contains(err.Error(), "ExtraFilters[0] is nil") {
		t.Fatalf("New with a nil extra filter: %v", err)
	}
}
