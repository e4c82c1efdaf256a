package fetchtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHandler measures the server's own cost per page (routing,
// generation, rendering, ETag, no network and no gzip), the figure that bounds
// how fast the simulated web can feed a crawler.
func BenchmarkHandler(b *testing.B) {
	w := NewWeb(Config{Seed: 1, Hosts: 50})
	defer w.Close()
	pages := w.Pages()
	reqs := make([]*http.Request, len(pages))
	for i, p := range pages {
		reqs[i], _ = http.NewRequest("GET", p, nil)
	}
	rec := httptest.NewRecorder()
	var total int64
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rec.Body.Reset()
		w.serveHTTP(rec, reqs[i%len(reqs)])
		total += int64(rec.Body.Len())
		i++
	}
	b.SetBytes(total / int64(i))
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "pages/s")
	w.ResetLog()
}
