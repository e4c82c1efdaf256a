package console

import (
	"encoding/xml"
	"regexp"
	"strings"
	"testing"
)

func TestNiceStep(t *testing.T) {
	for _, tt := range []struct{ raw, want float64 }{
		{0, 1}, {-3, 1}, {0.03, 0.05}, {0.1, 0.1}, {0.11, 0.2}, {1, 1}, {1.2, 2}, {3, 5}, {7, 10}, {240, 500}, {2000, 2000}, {2001, 5000},
	} {
		if got := niceStep(tt.raw); got != tt.want {
			t.Errorf("niceStep(%v) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	for _, tt := range []struct{ raw, want float64 }{{0.2, 0.2}, {0.3, 0.5}, {0.7, 1}, {3, 5}, {40, 60}, {500, 600}, {5000, 7200}, {200000, 259200}} {
		if got := timeStep(tt.raw); got != tt.want {
			t.Errorf("timeStep(%v) = %v, want %v", tt.raw, got, tt.want)
		}
	}
	for _, tt := range []struct {
		sec  float64
		want string
	}{{0, "0s"}, {0.5, "0.5s"}, {45, "45s"}, {120, "2m"}, {150, "2m30s"}, {3600, "1h"}, {3900, "1h05m"}} {
		if got := clock(tt.sec); got != tt.want {
			t.Errorf("clock(%v) = %q, want %q", tt.sec, got, tt.want)
		}
	}
	for _, tt := range []struct {
		v    float64
		want string
	}{{0, "0"}, {2.5, "2.5"}, {750, "750"}, {1500, "1.5k"}, {20000, "20k"}, {3e6, "3M"}, {4.25e9, "4.25G"}} {
		if got := compact(tt.v); got != tt.want {
			t.Errorf("compact(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

var tickRE = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)

// TestChartSVG: a chart is well-formed SVG whose y ticks are round
// numbers from 0 to at least the maximum, whose x ticks are round
// durations, and whose axes carry the unit and "crawl time".
func TestChartSVG(t *testing.T) {
	s := series{title: "Pages per second", unit: "pages/s"}
	for i := range 61 {
		s.x = append(s.x, float64(i))
		s.y = append(s.y, float64(i*i)/3) // up to 1200
	}
	svg := string(s.svg())
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, svg)
	}
	var labels []string
	for _, m := range tickRE.FindAllStringSubmatch(svg, -1) {
		labels = append(labels, m[1])
	}
	got := strings.Join(labels, " ")
	for _, want := range []string{"pages/s", "crawl time", "0 ", "500", "1k", "1.5k", "0s", "10s", "30s", "1m"} {
		if !strings.Contains(got+" ", want) {
			t.Errorf("tick and axis labels %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "2k") {
		t.Errorf("the y axis goes past its round top 1.5k: %q", got)
	}
	if n := strings.Count(svg, "<polyline"); n != 1 {
		t.Errorf("%d lines, want 1", n)
	}
	empty := string(series{title: "x", unit: "u", x: []float64{1}, y: []float64{1}}.svg())
	if !strings.Contains(empty, "waiting for samples") || xml.Unmarshal([]byte(empty), new(struct{})) != nil {
		t.Errorf("a chart of one sample: %s", empty)
	}
	flat := string(series{title: "x", unit: "u", x: []float64{5, 5}, y: []float64{0, 0}}.svg())
	if strings.Contains(flat, "NaN") || strings.Contains(flat, "Inf") {
		t.Errorf("a chart of zeros at one instant: %s", flat)
	}
}
