// Package console serves a running crawl to its operator: an HTML status
// console and Prometheus metrics, as one http.Handler any program that
// runs a crawlkit.Crawler can mount.
//
// # The status console
//
// New returns a Console, whose page shows the crawl's settings (seeds,
// limits, and rows the program adds, such as its output directory), its
// progress toward each limit with an ETA at the recent rate, charts of
// pages per second and frontier size (server-rendered SVG, one scale per
// chart, ticks at round numbers and durations), the outcomes of the URLs
// taken from the frontier (final ones only) apart from what became of
// links, the HTTP status codes, the busiest and slowest hosts, where the
// time of a page goes, the robots.txt and DNS caches, and the last errors
// with their URLs. A few lines of inline JavaScript fetch the page's live
// part every two seconds and replace it, so the page updates without
// reloading; without JavaScript it is complete as served, with a reload
// link. It is rendered with html/template: no front-end build.
//
// The Console keeps serving after the crawl has ended, with its final
// figures, for as long as the program serves it.
//
// With Options.Controls the page offers Pause, Resume and (with
// Options.Stop) Stop, as POST requests that are refused unless they come
// from a loopback address (Options.RemoteControl lifts that) and from the
// console's own page (a browser's Origin header must name its host).
//
// # Metrics
//
// The Console serves /metrics; MetricsHandler serves the same alone, and
// NewCollector gives a prometheus.Collector for a registry of your own.
// The metrics are read from the crawl's Stats and Activity when scraped;
// the crawl pays for nothing else. docs/OBSERVABILITY.md lists them and
// docs/grafana-dashboard.json is a Grafana dashboard built on them.
//
// # Use
//
//	c, err := crawlkit.New(cfg)
//	...
//	k := console.New(c, &console.Options{Settings: []console.Setting{{Name: "output", Value: dir}}})
//	defer k.Close()
//	go http.ListenAndServe("127.0.0.1:8081", k)
//	stats, err := c.Run(ctx)
//
// Mounted under a path, it needs the path's trailing slash and
// http.StripPrefix, as its links are relative:
//
//	mux.Handle("/crawl/", http.StripPrefix("/crawl", k))
package console
