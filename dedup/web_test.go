package dedup_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
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
	w := fetchtest.NewWeb(fetchtest.Config{
		Seed: seed, Hosts: 30, Mirrors: 3, NearDuplicates: 15,
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
