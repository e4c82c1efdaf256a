package dedup_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"golang.org/x/sync/errgroup"
)

// webDoc is one fetched and parsed page of the simulated web.
type webDoc struct {
	url  string
	text []byte
}

// fetchWeb fetches every HTML page of w (ground truth Pages) and extracts
// its text with the fetch package's HTML parser.
func fetchWeb(t *testing.T, w *fetchtest.Web) []webDoc {
	t.Helper()
	var p fetch.HTML
	client := w.Client()
	pages := w.Pages()
	docs := make([]webDoc, len(pages))
	var g errgroup.Group
	g.SetLimit(8)
	for i, u := range pages {
		if w.Status(u) != http.StatusOK {
			continue
		}
		g.Go(func() error {
			resp, err := client.Get(u)
			if err != nil {
				return err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				return nil
			}
			pu, err := url.Parse(u)
			if err != nil {
				return err
			}
			d := p.ParseBytes(body, pu)
			docs[i] = webDoc{u, []byte(d.Title + " " + d.Text)}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	// In the ground truth's (sorted) order, without the non-HTML pages.
	out := docs[:0]
	for _, d := range docs {
		if d.url != "" {
			out = append(out, d)
		}
	}
	return out
}

// TestWebGroundTruth runs ContentSeen over the simulated web's pages and
// scores it against the web's ground truth: every member of an
// ExactDuplicates cluster after the first must be found as an exact
// duplicate of an earlier member, at least 95% of the members of
// NearDuplicates clusters after the first must be found as duplicates of an
// earlier member, and at most 1% of the other pages may be reported as
// duplicates.
func TestWebGroundTruth(t *testing.T) {
	seeds := []int64{1, 2, 3}
	if raceEnabled {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { testWeb(t, seed) })
	}
}

func testWeb(t *testing.T, seed int64) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hosts, near := 30, 15
	if raceEnabled {
		hosts, near = 6, 6
	}
	w := fetchtest.NewWeb(fetchtest.Config{
		Seed: seed, Hosts: hosts, Mirrors: 3, NearDuplicates: near,
		Clock: func() time.Time { return clock },
	})
	defer w.Close()
	docs := fetchWeb(t, w)

	cluster := make(map[string]string) // URL → cluster id
	kind := make(map[string]string)    // cluster id → "exact" / "near"
	for i, c := range w.ExactDuplicates() {
		for _, u := range c {
			cluster[u] = fmt.Sprintf("e%d", i)
		}
		kind[fmt.Sprintf("e%d", i)] = "exact"
	}
	for i, c := range w.NearDuplicates() {
		for _, u := range c {
			cluster[u] = fmt.Sprintf("n%d", i)
		}
		kind[fmt.Sprintf("n%d", i)] = "near"
	}

	impls := []struct {
		name string
		new  func() dedup.ContentSeen
		near bool
	}{
		{"Content", func() dedup.ContentSeen { c, _ := dedup.NewContent(nil); return c }, true},
		{"Content+simhash", func() dedup.ContentSeen {
			c, _ := dedup.NewContent(&dedup.ContentOptions{MaxHamming: 16})
			return c
		}, true},
		{"ExactContent", func() dedup.ContentSeen { return new(dedup.ExactContent) }, false},
	}
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			c := impl.new()
			ctx := context.Background()
			firstOf := make(map[string]bool) // cluster ids already met
			var exactDup, exactFound, nearDup, nearFound, unique, falsePos int
			for _, d := range docs {
				m, err := c.Seen(ctx, dedup.Doc{URL: d.url, Text: d.text})
				if err != nil {
					t.Fatal(err)
				}
				id, inCluster := cluster[d.url]
				isDup := inCluster && firstOf[id]
				firstOf[id] = firstOf[id] || inCluster
				correct := m.Seen && inCluster && cluster[m.URL] == id
				switch {
				case isDup && kind[id] == "exact":
					exactDup++
					if correct && !m.Near {
						exactFound++
					} else {
						t.Errorf("exact duplicate %s: %+v", d.url, m)
					}
				case isDup:
					nearDup++
					if correct {
						nearFound++
					}
				default:
					unique++
					if m.Seen {
						falsePos++
						t.Logf("false positive: %s as %s (J≈%.2f)", d.url, m.URL, m.Similarity)
					}
				}
				if isDup && m.Seen && !correct {
					falsePos++
					t.Logf("duplicate matched to the wrong page: %s as %s", d.url, m.URL)
				}
			}
			nearRecall := float64(nearFound) / float64(max(nearDup, 1))
			fpRate := float64(falsePos) / float64(max(unique, 1))
			t.Logf("%d pages: exact duplicates %d/%d, near-duplicates %d/%d (%.1f%%), false positives %d of %d other pages (%.2f%%)",
				len(docs), exactFound, exactDup, nearFound, nearDup, 100*nearRecall, falsePos, unique, 100*fpRate)
			if exactDup == 0 || nearDup == 0 {
				t.Fatal("the web has no duplicates to find")
			}
			if exactFound != exactDup {
				t.Errorf("found %d of %d exact duplicates", exactFound, exactDup)
			}
			if impl.near && nearRecall < 0.95 {
				t.Errorf("near-duplicate recall %.3f < 0.95", nearRecall)
			}
			if fpRate > 0.01 {
				t.Errorf("false-positive rate %.4f > 0.01", fpRate)
			}
		})
	}
}

// TestWebRecrawl plays continuous crawling (§20.2.1): crawl the web, let
// a day pass (pages with short change periods get new versions), crawl
// again. An unchanged page is seen at its own URL; a changed page's old
// fingerprint is forgotten and its new version is recorded afresh instead
// of being reported as a near-duplicate of its own past.
func TestWebRecrawl(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	w := fetchtest.NewWeb(fetchtest.Config{
		Seed: 4, Hosts: map[bool]int{false: 12, true: 5}[raceEnabled], Mirrors: -1, NearDuplicates: -1,
		ChangePeriods: []time.Duration{0, 24 * time.Hour},
		Clock: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		},
	})
	defer w.Close()
	ctx := context.Background()
	c, err := dedup.NewContent(nil)
	if err != nil {
		t.Fatal(err)
	}
	stored := make(map[string]uint64) // URL → fingerprint of the recorded version
	version := make(map[string]int64)
	oldText := make(map[string][]byte)
	for _, d := range fetchWeb(t, w) {
		oldText[d.url] = d.text
		m, err := c.Seen(ctx, dedup.Doc{URL: d.url, Text: d.text})
		if err != nil {
			t.Fatal(err)
		}
		if m.Seen {
			t.Fatalf("first crawl: %s seen as %s", d.url, m.URL)
		}
		stored[d.url] = m.Fingerprint
		version[d.url], _ = w.Version(d.url)
	}

	mu.Lock()
	now = now.Add(25 * time.Hour)
	mu.Unlock()
	var changed, unchanged, nearOwnPast int
	for _, d := range fetchWeb(t, w) {
		v, _ := w.Version(d.url)
		if v == version[d.url] {
			unchanged++
			m, err := c.Seen(ctx, dedup.Doc{URL: d.url, Text: d.text})
			if err != nil || !m.Seen || m.Near || m.URL != d.url {
				t.Fatalf("unchanged %s: %+v, %v", d.url, m, err)
			}
			continue
		}
		changed++
		if fp := dedup.TextFingerprint(d.text); fp == stored[d.url] {
			t.Fatalf("%s: new version %d has the old fingerprint", d.url, v)
		}
		// Without Forget, would the new version match the old one?
		shadow, _ := dedup.NewContent(nil)
		shadow.Seen(ctx, dedup.Doc{URL: d.url, Text: oldText[d.url]})
		if m, _ := shadow.Seen(ctx, dedup.Doc{URL: d.url, Text: d.text}); m.Seen {
			nearOwnPast++
		}
		if err := c.Forget(ctx, stored[d.url]); err != nil {
			t.Fatal(err)
		}
		m, err := c.Seen(ctx, dedup.Doc{URL: d.url, Text: d.text})
		if err != nil || m.Seen {
			t.Fatalf("changed %s after Forget: %+v, %v", d.url, m, err)
		}
		stored[d.url] = m.Fingerprint
	}
	t.Logf("recrawl: %d unchanged pages seen at their own URL, %d changed pages re-recorded (%d near their past)", unchanged, changed, nearOwnPast)
	if changed == 0 || unchanged == 0 {
		t.Fatalf("the clock change left %d changed, %d unchanged pages", changed, unchanged)
	}
}
