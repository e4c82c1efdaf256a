package frontier_test

import (
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/frontier"
)

func TestDepth(t *testing.T) {
	for _, tc := range []struct{ step, depth, want int }{
		{0, 0, 7}, {0, 1, 6}, {0, 7, 0}, {0, 100, 0}, {2, 3, 6}, {1, -1, 7},
	} {
		if got := (frontier.Depth{Step: tc.step}).Priority(&frontier.URL{Depth: tc.depth}, 8); got != tc.want {
			t.Errorf("Depth{%d}(%d) = %d, want %d", tc.step, tc.depth, got, tc.want)
		}
	}
}

func TestEstimateChangeRate(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		n, x  int
		total time.Duration
		want  float64 // changes per day
	}{
		{10, 0, 10 * day, 0},
		{10, 5, 10 * day, -math.Log(5.5 / 10.5)},
		{10, 10, 10 * day, -math.Log(0.5 / 10.5)}, // finite although every visit saw a change
		{0, 0, day, 0},
		{5, 9, 5 * day, -math.Log(0.5 / 5.5)}, // x clamped to n
	} {
		got := frontier.EstimateChangeRate(tc.n, tc.x, tc.total) * day.Seconds()
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("EstimateChangeRate(%d, %d, %v) = %v/day, want %v", tc.n, tc.x, tc.total, got, tc.want)
		}
	}
	// The estimator converges to the true Poisson rate: visits every
	// day to a page changing at λ/day see a change with p = 1 - e^-λ.
	lambda := 0.7
	n := 100000
	x := int(float64(n) * (1 - math.Exp(-lambda)))
	if got := frontier.EstimateChangeRate(n, x, time.Duration(n)*day) * day.Seconds(); math.Abs(got-lambda) > 0.01 {
		t.Errorf("estimate %v, want ≈ %v", got, lambda)
	}
}

func TestChangeRate(t *testing.T) {
	t0 := time.Unix(0, 0)
	hist := func(fetches, changes uint32, span time.Duration) *frontier.URL {
		return &frontier.URL{History: frontier.History{Fetches: fetches, Changes: changes, First: t0, Last: t0.Add(span)}}
	}
	cr := frontier.ChangeRate{}
	for _, tc := range []struct {
		name string
		u    *frontier.URL
		want int
	}{
		{"unknown", &frontier.URL{}, 4},
		{"one fetch", hist(1, 0, 0), 4},
		{"never changes", hist(10, 0, 90*24*time.Hour), 0},
		{"changes hourly", hist(25, 24, 24*time.Hour), 7},
		{"changed at every daily visit", hist(11, 10, 10*24*time.Hour), 5}, // estimate ≈ 3/day
		{"changed every other visit", hist(11, 5, 10*24*time.Hour), 3},
	} {
		if got := cr.Priority(tc.u, 8); got != tc.want {
			t.Errorf("%s: priority %d, want %d", tc.name, got, tc.want)
		}
	}
	spam := frontier.ChangeRate{Quality: func(*frontier.URL) float64 { return 0.1 }}
	if got := spam.Priority(hist(25, 24, 24*time.Hour), 8); got > 1 {
		t.Errorf("low-quality page changing hourly got priority %d", got)
	}
}

func TestRules(t *testing.T) {
	r := &frontier.Rules{
		Rules: []frontier.Rule{
			{HostSuffix: "news.test", Priority: -1},
			{Pattern: regexp.MustCompile(`/archive/`), Priority: 0},
			{HostSuffix: "blog.test", Pattern: regexp.MustCompile(`/draft`), Priority: 1},
		},
		Default: frontier.PrioritizerFunc(func(*frontier.URL, int) int { return 3 }),
	}
	for _, tc := range []struct {
		url  string
		want int
	}{
		{"http://www.news.test/a", 7},
		{"http://news.test/archive/1", 7},
		{"http://other.test/archive/1", 0},
		{"http://blog.test/draft1", 1},
		{"http://blog.test/post", 3},
		{"http://fakenews.test/", 3},
	} {
		if got := r.Priority(&frontier.URL{URL: tc.url}, 8); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.url, got, tc.want)
		}
	}
}

func TestOPIC(t *testing.T) {
	o := frontier.NewOPIC()
	seed := &frontier.URL{URL: "http://s.test/", Depth: 0}
	if p := o.Priority(seed, 8); p != 7 {
		t.Fatalf("seed priority %d, want 7", p)
	}
	o.Fetched(seed.URL, []string{"http://a.test/", "http://b.test/"})
	if c := o.Cash(seed.URL); c != 0 {
		t.Errorf("cash after fetch %v", c)
	}
	if c := o.Cash("http://a.test/"); c != 0.5 {
		t.Errorf("child cash %v, want 0.5", c)
	}
	o.Fetched("http://a.test/", []string{"http://b.test/"})
	o.Fetched("http://b.test/", nil) // dangling: cash to the virtual page
	o.Fetched("http://c.test/", []string{"http://d.test/"})
	// Cash is conserved: 1 in the system, all of it now on d.
	if c := o.Cash("http://d.test/"); math.Abs(c-1) > 1e-12 {
		t.Errorf("d cash %v, want 1 (conservation)", c)
	}
	if p := o.Priority(&frontier.URL{URL: "http://d.test/", Depth: 3}, 8); p != 7 {
		t.Errorf("d priority %d", p)
	}
	if p := o.Priority(&frontier.URL{URL: "http://unknown.test/", Depth: 2}, 8); p != 0 {
		t.Errorf("unknown priority %d", p)
	}
	if i := o.Importance("http://b.test/"); i <= o.Importance("http://a.test/") {
		t.Errorf("b (2 in-links) importance %v ≤ a (1 in-link) %v", i, o.Importance("http://a.test/"))
	}
}
