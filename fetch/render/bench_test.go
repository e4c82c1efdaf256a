package render

import (
	"strconv"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// BenchmarkRender renders the web application's pages one after the
// other, with and without the cache of shared files, and reports the
// milliseconds per page and the requests per page the web saw (the page
// itself included).
func BenchmarkRender(b *testing.B) {
	for _, cache := range []int64{0, -1} {
		name := "cache"
		if cache < 0 {
			name = "nocache"
		}
		b.Run(name, func(b *testing.B) {
			w := scriptWeb(b, fetchtest.Config{})
			f := newFetcher(b, w, Options{CacheBytes: cache})
			app := w.Host(fetchtest.ScriptApp)
			get(b, f, w.URL(app, "/")) // the browser warms up
			w.ResetLog()
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				if !get(b, f, w.URL(app, "/p/"+strconv.Itoa(1+i%(fetchtest.AppPages-1))+".html")).Rendered {
					b.Fatal("not rendered")
				}
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/page")
			b.ReportMetric(float64(len(w.Log()))/float64(b.N), "requests/page")
		})
	}
}
