package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/crawlkit/crawlkit"
)

// Collector exports a crawl's Stats and Activity as Prometheus metrics,
// read from the crawl when scraped: it adds nothing to the crawl's own
// work. Register it with a registry of your own, or serve MetricsHandler.
// Safe for concurrent use.
type Collector struct {
	c *crawlkit.Crawler
}

// NewCollector returns a Collector of c's metrics.
func NewCollector(c *crawlkit.Crawler) *Collector { return &Collector{c: c} }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("crawlkit_"+name, help, labels, nil)
}

// The metrics; docs/OBSERVABILITY.md lists them with their meaning.
var (
	dStart      = desc("start_time_seconds", "Start time of this process's crawl run, seconds since the Unix epoch.")
	dEnd        = desc("end_time_seconds", "End time of this process's crawl run, seconds since the Unix epoch; 0 while it runs.")
	dFinished   = desc("urls_finished_total", "URLs taken from the frontier, by final outcome; the series sum to the URLs finished.", "outcome")
	dQueued     = desc("urls_queued_total", "URLs admitted to the frontier: seeds, new links and URLs received from peers.")
	dRetried    = desc("urls_retried_total", "Fetches sent back to the frontier to be tried again (429, 503, transient network errors).")
	dDupURL     = desc("urls_duplicate_total", "Links and received URLs dropped as seen before (URL seen?).")
	dFiltered   = desc("urls_filtered_total", "Links refused by a URL filter, a depth limit or a budget, by reason.", "reason")
	dSent       = desc("urls_sent_total", "Links sent to the peer that owns their host (distributed crawl).")
	dSeeds      = desc("seeds_total", "Seed URLs queued.")
	dLinks      = desc("links_total", "Links extracted from fetched pages.")
	dPages      = desc("pages_total", "Pages fetched with a 2xx answer, duplicates included.")
	dStatus     = desc("http_responses_total", "HTTP answers to page fetches, by status code.", "code")
	dFetchErr   = desc("fetch_errors_total", "Fetches that got no complete answer, by kind.", "kind")
	dBytes      = desc("response_body_bytes_total", "Body bytes received, decoded.")
	dHosts      = desc("hosts_total", "Hosts with at least one URL admitted.")
	dBackoffs   = desc("host_backoffs_total", "Blocks of the per-host back-off: a host that throttled the crawl (429, 503 without Retry-After).")
	dSinkErr    = desc("sink_errors_total", "Failed sink writes.")
	dFrontier   = desc("frontier_urls", "URLs in the frontier, by state.", "state")
	dKeys       = desc("frontier_hosts", "Hosts (politeness keys) with a queue in the frontier.")
	dInflight   = desc("inflight_urls", "URLs being processed by workers.")
	dWorkers    = desc("workers", "Worker goroutines of the crawl.")
	dPaused     = desc("paused", "1 while the crawl is paused, else 0.")
	dFetchTime  = desc("fetch_duration_seconds", "Time of a URL's fetch, from the request to the end of the body, failures included.")
	dSize       = desc("response_size_bytes", "Body size of a fetched response, decoded.")
	dStage      = desc("stage_duration_seconds", "Time of a stage of the crawl loop (dns and connect are parts of the fetch).", "stage")
	dRobotsLook = desc("robots_lookups_total", "robots.txt checks, by how they were answered.", "result")
	dRobotsGet  = desc("robots_fetches_total", "robots.txt fetches, by result.", "result")
	dRobotsFail = desc("robots_failure_answers_total", "robots.txt fetch failures, by the answer given instead.", "answer")
	dDNSLook    = desc("dns_lookups_total", "Name lookups of the caching resolver, by how they were answered.", "result")
	dDNSRes     = desc("dns_resolutions_total", "Resolutions the caching resolver made, by result.", "result")
	dDNSQuery   = desc("dns_queries_total", "DNS queries sent.")
	dDNSTimeout = desc("dns_query_timeouts_total", "DNS queries that got no answer in time.")
	dDNSLate    = desc("dns_late_reads_total", "DNS answers that came in time and were read after their query's wait, the resolver's socket reader being behind (all cores busy); taken without asking again.")
	dDNSEntries = desc("dns_cache_entries", "Names held by the resolver's cache.")

	allDescs = []*prometheus.Desc{dStart, dEnd, dFinished, dQueued, dRetried, dDupURL, dFiltered, dSent, dSeeds,
		dLinks, dPages, dStatus, dFetchErr, dBytes, dHosts, dBackoffs, dSinkErr, dFrontier, dKeys, dInflight, dWorkers,
		dPaused, dFetchTime, dSize, dStage, dRobotsLook, dRobotsGet, dRobotsFail, dDNSLook, dDNSRes,
		dDNSQuery, dDNSTimeout, dDNSLate, dDNSEntries}
)

// Describe sends the descriptions of every metric Collect may send.
func (m *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect reads the crawl's Stats and Activity and sends them as metrics.
// It costs one Stats and one Activity snapshot (no host tables).
func (m *Collector) Collect(ch chan<- prometheus.Metric) {
	s, a := m.c.Stats(), m.c.Activity(0)
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	hist := func(d *prometheus.Desc, h crawlkit.Histogram, labels ...string) {
		buckets := make(map[float64]uint64, len(h.Bounds))
		var cum uint64
		for i, b := range h.Bounds {
			cum += h.Counts[i]
			buckets[b] = cum
		}
		ch <- prometheus.MustNewConstHistogram(d, h.Count(), h.Sum, buckets, labels...)
	}
	unix := func(t int64) float64 { return float64(t) / 1e9 }
	if !a.Started.IsZero() {
		gauge(dStart, unix(a.Started.UnixNano()))
	}
	end := 0.0
	if !a.Ended.IsZero() {
		end = unix(a.Ended.UnixNano())
	}
	gauge(dEnd, end)
	// Final outcomes only: their series sum to Stats.Finished. What
	// became of links, and retries, have metrics of their own.
	for o, n := range s.Outcomes {
		if crawlkit.Outcome(o).Final() {
			counter(dFinished, float64(n), label(crawlkit.Outcome(o).String()))
		}
	}
	counter(dQueued, float64(s.Outcomes[crawlkit.Queued]))
	counter(dRetried, float64(s.Outcomes[crawlkit.Retried]))
	counter(dDupURL, float64(s.Outcomes[crawlkit.DuplicateURL]))
	for r, n := range s.FilteredBy {
		counter(dFiltered, float64(n), label(r))
	}
	counter(dSent, float64(s.Outcomes[crawlkit.Sent]))
	counter(dSeeds, float64(s.Seeds))
	counter(dLinks, float64(s.Links))
	counter(dPages, float64(s.Pages()))
	for code, n := range s.Status {
		counter(dStatus, float64(n), strconv.Itoa(code))
	}
	for k, n := range s.Errors {
		counter(dFetchErr, float64(n), label(k))
	}
	counter(dBytes, float64(s.Bytes))
	counter(dHosts, float64(s.Hosts))
	counter(dBackoffs, float64(s.Backoffs))
	counter(dSinkErr, float64(a.SinkErrors))
	gauge(dFrontier, float64(s.Frontier.Queued), "queued")
	gauge(dFrontier, float64(s.Frontier.Leased), "leased")
	gauge(dFrontier, float64(s.Frontier.Waiting), "waiting")
	gauge(dKeys, float64(s.Frontier.Keys))
	gauge(dInflight, float64(s.InFlight))
	gauge(dWorkers, float64(a.Workers))
	paused := 0.0
	if a.Paused {
		paused = 1
	}
	gauge(dPaused, paused)
	hist(dFetchTime, a.FetchTime)
	hist(dSize, a.ResponseSize)
	for st, h := range a.Stages {
		hist(dStage, h, crawlkit.Stage(st).String())
	}
	r := a.Robots
	counter(dRobotsLook, float64(r.Hits), "hit")
	counter(dRobotsLook, float64(r.Waits), "wait")
	counter(dRobotsLook, float64(r.Fetches), "fetch")
	counter(dRobotsGet, float64(max(r.Fetches-r.Unavailable-r.Unreachable, 0)), "ok")
	counter(dRobotsGet, float64(r.Unavailable), "unavailable")
	counter(dRobotsGet, float64(r.Unreachable), "unreachable")
	counter(dRobotsFail, float64(r.Stale), "stale_copy")
	counter(dRobotsFail, float64(r.Fallbacks), "allow_all")
	counter(dRobotsFail, float64(max(r.Unreachable-r.Stale-r.Fallbacks, 0)), "disallow_all")
	if d := a.DNS; d != nil {
		counter(dDNSLook, float64(d.Hits), "hit")
		counter(dDNSLook, float64(d.NegativeHits), "negative_hit")
		counter(dDNSLook, float64(d.Misses-d.Prefetches), "miss")
		counter(dDNSLook, float64(d.Shared), "shared")
		counter(dDNSLook, float64(d.Local), "local")
		counter(dDNSRes, float64(d.Resolved), "resolved")
		counter(dDNSRes, float64(d.NotFound), "not_found")
		counter(dDNSRes, float64(d.Failures), "failure")
		counter(dDNSQuery, float64(d.Queries))
		counter(dDNSTimeout, float64(d.Timeouts))
		counter(dDNSLate, float64(d.LateReads))
		gauge(dDNSEntries, float64(d.Entries))
	}
}

// label turns a name with spaces ("duplicate content") into a label
// value in the usual snake case ("duplicate_content").
func label(s string) string { return strings.ReplaceAll(s, " ", "_") }

// MetricsHandler returns an http.Handler that serves c's metrics in the
// Prometheus text format (or OpenMetrics when asked), with the Go
// runtime's (go_*) and, where the platform reports them, the process's
// (process_*) metrics. Each call makes its own registry, so two crawls
// in one program can each have their handler.
func MetricsHandler(c *crawlkit.Crawler) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(c), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, EnableOpenMetrics: true})
}
