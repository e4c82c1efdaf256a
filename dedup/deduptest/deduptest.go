package deduptest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/dedup"
)

// TestURLSeen runs the URLSeen conformance suite. newSet must return an
// empty set each time it is called (it is called once per subtest);
// cleanup (Close) belongs in t.Cleanup.
func TestURLSeen(t *testing.T, newSet func(t *testing.T) dedup.URLSeen) {
	ctx := context.Background()
	t.Run("TestAndAdd", func(t *testing.T) {
		s := newSet(t)
		for _, fp := range []uint64{0, 1, math.MaxUint64, dedup.Fingerprint("http://example.com/")} {
			for i, want := range []bool{false, true, true} {
				seen, err := s.TestAndAdd(ctx, fp)
				if err != nil || seen != want {
					t.Fatalf("TestAndAdd(%#x) #%d = %v, %v; want %v", fp, i, seen, err, want)
				}
			}
		}
	})
	t.Run("Batch", func(t *testing.T) {
		s := newSet(t)
		if _, err := s.TestAndAdd(ctx, 7); err != nil {
			t.Fatal(err)
		}
		dst := []bool{true}
		got, err := s.TestAndAddBatch(ctx, dst, []uint64{5, 7, 5, 0, 0, 9})
		want := []bool{true, false, true, true, false, true, false}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("TestAndAddBatch = %v, %v; want %v", got, err, want)
		}
		if got, err := s.TestAndAddBatch(ctx, nil, nil); err != nil || len(got) != 0 {
			t.Fatalf("empty batch = %v, %v", got, err)
		}
		if seen, _ := s.TestAndAdd(ctx, 9); !seen {
			t.Fatal("fingerprint added by a batch not seen")
		}
	})
	t.Run("Many", func(t *testing.T) {
		s := newSet(t)
		n := 40000 // enough to grow any table many times over
		if raceEnabled {
			n = 4000
		}
		r := rand.New(rand.NewPCG(1, 2))
		fps := make([]uint64, n)
		for i := range fps {
			if i%2 == 0 {
				fps[i] = uint64(i) // structured values
			} else {
				fps[i] = r.Uint64()
			}
		}
		for pass, want := range []bool{false, true} {
			got, err := s.TestAndAddBatch(ctx, nil, fps[:n/2])
			if err != nil {
				t.Fatal(err)
			}
			for i := n / 2; i < n; i++ {
				seen, err := s.TestAndAdd(ctx, fps[i])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, seen)
			}
			for i, seen := range got {
				if seen != want {
					t.Fatalf("pass %d: fingerprint %d (%#x) seen = %v", pass, i, fps[i], seen)
				}
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := newSet(t)
		const workers, n = 8, 2000
		var wg sync.WaitGroup
		var mu sync.Mutex
		firsts := make(map[uint64]int)
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Every worker adds the same fingerprints in a different
				// order, half singly and half in batches.
				r := rand.New(rand.NewPCG(uint64(w), 3))
				fps := make([]uint64, n)
				for i := range fps {
					fps[i] = uint64(i) * 0x100000001b3
				}
				r.Shuffle(n, func(i, j int) { fps[i], fps[j] = fps[j], fps[i] })
				var news []uint64
				for i := 0; i < n; i += 400 { // batches big enough for grouped paths
					var seen []bool
					var err error
					if w%2 == 0 {
						seen, err = s.TestAndAddBatch(ctx, nil, fps[i:i+400])
					} else {
						for _, fp := range fps[i : i+400] {
							var sn bool
							sn, err = s.TestAndAdd(ctx, fp)
							if err != nil {
								break
							}
							seen = append(seen, sn)
						}
					}
					if err != nil {
						errs <- err
						return
					}
					for k, sn := range seen {
						if !sn {
							news = append(news, fps[i+k])
						}
					}
				}
				mu.Lock()
				for _, fp := range news {
					firsts[fp]++
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if len(firsts) != n {
			t.Fatalf("%d fingerprints reported new at least once, want %d", len(firsts), n)
		}
		for fp, c := range firsts {
			if c != 1 {
				t.Fatalf("fingerprint %#x reported new %d times", fp, c)
			}
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		s := newSet(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.TestAndAdd(cctx, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("TestAndAdd with cancelled context: %v", err)
		}
		if _, err := s.TestAndAddBatch(cctx, nil, []uint64{1}); !errors.Is(err, context.Canceled) {
			t.Fatalf("TestAndAddBatch with cancelled context: %v", err)
		}
		if seen, err := s.TestAndAdd(ctx, 1); err != nil || seen {
			t.Fatalf("a cancelled call added its fingerprint: %v, %v", seen, err)
		}
	})
}

// ContentCaps describes what a ContentSeen implementation claims.
type ContentCaps struct {
	// Near is set if the implementation detects near-duplicates at
	// Jaccard similarity 0.8 of 4-word shingles (the dedup.Content
	// default).
	Near bool
}

// Text returns a deterministic pseudo-random text of n words (a small
// vocabulary, so texts look like prose to a tokenizer), for tests.
func Text(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		w := r.Uint32()
		for k := 0; k < 3+int(w%6); k++ {
			b.WriteByte(byte('a' + (w>>(3*k+3))%26))
		}
	}
	return b.String()
}

// TestContentSeen runs the ContentSeen conformance suite. newContent must
// return an empty implementation each time it is called.
func TestContentSeen(t *testing.T, caps ContentCaps, newContent func(t *testing.T) dedup.ContentSeen) {
	ctx := context.Background()
	seen := func(t *testing.T, c dedup.ContentSeen, url, text string) dedup.Match {
		t.Helper()
		m, err := c.Seen(ctx, dedup.Doc{URL: url, Text: []byte(text)})
		if err != nil {
			t.Fatalf("Seen(%s): %v", url, err)
		}
		return m
	}
	page := Text(1, 300)
	t.Run("Exact", func(t *testing.T) {
		c := newContent(t)
		first := seen(t, c, "http://a.test/", page)
		if first.Seen || first.URL != "" || first.Fingerprint == 0 {
			t.Fatalf("first sighting: %+v", first)
		}
		tests := []struct {
			url, text string
			want      bool
		}{
			{"http://b.test/", page, true},
			{"http://c.test/", strings.ToUpper(page[:1]) + page[1:] + "!!", true}, // case, punctuation
			{"http://d.test/", "  " + strings.ReplaceAll(page, " ", "\n\t ") + " ", true},
			{"http://e.test/", Text(2, 300), false},
		}
		for _, tt := range tests {
			m := seen(t, c, tt.url, tt.text)
			if m.Seen != tt.want {
				t.Errorf("%s: Seen = %v, want %v", tt.url, m.Seen, tt.want)
				continue
			}
			if tt.want && (m.URL != "http://a.test/" || m.Near || m.Of != first.Fingerprint || m.Similarity != 1 || m.Fingerprint != first.Fingerprint) {
				t.Errorf("%s: %+v (first %+v)", tt.url, m, first)
			}
		}
		if m := seen(t, c, "http://f.test/", Text(2, 300)); !m.Seen || m.URL != "http://e.test/" {
			t.Errorf("second new page not recorded: %+v", m)
		}
	})
	t.Run("Forget", func(t *testing.T) {
		c := newContent(t)
		first := seen(t, c, "http://a.test/", page)
		if err := c.Forget(ctx, first.Fingerprint); err != nil {
			t.Fatal(err)
		}
		if m := seen(t, c, "http://b.test/", page); m.Seen {
			t.Fatalf("forgotten content still seen: %+v", m)
		}
		if m := seen(t, c, "http://c.test/", page); !m.Seen || m.URL != "http://b.test/" {
			t.Fatalf("content re-recorded at the new URL: %+v", m)
		}
		if err := c.Forget(ctx, 12345); err != nil {
			t.Fatalf("Forget(unknown) = %v", err)
		}
		if err := c.Forget(ctx, first.Fingerprint); err != nil {
			t.Fatal(err)
		}
		if err := c.Forget(ctx, first.Fingerprint); err != nil {
			t.Fatalf("second Forget = %v", err)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		c := newContent(t)
		if m := seen(t, c, "http://a.test/", ""); m.Seen {
			t.Fatal("first empty page seen")
		}
		if m := seen(t, c, "http://b.test/", " ,.; "); !m.Seen || m.URL != "http://a.test/" {
			t.Fatalf("empty pages are duplicates: %+v", m)
		}
		if m := seen(t, c, "http://c.test/", "word"); m.Seen {
			t.Fatalf("one-word page matched the empty one: %+v", m)
		}
	})
	t.Run("Near", func(t *testing.T) {
		c := newContent(t)
		seen(t, c, "http://a.test/", page)
		words := strings.Fields(page)
		words[100] = "changed" // one edit in 300 words: J ≈ 0.97
		edited := strings.Join(words, " ")
		for i := 0; i < len(words); i += 2 { // every other word: J ≈ 0
			words[i] = "x"
		}
		rewritten := strings.Join(words, " ")
		m := seen(t, c, "http://b.test/", edited)
		if caps.Near {
			if !m.Seen || !m.Near || m.URL != "http://a.test/" || m.Similarity < 0.8 || m.Similarity >= 1 {
				t.Fatalf("near-duplicate: %+v", m)
			}
		} else if m.Seen {
			t.Fatalf("exact-only implementation reports a near-duplicate: %+v", m)
		}
		if m := seen(t, c, "http://c.test/", rewritten); m.Seen {
			t.Fatalf("rewritten page matched: %+v", m)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		c := newContent(t)
		const workers, pages = 8, 20
		var wg sync.WaitGroup
		var mu sync.Mutex
		firsts := make(map[int][]string)
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for p := range pages {
					url := fmt.Sprintf("http://h%d.test/%d", w, p)
					m, err := c.Seen(ctx, dedup.Doc{URL: url, Text: []byte(Text(uint64(100+p), 200))})
					if err != nil {
						errs <- err
						return
					}
					if !m.Seen {
						mu.Lock()
						firsts[p] = append(firsts[p], url)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for p := range pages {
			if len(firsts[p]) != 1 {
				t.Fatalf("page %d recorded %d times: %v", p, len(firsts[p]), firsts[p])
			}
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		c := newContent(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := c.Seen(cctx, dedup.Doc{URL: "http://a.test/", Text: []byte(page)}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Seen with cancelled context: %v", err)
		}
		if err := c.Forget(cctx, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("Forget with cancelled context: %v", err)
		}
		if m := seen(t, c, "http://a.test/", page); m.Seen {
			t.Fatal("a cancelled Seen recorded its document")
		}
	})
}
