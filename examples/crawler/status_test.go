package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit"
)

func TestStatusPageAndMetrics(t *testing.T) {
	s, err := startStatus("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 5 {
		var st crawlkit.Stats
		st.Elapsed = time.Duration(i+1) * time.Second
		st.Outcomes[crawlkit.Fetched] = uint64(100 * (i + 1))
		st.Frontier.Queued = 50 - i
		s.record(st)
	}
	get := func(path string) (int, string, string) {
		resp, err := http.Get("http://" + s.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	code, ctype, body := get("/")
	if code != 200 || !strings.HasPrefix(ctype, "text/html") || !strings.Contains(body, "<svg") || !strings.Contains(body, "<polyline") {
		t.Fatalf("status page: %d %s\n%s", code, ctype, body)
	}
	code, ctype, body = get("/metrics")
	if code != 200 || !strings.HasPrefix(ctype, "text/plain") {
		t.Fatalf("/metrics: %d %s", code, ctype)
	}
	for _, want := range []string{`crawlkit_urls_total{outcome="fetched"} 500`, "crawlkit_pages_total 500", "crawlkit_frontier_urls 46", "# TYPE crawlkit_pages_total counter"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if code, _, _ := get("/nosuch"); code != 404 {
		t.Errorf("unknown path answered %d", code)
	}
}

func TestChartSVGEmpty(t *testing.T) {
	if s := chartSVG(nil, 100, 50); !strings.Contains(s, "collecting") {
		t.Errorf("empty chart: %s", s)
	}
}
