package console

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// dashboardFile is the Grafana dashboard built on the console's metrics.
const dashboardFile = "../docs/grafana-dashboard.json"

// grafanaPanel is the part of a Grafana panel the schema check reads.
type grafanaPanel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct{ X, Y, W, H int } `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

type grafanaDashboard struct {
	Title         string         `json:"title"`
	UID           string         `json:"uid"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// promQL parts that are not metric names: quoted strings, label
// matchers, grouping clauses, ranges, numbers, functions and keywords.
var (
	reQuoted      = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	reMatchers    = regexp.MustCompile(`\{[^}]*\}`)
	reGrouping    = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	reRange       = regexp.MustCompile(`\[[^\]]*\]`)
	reLabelValues = regexp.MustCompile(`^\s*label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$`)
	reIdent       = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*\s*\(?`)
	keywords      = []string{"by", "without", "and", "or", "unless", "bool", "offset", "on", "ignoring", "group_left", "group_right", "le", "inf", "nan"}
)

// metricNames returns the metric names a PromQL expression reads.
func metricNames(expr string) []string {
	// Grafana's label_values(metric, label) names a label second.
	if m := reLabelValues.FindStringSubmatch(expr); m != nil {
		return []string{m[1]}
	}
	e := reQuoted.ReplaceAllString(expr, `""`)
	e = reMatchers.ReplaceAllString(e, " ")
	e = reGrouping.ReplaceAllString(e, " ")
	e = reRange.ReplaceAllString(e, " ")
	var names []string
	for _, id := range reIdent.FindAllString(e, -1) {
		id = strings.TrimSpace(id)
		if strings.HasSuffix(id, "(") || slices.Contains(keywords, strings.ToLower(id)) {
			continue // a function call or a keyword
		}
		names = append(names, id)
	}
	return names
}

func TestMetricNames(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{`sum by (code) (rate(crawlkit_http_responses_total{instance=~"$instance"}[5m]))`, []string{"crawlkit_http_responses_total"}},
		{`histogram_quantile(0.9, sum by (le) (rate(a_bucket{x="y{z}"}[1m])))`, []string{"a_bucket"}},
		{`time() - max(crawlkit_start_time_seconds)`, []string{"crawlkit_start_time_seconds"}},
		{`sum(rate(a_sum[5m])) / on (stage) sum(rate(a_count[5m])) > bool 0`, []string{"a_sum", "a_count"}},
		{`go_goroutines`, []string{"go_goroutines"}},
		{`label_values(crawlkit_workers, instance)`, []string{"crawlkit_workers"}},
	} {
		if got := metricNames(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

// TestGrafanaDashboard: docs/grafana-dashboard.json is a valid dashboard
// (unique panel ids, a 24-column grid, a Prometheus data source picked by
// the datasource variable, unique refIds) and every expression, the
// variables' queries included, reads only metrics the console's handler
// exports, checked against a scrape of a real crawl.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.Title == "" || d.UID == "" || d.SchemaVersion < 30 || len(d.Panels) == 0 {
		t.Fatalf("dashboard header: title %q, uid %q, schemaVersion %d, %d panels", d.Title, d.UID, d.SchemaVersion, len(d.Panels))
	}

	tc := newTestCrawl(t, 0, nil)
	tc.wait(t)
	exported := map[string]bool{}
	for name, f := range scrape(t, tc.k.metrics) {
		exported[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, sfx := range []string{"_bucket", "_sum", "_count"} {
				exported[name+sfx] = true
			}
		}
	}
	check := func(where, expr string) {
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q reads no metric", where, expr)
		}
		for _, n := range names {
			if !exported[n] {
				t.Errorf("%s: %q reads %s, which /metrics does not export", where, expr, n)
			}
		}
	}

	ids := map[int]bool{}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Definition != "" {
			check("variable "+v.Name, v.Definition)
		}
	}
	if !vars["datasource"] {
		t.Error("no datasource variable: the dashboard cannot be imported into another Grafana")
	}
	queries := 0
	for _, p := range d.Panels {
		where := "panel " + p.Title
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("%s: id %d missing or used twice", where, p.ID)
		}
		ids[p.ID] = true
		if p.Title == "" || p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: title or grid position %+v invalid", where, p.GridPos)
		}
		if !slices.Contains([]string{"row", "timeseries", "stat", "gauge", "table", "bargauge"}, p.Type) {
			t.Errorf("%s: unknown panel type %q", where, p.Type)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("%s: data source %+v, want the ${datasource} variable", where, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no query", where)
		}
		refs := map[string]bool{}
		for _, q := range p.Targets {
			if refs[q.RefID] || q.RefID == "" {
				t.Errorf("%s: refId %q missing or used twice", where, q.RefID)
			}
			refs[q.RefID] = true
			check(where, q.Expr)
			queries++
		}
	}
	t.Logf("%d panels, %d queries, every metric exported", len(d.Panels), queries)
}
