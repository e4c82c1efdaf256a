package console

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// series is one chart's data: y against x, x in seconds of crawl time.
type series struct {
	title, unit string // "Pages per second", "pages/s"
	x, y        []float64
}

// Chart geometry, in SVG user units; the SVG scales to its box.
const (
	chartW, chartH           = 560, 220
	padL, padR, padT, padB   = 64, 16, 12, 40
	plotW, plotH             = chartW - padL - padR, chartH - padT - padB
	wantXTicks, wantYTicks   = 6, 5
	chartStroke, chartShadow = "#1f6fb2", "#1f6fb21f"
)

// svg renders s as a line chart with one scale: y ticks at round numbers
// with gridlines, x ticks at round durations, both axes titled with their
// unit. Fewer than two points render as a box saying so.
func (s series) svg() template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s over crawl time">`, chartW, chartH, template.HTMLEscapeString(s.title))
	fmt.Fprintf(&b, `<title>%s over crawl time</title>`, template.HTMLEscapeString(s.title))
	// The y axis title, rotated along the axis.
	fmt.Fprintf(&b, `<text class="axis-title" transform="translate(14 %d) rotate(-90)" text-anchor="middle">%s</text>`, padT+plotH/2, template.HTMLEscapeString(s.unit))
	fmt.Fprintf(&b, `<text class="axis-title" x="%d" y="%d" text-anchor="middle">crawl time</text>`, padL+plotW/2, chartH-4)
	if len(s.x) < 2 {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="frame"/><text x="%d" y="%d" text-anchor="middle" class="empty">waiting for samples…</text></svg>`,
			padL, padT, plotW, plotH, padL+plotW/2, padT+plotH/2)
		return template.HTML(b.String())
	}
	x0, x1 := s.x[0], s.x[len(s.x)-1]
	if x1 <= x0 {
		x1 = x0 + 1
	}
	ymax := 0.0
	for _, v := range s.y {
		ymax = max(ymax, v)
	}
	ystep := niceStep(ymax / wantYTicks)
	ytop := math.Max(ystep*math.Ceil(ymax/ystep), ystep)
	px := func(x float64) float64 { return padL + (x-x0)/(x1-x0)*plotW }
	py := func(y float64) float64 { return padT + plotH - y/ytop*plotH }

	b.WriteString(`<g class="grid">`)
	for y := 0.0; y <= ytop+ystep/2; y += ystep {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padL, padL+plotW, py(y), py(y))
	}
	b.WriteString(`</g><g class="ticks y">`)
	for y := 0.0; y <= ytop+ystep/2; y += ystep {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, padL-6, py(y), compact(y))
	}
	b.WriteString(`</g><g class="ticks x">`)
	xstep := timeStep((x1 - x0) / wantXTicks)
	for x := math.Ceil(x0/xstep) * xstep; x <= x1+1e-9; x += xstep {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`,
			px(x), px(x), padT+plotH, padT+plotH+4, px(x), padT+plotH+16, clock(x))
	}
	b.WriteString(`</g>`)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="frame"/>`, padL, padT, plotW, plotH)

	var pts strings.Builder
	for i := range s.x {
		fmt.Fprintf(&pts, "%.1f,%.1f ", px(s.x[i]), py(s.y[i]))
	}
	fmt.Fprintf(&b, `<polygon fill="%s" points="%.1f,%.1f %s%.1f,%.1f"/>`, chartShadow, px(s.x[0]), py(0), pts.String(), px(x1), py(0))
	fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" points="%s"/>`, chartStroke, strings.TrimSpace(pts.String()))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceStep returns the least of 1, 2 and 5 times a power of ten that is
// at least raw (1 for raw ≤ 0).
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// timeSteps are the x-axis tick intervals, in seconds: steps a clock
// reader counts in.
var timeSteps = []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 4 * 3600, 6 * 3600, 12 * 3600, 86400}

// timeStep returns the least of timeSteps that is at least raw seconds,
// or whole days beyond them.
func timeStep(raw float64) float64 {
	for _, s := range timeSteps {
		if s >= raw {
			return s
		}
	}
	return 86400 * math.Ceil(raw/86400)
}

// clock formats seconds of crawl time as a tick label: "0.5s", "45s", "2m",
// "2m30s", "1h", "1h05m".
func clock(sec float64) string {
	if sec < 10 && sec != math.Round(sec) {
		return trim(sec) + "s" // a sub-second step of a short chart
	}
	d := time.Duration(math.Round(sec)) * time.Second
	h, m, s := int(d/time.Hour), int(d/time.Minute)%60, int(d/time.Second)%60
	switch {
	case h > 0 && m == 0:
		return strconv.Itoa(h) + "h"
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case m > 0 && s == 0:
		return strconv.Itoa(m) + "m"
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return strconv.Itoa(s) + "s"
}

// compact formats a tick value: "0", "2.5", "750", "1.5k", "20k", "3M".
func compact(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return trim(v/1e9) + "G"
	case a >= 1e6:
		return trim(v/1e6) + "M"
	case a >= 1e3:
		return trim(v/1e3) + "k"
	}
	return trim(v)
}

func trim(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }
