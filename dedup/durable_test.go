package dedup_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/shingle"
)

// pageText returns a page-length text, distinct per i.
func pageText(i int) string {
	var b strings.Builder
	for w := range 200 {
		fmt.Fprintf(&b, "word%d ", (i*7919+w*31)%5000)
	}
	return b.String()
}

// nearCopy changes a few words of pageText(i).
func nearCopy(i int) string {
	return strings.Replace(pageText(i), fmt.Sprintf("word%d ", (i*7919)%5000), "changed ", 1)
}

func newDurable(t *testing.T, exact bool) interface {
	dedup.ContentSeen
	dedup.Durable
} {
	t.Helper()
	if exact {
		return &dedup.ExactContent{}
	}
	c, err := dedup.NewContent(nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestContentLogReplay records documents with a log, forgets one, and
// checks that a new ContentSeen replaying the log answers as the first:
// exact and near duplicates found at the URLs first seen, the forgotten
// one new again.
func TestContentLogReplay(t *testing.T) {
	ctx := context.Background()
	for _, exact := range []bool{false, true} {
		t.Run(fmt.Sprintf("exact=%v", exact), func(t *testing.T) {
			var log bytes.Buffer
			a := newDurable(t, exact)
			a.LogTo(&log)
			var fps []uint64
			for i := range 20 {
				m, err := a.Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://h/%d", i), Text: []byte(pageText(i))})
				if err != nil || m.Seen {
					t.Fatalf("doc %d: %+v, %v", i, m, err)
				}
				fps = append(fps, m.Fingerprint)
			}
			if err := a.Forget(ctx, fps[3]); err != nil {
				t.Fatal(err)
			}
			a.LogTo(nil)
			size := int64(log.Len())

			b := newDurable(t, exact)
			n, err := b.Replay(bytes.NewReader(log.Bytes()))
			if err != nil || n != size {
				t.Fatalf("Replay: %d of %d bytes, %v", n, size, err)
			}
			for i := range 20 {
				m, err := b.Seen(ctx, dedup.Doc{URL: "http://copy/", Text: []byte(strings.ToUpper(pageText(i)))})
				if err != nil {
					t.Fatal(err)
				}
				if want := i != 3; m.Seen != want || want && m.URL != fmt.Sprintf("http://h/%d", i) {
					t.Errorf("exact copy of %d: %+v", i, m)
				}
			}
			m, err := b.Seen(ctx, dedup.Doc{URL: "http://near/", Text: []byte(nearCopy(5))})
			if err != nil {
				t.Fatal(err)
			}
			if m.Seen == exact || !exact && m.URL != "http://h/5" {
				t.Errorf("near copy of 5 (exact %v): %+v", exact, m)
			}
		})
	}
}

// TestContentLogRewrite: after churn (documents recorded and forgotten),
// Rewrite writes a log shorter than the history that replays to the same
// answers, and later changes go to the new log, none to the old one;
// changes made while the snapshot is written land in exactly one log.
func TestContentLogRewrite(t *testing.T) {
	ctx := context.Background()
	for _, exact := range []bool{false, true} {
		t.Run(fmt.Sprintf("exact=%v", exact), func(t *testing.T) {
			var old bytes.Buffer
			a := newDurable(t, exact)
			a.LogTo(&old)
			var fps []uint64
			for i := range 40 {
				m, err := a.Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://h/%d", i), Text: []byte(pageText(i))})
				if err != nil {
					t.Fatal(err)
				}
				fps = append(fps, m.Fingerprint)
			}
			for _, fp := range fps[:30] { // revisits found them changed
				if err := a.Forget(ctx, fp); err != nil {
					t.Fatal(err)
				}
			}
			var compact bytes.Buffer
			if err := a.Rewrite(&compact); err != nil {
				t.Fatal(err)
			}
			if compact.Len() >= old.Len()/3 {
				t.Errorf("rewritten log %d bytes, history %d: want under a third", compact.Len(), old.Len())
			}
			before := old.Len()
			if _, err := a.Seen(ctx, dedup.Doc{URL: "http://h/new", Text: []byte(pageText(100))}); err != nil {
				t.Fatal(err)
			}
			if old.Len() != before {
				t.Error("a change after Rewrite went to the old log")
			}
			b := newDurable(t, exact)
			if n, err := b.Replay(bytes.NewReader(compact.Bytes())); err != nil || n != int64(compact.Len()) {
				t.Fatalf("Replay: %d of %d bytes, %v", n, compact.Len(), err)
			}
			for _, i := range []int{0, 29, 30, 39, 100} {
				url := fmt.Sprintf("http://h/%d", i)
				if i == 100 {
					url = "http://h/new"
				}
				m, err := b.Seen(ctx, dedup.Doc{URL: "http://copy/", Text: []byte(pageText(i))})
				if err != nil {
					t.Fatal(err)
				}
				if want := i >= 30; m.Seen != want || want && m.URL != url {
					t.Errorf("copy of %d after the rewrite: %+v", i, m)
				}
			}
			if !exact {
				m, err := b.Seen(ctx, dedup.Doc{URL: "http://near/", Text: []byte(nearCopy(35))})
				if err != nil || !m.Seen || m.URL != "http://h/35" {
					t.Errorf("near copy of 35 after the rewrite: %+v, %v", m, err)
				}
			}
		})
	}
	// Concurrent changes during rewrites: every document recorded ends
	// up in the state the final log replays to.
	a := newDurable(t, false)
	var logs []*bytes.Buffer
	var mu sync.Mutex
	cur := new(bytes.Buffer)
	logs = append(logs, cur)
	a.LogTo(lockedWriter{&mu, cur})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			if _, err := a.Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://c/%d", i), Text: []byte(pageText(1000 + i))}); err != nil {
				t.Error(err)
			}
		}
	})
	for range 5 {
		next := new(bytes.Buffer)
		if err := a.Rewrite(lockedWriter{&mu, next}); err != nil {
			t.Fatal(err)
		}
		logs = append(logs, next)
	}
	wg.Wait()
	b := newDurable(t, false)
	last := logs[len(logs)-1]
	mu.Lock()
	if _, err := b.Replay(bytes.NewReader(last.Bytes())); err != nil {
		t.Fatal(err)
	}
	mu.Unlock()
	for i := range 200 {
		m, err := b.Seen(ctx, dedup.Doc{URL: "http://copy/", Text: []byte(pageText(1000 + i))})
		if err != nil || !m.Seen {
			t.Fatalf("document %d recorded during the rewrites is not in the last log: %+v, %v", i, m, err)
		}
	}
}

// lockedWriter serialises writes to a buffer read by the test.
type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestContentLogTornAndCorrupt: a record cut short at the end is not an
// error and is not counted; a flipped byte is ErrCorrupt; a log of
// another K is ErrMismatch.
func TestContentLogTornAndCorrupt(t *testing.T) {
	ctx := context.Background()
	var log bytes.Buffer
	a := newDurable(t, false)
	a.LogTo(&log)
	for i := range 3 {
		if _, err := a.Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://h/%d", i), Text: []byte(pageText(i))}); err != nil {
			t.Fatal(err)
		}
	}
	full := log.Bytes()
	first := int64(len(full) / 3) // the records have the same length
	for cut := 1; cut < len(full); cut += 97 {
		n, err := newDurable(t, false).Replay(bytes.NewReader(full[:cut]))
		if err != nil || n > int64(cut) || n%first != 0 {
			t.Fatalf("cut at %d: %d, %v", cut, n, err)
		}
	}
	for _, at := range []int{0, 3, 5, 9, 20, len(full) - 1} {
		bad := bytes.Clone(full)
		bad[at] ^= 0x40
		n, err := newDurable(t, false).Replay(bytes.NewReader(bad))
		if at >= 4 && !errors.Is(err, dedup.ErrCorrupt) || at < 4 && err == nil && n == int64(len(full)) {
			t.Errorf("byte %d flipped: %d, %v", at, n, err)
		}
		var e *dedup.Error
		if err != nil && !errors.As(err, &e) {
			t.Errorf("byte %d flipped: %v is not a *dedup.Error", at, err)
		}
	}
	other, err := dedup.NewContent(&dedup.ContentOptions{Sketch: shingle.Options{K: 64}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Replay(bytes.NewReader(full)); !errors.Is(err, dedup.ErrMismatch) {
		t.Errorf("K=64 replaying a K=128 log: %v", err)
	}
	// An exact-only log replays into Content, for exact duplicates.
	var exactLog bytes.Buffer
	e := newDurable(t, true)
	e.LogTo(&exactLog)
	e.Seen(ctx, dedup.Doc{URL: "http://e/", Text: []byte("some text")})
	c := newDurable(t, false)
	if _, err := c.Replay(&exactLog); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Seen(ctx, dedup.Doc{URL: "http://x/", Text: []byte("Some text.")}); !m.Seen || m.URL != "http://e/" {
		t.Errorf("after an exact log: %+v", m)
	}
}

// FuzzContentLog replays arbitrary bytes as a content log: an error or a
// prefix length, never a panic; what was applied replays the same again.
func FuzzContentLog(f *testing.F) {
	ctx := context.Background()
	for _, exact := range []bool{false, true} {
		var log bytes.Buffer
		var c interface {
			dedup.ContentSeen
			dedup.Durable
		}
		if exact {
			c = &dedup.ExactContent{}
		} else {
			c, _ = dedup.NewContent(nil)
		}
		c.LogTo(&log)
		m, _ := c.Seen(ctx, dedup.Doc{URL: "http://a/", Text: []byte("a rose is a rose is a rose")})
		c.Seen(ctx, dedup.Doc{URL: "http://b/", Text: []byte("something else entirely, quite different")})
		c.Forget(ctx, m.Fingerprint)
		f.Add(log.Bytes())
	}
	f.Add([]byte{9, 0, 0, 0, 0, 0, 0, 0, '-', 1, 2, 3, 4, 5, 6, 7, 8})
	// Explicit banding: NewContent's search for the optimal one takes
	// milliseconds, which would make the fuzzer a thousand times slower.
	banded := &dedup.ContentOptions{LSH: shingle.LSHOptions{Bands: 14, Rows: 9}}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, exact := range []bool{false, true} {
			var c dedup.Durable = &dedup.ExactContent{}
			if !exact {
				c, _ = dedup.NewContent(banded)
			}
			n, err := c.Replay(bytes.NewReader(data))
			if n < 0 || n > int64(len(data)) {
				t.Fatalf("Replay returned length %d of %d", n, len(data))
			}
			if err != nil {
				var e *dedup.Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v is not a *dedup.Error", err)
				}
				continue
			}
			var again dedup.Durable = &dedup.ExactContent{}
			if !exact {
				again, _ = dedup.NewContent(banded)
			}
			if m, err := again.Replay(bytes.NewReader(data[:n])); err != nil || m != n {
				t.Fatalf("the valid prefix replays to %d, %v; want %d", m, err, n)
			}
		}
	})
}
