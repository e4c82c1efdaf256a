package console

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit"
)

// view is what the templates show.
type view struct {
	Now, State, StateClass, Reason string
	Started, Elapsed               string
	RefreshMS                      int64
	Settings                       []Setting
	Seeds                          []string
	MoreSeeds                      int
	Limits                         []limit
	Figures                        []Setting
	RateChart, FrontierChart       template.HTML
	Outcomes, Links, Filtered      []row
	Finished                       uint64
	Statuses, ErrorKinds           []row
	Responses                      uint64
	Busiest, Slowest               []host
	Errors                         []failure
	Stages                         []stage
	Caches                         []Setting
	Controls, CanStop, Paused      bool
	Running                        bool
}

type limit struct {
	Name, Done, Of, ETA string
	Pct                 float64
}

type row struct {
	Name  string
	N     uint64
	Pct   float64
	Class string
}

type host struct {
	Host, Fetches, Errors, Mean, Max, Bytes string
}

type failure struct {
	Time, URL, Kind, Err string
}

type stage struct {
	Name, Count, Mean, P50, P99 string
}

// view gathers the crawl's figures as of now.
func (k *Console) view(now time.Time) view {
	c := k.c
	s, a, cfg := c.Stats(), c.Activity(k.opts.Hosts), c.Config()
	samples := k.snapshot()
	v := view{
		Now: now.Format("15:04:05"), RefreshMS: k.opts.Refresh.Milliseconds(),
		Elapsed:  s.Elapsed.Round(time.Second).String(),
		Controls: k.opts.Controls, CanStop: k.opts.Stop != nil, Paused: a.Paused,
	}
	switch {
	case a.Started.IsZero():
		v.State, v.StateClass = "not started", "idle"
	case !a.Ended.IsZero():
		v.State, v.StateClass, v.Reason = "finished", "done", c.StopReason()
		v.Elapsed += " (ended " + a.Ended.Format("15:04:05") + ")"
	case a.Paused:
		v.State, v.StateClass, v.Running = "paused", "paused", true
	default:
		v.State, v.StateClass, v.Running = "running", "running", true
	}
	if !a.Started.IsZero() {
		v.Started = a.Started.Format("2006-01-02 15:04:05")
	}

	// Settings: the crawl's, then the program's.
	v.Seeds = cfg.Seeds[:min(len(cfg.Seeds), 5)]
	v.MoreSeeds = len(cfg.Seeds) - len(v.Seeds)
	limitText := func(n int64, unit string) string {
		if n <= 0 {
			return "none"
		}
		return group(uint64(n)) + unit
	}
	v.Settings = []Setting{
		{"workers", strconv.Itoa(cfg.Workers)},
		{"max pages", limitText(cfg.MaxPages, "")},
		{"max duration", durationOrNone(cfg.MaxDuration)},
		{"max bytes", limitText(cfg.MaxBytes, " B")},
		{"max depth", limitText(int64(cfg.MaxDepth), "")},
		{"per host / domain", limitText(int64(cfg.MaxPagesPerHost), "") + " / " + limitText(int64(cfg.MaxPagesPerDomain), "") + " URLs"},
		{"politeness", fmt.Sprintf("%g × fetch time, %v – %v", cfg.DelayFactor, cfg.MinDelay, cfg.MaxDelay)},
	}
	v.Settings = append(v.Settings, k.opts.Settings...)

	// Progress toward the limits, with an ETA at the recent rate.
	pagesRate, bytesRate := recentRates(samples, 30)
	if cfg.MaxPages > 0 {
		done := s.Pages()
		v.Limits = append(v.Limits, limit{Name: "pages", Done: group(done), Of: group(uint64(cfg.MaxPages)),
			Pct: pct(float64(done), float64(cfg.MaxPages)), ETA: eta(float64(cfg.MaxPages)-float64(done), pagesRate, v.Running)})
	}
	if cfg.MaxDuration > 0 {
		left := (cfg.MaxDuration - s.Elapsed).Seconds()
		v.Limits = append(v.Limits, limit{Name: "time", Done: s.Elapsed.Round(time.Second).String(), Of: cfg.MaxDuration.String(),
			Pct: pct(s.Elapsed.Seconds(), cfg.MaxDuration.Seconds()), ETA: eta(left, 1, v.Running)})
	}
	if cfg.MaxBytes > 0 {
		v.Limits = append(v.Limits, limit{Name: "bytes", Done: bytesText(s.Bytes), Of: bytesText(cfg.MaxBytes),
			Pct: pct(float64(s.Bytes), float64(cfg.MaxBytes)), ETA: eta(float64(cfg.MaxBytes-s.Bytes), bytesRate, v.Running)})
	}

	v.Figures = []Setting{
		{"pages", group(s.Pages())},
		{"pages/s, last 30 s", fmt.Sprintf("%.1f", pagesRate)},
		{"pages/s, whole crawl", fmt.Sprintf("%.1f", s.PagesPerSecond())},
		{"frontier", group(uint64(s.Frontier.Pending())) + " URLs"},
		{"in flight", strconv.Itoa(s.InFlight)},
		{"hosts", group(uint64(s.Hosts))},
		{"received", bytesText(s.Bytes)},
	}

	xs, rate, front := make([]float64, 0, len(samples)), make([]float64, 0, len(samples)), make([]float64, 0, len(samples))
	for i, p := range samples {
		if i == 0 {
			continue
		}
		q := samples[i-1]
		xs = append(xs, p.at)
		rate = append(rate, float64(p.pages-q.pages)/max(p.at-q.at, 1e-9))
		front = append(front, float64(p.frontier))
	}
	v.RateChart = series{title: "Pages per second", unit: "pages/s", x: xs, y: rate}.svg()
	v.FrontierChart = series{title: "Frontier size", unit: "URLs in the frontier", x: xs, y: front}.svg()

	// Outcomes of the URLs taken from the frontier: final ones only.
	v.Finished = s.Finished()
	for i, n := range s.Outcomes {
		if o := crawlkit.Outcome(i); o.Final() && n > 0 {
			v.Outcomes = append(v.Outcomes, row{Name: o.String(), N: n, Pct: pct(float64(n), float64(v.Finished)), Class: outcomeClass(o)})
		}
	}
	v.Links = []row{
		{Name: "queued (seeds and links admitted)", N: s.Outcomes[crawlkit.Queued]},
		{Name: "seen before (URL seen?)", N: s.Outcomes[crawlkit.DuplicateURL]},
		{Name: "filtered", N: s.Outcomes[crawlkit.Filtered]},
		{Name: "retried later (429, 503, network)", N: s.Outcomes[crawlkit.Retried]},
	}
	if n := s.Outcomes[crawlkit.Sent]; n > 0 {
		v.Links = append(v.Links, row{Name: "sent to a peer", N: n})
	}
	v.Filtered = sortedRows(s.FilteredBy)
	for code, n := range s.Status {
		v.Responses += n
		v.Statuses = append(v.Statuses, row{Name: strconv.Itoa(code) + " " + http.StatusText(code), N: n, Class: statusClass(code)})
	}
	slices.SortFunc(v.Statuses, func(a, b row) int { return strings.Compare(a.Name, b.Name) })
	for i := range v.Statuses {
		v.Statuses[i].Pct = pct(float64(v.Statuses[i].N), float64(v.Responses))
	}
	v.ErrorKinds = sortedRows(s.Errors)

	for _, h := range a.Busiest {
		v.Busiest = append(v.Busiest, hostRow(h))
	}
	for _, h := range a.Slowest {
		v.Slowest = append(v.Slowest, hostRow(h))
	}
	for i := len(a.Errors) - 1; i >= 0 && len(v.Errors) < 20; i-- {
		e := a.Errors[i]
		msg := e.Err
		if e.Kind == "http" {
			msg = strconv.Itoa(e.Status) + " " + http.StatusText(e.Status)
		}
		v.Errors = append(v.Errors, failure{Time: e.Time.Format("15:04:05"), URL: e.URL, Kind: e.Kind, Err: msg})
	}

	v.Stages = append(v.Stages, stageRow("fetch (whole)", a.FetchTime))
	for st, h := range a.Stages {
		v.Stages = append(v.Stages, stageRow(crawlkit.Stage(st).String(), h))
	}

	r := a.Robots
	looks := r.Hits + r.Waits + r.Fetches
	v.Caches = []Setting{
		{"robots.txt answered from cache", fmt.Sprintf("%s of %s checks (%.1f%%)", group(uint64(r.Hits+r.Waits)), group(uint64(looks)), pct(float64(r.Hits+r.Waits), float64(looks)))},
		{"robots.txt fetches", fmt.Sprintf("%s: %s without a file, %s failed (%s answered from a stale copy)", group(uint64(r.Fetches)), group(uint64(r.Unavailable)), group(uint64(r.Unreachable)), group(uint64(r.Stale)))},
	}
	if d := a.DNS; d != nil {
		v.Caches = append(v.Caches,
			Setting{"DNS answered from cache", fmt.Sprintf("%.1f%% of lookups; %s names cached", 100*d.HitRate(), group(uint64(d.Entries)))},
			Setting{"DNS resolutions", fmt.Sprintf("%s: %s not found, %s failed; p50 %v, p99 %v", group(d.Resolved+d.NotFound+d.Failures), group(d.NotFound), group(d.Failures), d.Latency.P50, d.Latency.P99)},
		)
	}
	if a.SinkErrors > 0 {
		v.Caches = append(v.Caches, Setting{"sink errors", group(a.SinkErrors)})
	}
	return v
}

// recentRates returns pages/s and bytes/s over the last window seconds
// of samples.
func recentRates(samples []sample, window float64) (pages, bytes float64) {
	if len(samples) < 2 {
		return 0, 0
	}
	last := samples[len(samples)-1]
	first := samples[0]
	for i := len(samples) - 2; i >= 0; i-- {
		first = samples[i]
		if last.at-first.at >= window {
			break
		}
	}
	dt := last.at - first.at
	if dt <= 0 {
		return 0, 0
	}
	return float64(last.pages-first.pages) / dt, float64(last.bytes-first.bytes) / dt
}

func eta(left, rate float64, running bool) string {
	switch {
	case left <= 0:
		return "reached"
	case !running:
		return "—"
	case rate <= 0:
		return "unknown (no progress lately)"
	}
	return "in " + (time.Duration(left/rate) * time.Second).Round(time.Second).String()
}

func pct(n, of float64) float64 {
	if of <= 0 {
		return 0
	}
	return math.Min(100, 100*n/of)
}

func durationOrNone(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}

// group writes n with thin spaces between groups of three digits.
func group(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(c)
	}
	return b.String()
}

func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, i := float64(n), 0
	for f >= unit && i < 5 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTP"[i-1])
}

func ms(sec float64) string {
	if math.IsInf(sec, 1) {
		return "> 30 s"
	}
	d := time.Duration(sec * 1e9)
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func stageRow(name string, h crawlkit.Histogram) stage {
	n := h.Count()
	if n == 0 {
		return stage{Name: name, Count: "0", Mean: "—", P50: "—", P99: "—"}
	}
	return stage{Name: name, Count: group(n), Mean: ms(h.Mean()), P50: "≤ " + ms(h.Quantile(.5)), P99: "≤ " + ms(h.Quantile(.99))}
}

func hostRow(h crawlkit.HostActivity) host {
	return host{Host: h.Host, Fetches: group(h.Fetches), Errors: group(h.Errors), Mean: h.MeanFetch().Round(100 * time.Microsecond).String(),
		Max: h.MaxFetch.Round(100 * time.Microsecond).String(), Bytes: bytesText(h.Bytes)}
}

func sortedRows(m map[string]uint64) []row {
	var total uint64
	rows := make([]row, 0, len(m))
	for k, n := range m {
		rows = append(rows, row{Name: k, N: n})
		total += n
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(-cmp.Compare(a.N, b.N), strings.Compare(a.Name, b.Name)) })
	for i := range rows {
		rows[i].Pct = pct(float64(rows[i].N), float64(total))
	}
	return rows
}

func outcomeClass(o crawlkit.Outcome) string {
	switch o {
	case crawlkit.Fetched, crawlkit.Unchanged:
		return "ok"
	case crawlkit.HTTPError, crawlkit.FetchError, crawlkit.ParseError:
		return "bad"
	}
	return "meh"
}

func statusClass(code int) string {
	switch {
	case code < 300:
		return "ok"
	case code < 400:
		return "meh"
	}
	return "bad"
}
