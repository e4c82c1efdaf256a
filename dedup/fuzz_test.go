package dedup_test

import (
	"context"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/shingle"
)

func TestTextFingerprint(t *testing.T) {
	tests := []struct {
		a, b  string
		equal bool
	}{
		{"Hello, World!", "hello world", true},
		{"  hello\n\tworld  ", "HELLO WORLD", true},
		{"hello world", "hello  world.", true},
		{"hello world", "hello worlds", false},
		{"helloworld", "hello world", false},
		{"", " .,; ", true},
		{"Straße", "strasse", false},
	}
	for _, tt := range tests {
		if got := dedup.TextFingerprint([]byte(tt.a)) == dedup.TextFingerprint([]byte(tt.b)); got != tt.equal {
			t.Errorf("TextFingerprint(%q) == TextFingerprint(%q): %v, want %v", tt.a, tt.b, got, tt.equal)
		}
	}
	if got, want := dedup.TextFingerprint([]byte("A rose, a ROSE.")), xxhash.Sum64String("a rose a rose"); got != want {
		t.Errorf("encoding: %x, want %x", got, want)
	}
}

// FuzzContentSeen feeds arbitrary texts (page text comes from the network)
// through Content and checks the contract on each.
func FuzzContentSeen(f *testing.F) {
	f.Add([]byte("a rose is a rose is a rose"), []byte("a rose is a rose is a daisy"))
	f.Add([]byte(""), []byte("\xff\xfe"))
	f.Add([]byte("Ünïcödé TEXT, with punctuation!"), []byte("ünïcödé text with punctuation"))
	ctx := context.Background()
	// Explicit banding: the search for the optimal one takes milliseconds.
	opts := &dedup.ContentOptions{Sketch: shingle.Options{K: 32}, LSH: shingle.LSHOptions{Bands: 8, Rows: 4}}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		c, err := dedup.NewContent(opts)
		if err != nil {
			t.Fatal(err)
		}
		m1, err := c.Seen(ctx, dedup.Doc{URL: "u1", Text: a})
		if err != nil || m1.Seen || m1.Fingerprint != dedup.TextFingerprint(a) {
			t.Fatalf("first: %+v, %v", m1, err)
		}
		m2, err := c.Seen(ctx, dedup.Doc{URL: "u2", Text: a})
		if err != nil || !m2.Seen || m2.Near || m2.URL != "u1" || m2.Of != m1.Fingerprint {
			t.Fatalf("repeat: %+v, %v", m2, err)
		}
		m3, err := c.Seen(ctx, dedup.Doc{URL: "u3", Text: b})
		switch {
		case err != nil:
			t.Fatal(err)
		case dedup.TextFingerprint(b) == m1.Fingerprint:
			if !m3.Seen || m3.Near {
				t.Fatalf("same normalised text not an exact duplicate: %+v", m3)
			}
		case m3.Seen:
			if !m3.Near || m3.URL != "u1" || m3.Similarity < 0.8 || m3.Similarity > 1 {
				t.Fatalf("near match: %+v", m3)
			}
		}
		if err := c.Forget(ctx, m1.Fingerprint); err != nil {
			t.Fatal(err)
		}
		if !m3.Seen && m3.Fingerprint != m1.Fingerprint {
			if err := c.Forget(ctx, m3.Fingerprint); err != nil {
				t.Fatal(err)
			}
		}
		if m, err := c.Seen(ctx, dedup.Doc{URL: "u4", Text: a}); err != nil || m.Seen {
			t.Fatalf("after Forget: %+v, %v", m, err)
		}
	})
}
