package console

import (
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/crawlkit/crawlkit"
)

// scrape fetches the metrics of h in the Prometheus text format and
// parses them with Prometheus's own parser, which refuses malformed
// exposition (bad names, a family's samples split, a TYPE after its
// samples, duplicate HELP), then with promlint, Prometheus's checks of
// metric names, units and types.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	r := httptest.NewRequest("GET", "/metrics", nil)
	r.Header.Set("Accept", "text/plain")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	body := w.Body.Bytes()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not valid Prometheus text format: %v", err)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	return fams
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return math.NaN()
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestMetrics: after a crawl, /metrics passes Prometheus's text parser
// and promlint (the Go runtime's and process's metrics included), every family has the type its name promises, the final
// outcomes sum to the URLs finished (and queued URLs are not among
// them), the HTTP statuses to the responses, the fetch histogram counts
// every fetch, and the Go runtime's and the process's metrics are there.
func TestMetrics(t *testing.T) {
	tc := newTestCrawl(t, 0, nil)
	s := tc.wait(t)

	fams := scrape(t, tc.k.metrics)
	for name, f := range fams {
		typ := f.GetType()
		switch {
		case strings.HasSuffix(name, "_total") && typ != dto.MetricType_COUNTER:
			t.Errorf("%s is a %v, not a counter", name, typ)
		case strings.HasPrefix(name, "crawlkit_") && !strings.HasSuffix(name, "_total") && typ == dto.MetricType_COUNTER:
			t.Errorf("counter %s lacks _total", name)
		case f.GetHelp() == "":
			t.Errorf("%s has no HELP", name)
		}
	}
	must := func(name string) *dto.MetricFamily {
		f := fams[name]
		if f == nil {
			t.Fatalf("/metrics lacks %s", name)
		}
		return f
	}

	var finished float64
	outcomes := map[string]bool{}
	for _, m := range must("crawlkit_urls_finished_total").Metric {
		finished += value(m)
		outcomes[labelOf(m, "outcome")] = true
	}
	if finished != float64(s.Finished()) || outcomes["queued"] || outcomes["retried"] || !outcomes["fetched"] || !outcomes["http_error"] {
		t.Errorf("final outcomes sum to %v (Finished %d), labels %v", finished, s.Finished(), outcomes)
	}
	if v := value(must("crawlkit_urls_queued_total").Metric[0]); v != float64(s.Outcomes[crawlkit.Queued]) {
		t.Errorf("queued %v, want %d", v, s.Outcomes[crawlkit.Queued])
	}
	var responses float64
	codes := map[string]float64{}
	for _, m := range must("crawlkit_http_responses_total").Metric {
		responses += value(m)
		codes[labelOf(m, "code")] = value(m)
	}
	if codes["200"] == 0 || codes["404"] == 0 {
		t.Errorf("statuses %v lack 200 or 404", codes)
	}
	fetches := must("crawlkit_fetch_duration_seconds").Metric[0].Histogram
	if fetches.GetSampleCount() < uint64(responses) || fetches.GetSampleSum() <= 0 || len(fetches.Bucket) != 15 {
		t.Errorf("fetch histogram: %d fetches, %v s, %d buckets; %v responses", fetches.GetSampleCount(), fetches.GetSampleSum(), len(fetches.Bucket), responses)
	}
	stages := map[string]uint64{}
	for _, m := range must("crawlkit_stage_duration_seconds").Metric {
		stages[labelOf(m, "stage")] = m.Histogram.GetSampleCount()
	}
	for _, st := range []string{"robots", "parse", "content", "commit"} {
		if stages[st] == 0 {
			t.Errorf("stage %s has no observations: %v", st, stages)
		}
	}
	if f := must("crawlkit_hosts_total"); f.GetType() != dto.MetricType_COUNTER || value(f.Metric[0]) != float64(s.Hosts) {
		t.Errorf("hosts: %v", f)
	}
	start := value(must("crawlkit_start_time_seconds").Metric[0])
	if now := float64(time.Now().Unix()); start < now-120 || start > now+1 {
		t.Errorf("start time %v, now %v", start, now)
	}
	must("crawlkit_response_size_bytes")
	must("go_goroutines")
	must("go_memstats_heap_alloc_bytes")
	if runtime.GOOS == "linux" {
		must("process_resident_memory_bytes")
		must("process_start_time_seconds")
	}
}
