package webgraph

import (
	"path/filepath"
	"testing"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// simulatedWebStore builds a Store from the ground-truth link graph of a
// fetchtest.Web (its Links of all its Pages), and the MemStore of the same
// links.
func simulatedWebStore(tb testing.TB, hosts int) (*Store, *MemStore) {
	tb.Helper()
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: hosts})
	defer web.Close()
	dir := tb.TempDir()
	b, err := NewBuilder(&BuilderOptions{TempDir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	defer b.Close()
	var links []Link
	pages := web.Pages()
	for _, p := range pages {
		if err := b.AddURL(p); err != nil {
			tb.Fatal(err)
		}
		for _, l := range web.Links(p) {
			links = append(links, Link{Src: p, Dst: l})
			if err := b.AddLink(p, l); err != nil {
				tb.Fatal(err)
			}
		}
	}
	base := filepath.Join(dir, "sim")
	if err := b.Finish(base); err != nil {
		tb.Fatal(err)
	}
	s, err := OpenStore(base)
	if err != nil {
		tb.Fatal(err)
	}
	return s, NewMemStore(links, pages...)
}

func TestSimulatedWeb(t *testing.T) {
	s, mem := simulatedWebStore(t, sizeFor(20, 5))
	if s.NumArcs() == 0 {
		t.Fatal("the simulated web has no links")
	}
	checkStores(t, mem, s)
	t.Logf("%d pages, %d links: %.3f bits/link, transpose %.3f", s.NumNodes(), s.NumArcs(),
		float64(s.Graph().StreamBits())/float64(s.NumArcs()), float64(s.Transpose().StreamBits())/float64(s.NumArcs()))
}

// BenchmarkSimulatedWebBitsPerLink reports the compression of the link
// graph of a 50-host fetchtest.Web.
func BenchmarkSimulatedWebBitsPerLink(b *testing.B) {
	var s *Store
	for i := 0; i < b.N; i++ {
		s, _ = simulatedWebStore(b, 50)
	}
	b.ReportMetric(float64(s.Graph().StreamBits())/float64(s.NumArcs()), "bits/link")
	b.ReportMetric(float64(s.Transpose().StreamBits())/float64(s.NumArcs()), "transpose-bits/link")
	b.ReportMetric(float64(s.URLs().SizeBytes())/float64(s.NumNodes()), "url-bytes/node")
	b.ReportMetric(float64(s.NumArcs()), "links")
}
