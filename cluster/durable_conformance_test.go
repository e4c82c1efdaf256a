package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/crawlkit/crawlkit/dedup"
	"github.com/crawlkit/crawlkit/dedup/deduptest"
)

// TestContentDurableConformance runs the dedup.Durable suite on node
// n0's Content of a fresh three-node cluster: its partition is what it
// logs and replays, so the suite uses the documents n0 owns.
func TestContentDurableConformance(t *testing.T) {
	ring, err := NewRing(conformanceNodes, 64) // startNodes' Shards
	if err != nil {
		t.Fatal(err)
	}
	deduptest.TestDurable(t, deduptest.DurableHarness{
		New: func(t *testing.T) deduptest.DurableContent {
			return startNodes(t, conformanceNodes, memTransports(t, conformanceNodes), nil)[0].ContentSeen()
		},
		Keeps: func(fp uint64) bool { return ring.FingerprintOwner(fp) == "n0" },
	})
}

// TestContentLogFile checks Options.ContentLog across restarts of node
// n0: its partition comes back; a torn last record (a kill in mid-write)
// is cut off and later records follow the complete ones; a damaged log
// stops NewNode with ErrCorrupt.
func TestContentLogFile(t *testing.T) {
	ring, err := NewRing(conformanceNodes, 64)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for seed := uint64(1); len(texts) < 3; seed++ {
		if text := deduptest.Text(seed, 100); ring.FingerprintOwner(dedup.TextFingerprint([]byte(text))) == "n0" {
			texts = append(texts, text)
		}
	}
	path := filepath.Join(t.TempDir(), "content.log")
	tr := memTransports(t, conformanceNodes)
	start := func() (*Node, error) {
		return NewNode(context.Background(), &Options{Name: "n0", Nodes: conformanceNodes, Transport: tr[0],
			Logger: quietLogger(), Shards: 64, ContentLog: path})
	}
	ctx := context.Background()
	seen := func(nd *Node, i int) dedup.Match {
		t.Helper()
		m, err := nd.ContentSeen().Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://copy.test/%p", nd), Text: []byte(texts[i])})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	nd, err := start()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if m, err := nd.ContentSeen().Seen(ctx, dedup.Doc{URL: fmt.Sprintf("http://h%d.test/", i), Text: []byte(texts[i])}); err != nil || m.Seen {
			t.Fatalf("text %d: %+v, %v", i, m, err)
		}
	}
	nd.Close()
	complete, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A kill in the middle of the next record's write.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{40, 0, 0, 0, 1, 2, 3, 4, '+', 9})
	f.Close()

	nd, err = start()
	if err != nil {
		t.Fatalf("restart on a log with a torn tail: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(len(complete)) {
		t.Fatalf("the torn record was not cut off: %v, %v bytes, want %d", err, fi.Size(), len(complete))
	}
	for i := range 2 {
		if m := seen(nd, i); !m.Seen || m.URL != fmt.Sprintf("http://h%d.test/", i) {
			t.Errorf("text %d after the restart: %+v", i, m)
		}
	}
	if m, err := nd.ContentSeen().Seen(ctx, dedup.Doc{URL: "http://h2.test/", Text: []byte(texts[2])}); err != nil || m.Seen {
		t.Fatalf("text 2: %+v, %v", m, err)
	}
	nd.Close()

	nd, err = start()
	if err != nil {
		t.Fatal(err)
	}
	if m := seen(nd, 2); !m.Seen || m.URL != "http://h2.test/" {
		t.Errorf("text 2, recorded after the cut, after a second restart: %+v", m)
	}
	nd.Close()

	// A flipped byte in the first record's payload.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[10] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if nd, err := start(); !errors.Is(err, dedup.ErrCorrupt) {
		if nd != nil {
			nd.Close()
		}
		t.Errorf("NewNode on a damaged content log: %v, want an error wrapping dedup.ErrCorrupt", err)
	}
}
