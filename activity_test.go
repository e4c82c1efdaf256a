package crawlkit

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestActivity: after a crawl of a simulated web, the fetch-time histogram
// counts every page request the web logged, the stages that ran have
// observations, the busiest hosts are sorted and bounded, and the 404 of
// a seed on the status host is among the recent errors with its URL.
func TestActivity(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 5, Hosts: 6, MeanPages: 6, ChangePeriods: []time.Duration{0},
		RetryAfter: time.Millisecond, CrawlDelay: time.Millisecond})
	defer web.Close()
	missing := web.URL(web.Host(fetchtest.Statuses), "/404/gone")
	c, err := New(Config{Seeds: append(web.Seeds(), missing), Resolver: webResolver(), AllowPrivate: true,
		PrivateSuffixes: []string{web.Domain()}, Workers: 8, DelayFactor: -1, MaxRetries: -1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Activity(5); !a.Started.IsZero() || a.FetchTime.Count() != 0 {
		t.Fatalf("before Run: %+v", a)
	}
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a := c.Activity(5)
	var requests uint64
	for _, r := range web.Log() {
		if !strings.HasSuffix(r.Path, "/robots.txt") {
			requests++
		}
	}
	if got := a.FetchTime.Count(); got != requests || got < s.Pages() {
		t.Errorf("fetch-time histogram counts %d fetches; the web logged %d page requests, the crawl %d pages", got, requests, s.Pages())
	}
	if a.ResponseSize.Count() != a.FetchTime.Count() || a.ResponseSize.Sum <= 0 {
		t.Errorf("response sizes: %d observations, sum %v", a.ResponseSize.Count(), a.ResponseSize.Sum)
	}
	for _, st := range []Stage{StageRobots, StageConnect, StageParse, StageContent, StageCommit} {
		if a.Stages[st].Count() == 0 || a.Stages[st].Sum <= 0 {
			t.Errorf("stage %v: %d observations, %v s", st, a.Stages[st].Count(), a.Stages[st].Sum)
		}
	}
	if a.Started.IsZero() || a.Ended.Before(a.Started) || a.Workers != 8 {
		t.Errorf("started %v, ended %v, workers %d", a.Started, a.Ended, a.Workers)
	}
	if len(a.Busiest) != 5 || len(a.Slowest) == 0 || len(a.Slowest) > 5 {
		t.Fatalf("busiest %d hosts, slowest %d", len(a.Busiest), len(a.Slowest))
	}
	for i := 1; i < len(a.Busiest); i++ {
		if a.Busiest[i].Fetches > a.Busiest[i-1].Fetches {
			t.Errorf("busiest hosts out of order: %+v", a.Busiest)
		}
	}
	for i := 1; i < len(a.Slowest); i++ {
		if a.Slowest[i].MeanFetch() > a.Slowest[i-1].MeanFetch() {
			t.Errorf("slowest hosts out of order: %+v", a.Slowest)
		}
	}
	found := false
	for _, e := range a.Errors {
		if e.URL == missing && e.Kind == "http" && e.Status == 404 {
			found = true
		}
	}
	if !found {
		t.Errorf("the 404 of %s is not among the recent errors %+v", missing, a.Errors)
	}
	if a.Robots.Fetches == 0 {
		t.Errorf("robots stats %+v", a.Robots)
	}
}

// TestPauseResume: a crawl paused before Run fetches nothing while paused,
// is not taken for finished, and crawls to its end once resumed.
func TestPauseResume(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 6, Hosts: 3, MeanPages: 4, ChangePeriods: []time.Duration{0},
		RetryAfter: time.Millisecond, CrawlDelay: time.Millisecond})
	defer web.Close()
	c, err := New(Config{Seeds: web.Seeds(), Resolver: webResolver(), AllowPrivate: true, Workers: 4,
		DelayFactor: -1, MaxRetries: -1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	c.Pause()
	c.Pause() // twice is once
	done := make(chan Stats, 1)
	go func() {
		s, err := c.Run(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	time.Sleep(300 * time.Millisecond)
	if !c.Paused() || !c.Activity(1).Paused {
		t.Error("Paused reports false after Pause")
	}
	select {
	case s := <-done:
		t.Fatalf("a paused crawl ended: %v", s)
	default:
	}
	if n := len(web.Log()); n != 0 {
		t.Fatalf("a paused crawl made %d requests", n)
	}
	c.Resume()
	c.Resume()
	select {
	case s := <-done:
		if s.Pages() == 0 || c.StopReason() != "frontier empty" {
			t.Errorf("after Resume: %d pages, stop reason %q", s.Pages(), c.StopReason())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the resumed crawl did not end")
	}
}

// TestPausedStopsOnCancel: cancelling the context of a paused crawl
// ends Run.
func TestPausedStopsOnCancel(t *testing.T) {
	web := fetchtest.NewWeb(fetchtest.Config{Seed: 6, Hosts: 2, MeanPages: 4})
	defer web.Close()
	c, err := New(Config{Seeds: web.Seeds(), Resolver: webResolver(), AllowPrivate: true, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	c.Pause()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if c.StopReason() != "cancelled" {
		t.Errorf("stop reason %q", c.StopReason())
	}
}

func TestHistogramQuantile(t *testing.T) {
	var h hist
	for _, ms := range []int64{1, 2, 3, 40, 40, 40, 40, 40, 200, 60000} {
		h.observe(ms*int64(time.Millisecond), durBoundsNS)
	}
	s := h.snapshot(durationBounds, 1e9)
	for _, tt := range []struct {
		q, want float64
	}{{0.1, .001}, {0.2, .0025}, {0.5, .05}, {0.9, .25}, {1, math.Inf(1)}} {
		if got := s.Quantile(tt.q); got != tt.want {
			t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if s.Count() != 10 || math.Abs(s.Sum-60.406) > 1e-9 {
		t.Errorf("count %d, sum %v", s.Count(), s.Sum)
	}
	if (Histogram{}).Quantile(0.5) != 0 || (Histogram{}).Mean() != 0 {
		t.Error("an empty histogram's quantile or mean is not 0")
	}
}

// TestHostTablesBounded: the host tables keep their bounds while hosts
// come and go, a busy host stays in the busy table, and a slow host
// enters the slow table however few its fetches.
func TestHostTablesBounded(t *testing.T) {
	var o observer
	now := time.Now()
	for i := range 10 {
		o.fetched("busy.test", time.Millisecond, 100, false, now.Add(time.Duration(i)))
	}
	for i := range 5 * MaxTrackedHosts {
		o.fetched(fmt.Sprintf("h%d.test", i), time.Millisecond, 10, i%2 == 0, now)
	}
	o.fetched("slow.test", 3*time.Second, 10, false, now)
	if len(o.busy.hosts) != MaxTrackedHosts || len(o.busy.idx) != MaxTrackedHosts || len(o.slow.hosts) != MaxTrackedHosts/4 || len(o.slow.idx) != MaxTrackedHosts/4 {
		t.Fatalf("tables hold %d (%d) and %d (%d) hosts", len(o.busy.hosts), len(o.busy.idx), len(o.slow.hosts), len(o.slow.idx))
	}
	for h, i := range o.busy.idx {
		if o.busy.hosts[i].Host != h {
			t.Fatalf("index says %s is at %d, which holds %s", h, i, o.busy.hosts[i].Host)
		}
	}
	if h := o.busy.find("busy.test"); h == nil || h.Fetches != 10 || h.Bytes != 1000 {
		t.Errorf("busy host: %+v", h)
	}
	if h := o.slow.find("slow.test"); h == nil || h.MaxFetch != 3*time.Second {
		t.Errorf("slow host: %+v", h)
	}
	for i := range MaxRecentErrors + 3 {
		o.failed(ErrorRecord{URL: fmt.Sprint(i)})
	}
	if o.nerrs != MaxRecentErrors+3 || o.errs[0].URL != fmt.Sprint(MaxRecentErrors) {
		t.Errorf("error ring: %d recorded, slot 0 %q", o.nerrs, o.errs[0].URL)
	}
}

// TestOutcomeFinal: every outcome is either final (what became of a URL
// taken from the frontier) or one of a link's fates or a retry, never
// both, so that the final ones sum to Stats.Finished.
func TestOutcomeFinal(t *testing.T) {
	notFinal := map[Outcome]bool{Queued: true, Filtered: true, DuplicateURL: true, Sent: true, Retried: true}
	var s Stats
	var want uint64
	for o := Outcome(0); o < numOutcomes; o++ {
		if o.Final() == notFinal[o] {
			t.Errorf("%v: Final() = %v", o, o.Final())
		}
		s.Outcomes[o] = uint64(o) + 1
		if o.Final() {
			want += uint64(o) + 1
		}
	}
	if s.Finished() != want || numOutcomes.Final() {
		t.Errorf("Finished() = %d, want %d", s.Finished(), want)
	}
}

// BenchmarkObserve measures what Activity costs a page: the fetch into
// the histograms and the host tables, its size, and five stages, over
// 1,000 hosts (more than the tables hold, so entries are evicted too),
// from one goroutine and from all of them at once.
func BenchmarkObserve(b *testing.B) {
	hosts := make([]string, 1000)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%03d.sim.test", i)
	}
	now := time.Now()
	page := func(o *observer, i int) {
		h := hosts[i%len(hosts)]
		if i%7 == 0 {
			h = hosts[0] // a busy host
		}
		d := time.Duration(i%50) * time.Millisecond
		o.size.observe(int64(i%100_000), sizeBoundsIn)
		o.fetched(h, d, int64(i%100_000), i%17 == 0, now)
		for _, st := range []Stage{StageRobots, StageParse, StageContent, StageCommit, StageDNS} {
			o.stage(st, d/10)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		var o observer
		i := 0
		for b.Loop() {
			page(&o, i)
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/page")
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var o observer
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				page(&o, i)
				i++
			}
		})
	})
}
