package console

import "html/template"

// tmpl holds "page", the whole document, and "live", the part of it the
// script replaces every Options.Refresh. Without JavaScript the page is
// complete as served, and its reload link brings new figures.
var tmpl = template.Must(template.New("console").Funcs(template.FuncMap{
	"pct": func(f float64) string { return template.HTMLEscapeString(formatPct(f)) },
}).Parse(`
{{define "page"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>crawlkit console</title>
<style>
:root{--fg:#1d2329;--mute:#5b6670;--line:#d9dee3;--bg:#f5f7f9;--card:#fff;--ok:#1e7d32;--bad:#b3261e;--meh:#8a6d00;--acc:#1f6fb2}
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;align-items:center;gap:1rem;flex-wrap:wrap;padding:.6rem 1.2rem;background:#14202b;color:#fff}
header h1{font-size:1.1rem;margin:0;font-weight:600}
header .meta{color:#c4cdd5;font-size:.9rem}
header .meta a{color:#9cc9f0}
main{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:1rem;padding:1rem 1.2rem}
section{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.7rem .9rem;min-width:0}
section.wide{grid-column:1/-1}
h2{font-size:.95rem;margin:0 0 .5rem;font-weight:600}
table{border-collapse:collapse;width:100%}
th,td{padding:2px 6px;text-align:left;vertical-align:top;border-bottom:1px solid #eef1f4}
th{font-weight:600;color:var(--mute);font-size:.85rem}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.url{overflow-wrap:anywhere;font-family:ui-monospace,monospace;font-size:.82rem}
.state{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:.85rem}
.state.running{background:#2e7d32}.state.paused{background:#a66f00}.state.done{background:#455a64}.state.idle{background:#607d8b}
.ok{color:var(--ok)}.bad{color:var(--bad)}.meh{color:var(--meh)}
.bar{height:10px;background:#e6eaee;border-radius:5px;overflow:hidden}
.bar span{display:block;height:100%;background:var(--acc)}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(130px,1fr));gap:.4rem}
.fig b{display:block;font-size:1.25rem;font-variant-numeric:tabular-nums}
.fig small{color:var(--mute)}
svg.chart{width:100%;height:auto;display:block}
svg .grid line{stroke:#e3e7eb}
svg .ticks text,svg .axis-title{font-size:11px;fill:var(--mute)}
svg .ticks line{stroke:#8a949d}
svg .frame{fill:none;stroke:#aab3bb}
svg .empty{fill:var(--mute);font-size:13px}
form{display:inline}
button{font:inherit;padding:3px 12px;border-radius:4px;border:1px solid #8a949d;background:#fff;cursor:pointer}
button.stop{border-color:var(--bad);color:var(--bad)}
.mute{color:var(--mute)}
</style></head>
<body>
<header><h1>crawlkit console</h1>
<span class="meta" id="status-line" aria-live="polite">updated <time id="updated">{{.Now}}</time> · <a href="./">reload</a> · <a href="metrics">metrics</a><span id="conn"></span></span>
</header>
<main id="live">{{template "live" .}}</main>
<script>
(function(){
	var live = document.getElementById('live'), conn = document.getElementById('conn'), every = {{.RefreshMS}};
	function tick(){
		fetch('live', {cache: 'no-store'}).then(function(r){
			if (!r.ok) throw new Error(r.status);
			return r.text();
		}).then(function(html){
			live.innerHTML = html;
			var u = live.querySelector('[data-now]');
			if (u) document.getElementById('updated').textContent = u.getAttribute('data-now');
			conn.textContent = ' · live';
		}).catch(function(){
			conn.textContent = ' · console unreachable: figures as of the time above';
		}).finally(function(){ setTimeout(tick, every); });
	}
	setTimeout(tick, every);
})();
</script>
</body></html>
{{end}}

{{define "live"}}<section class="wide" data-now="{{.Now}}">
<h2>Crawl <span class="state {{.StateClass}}" style="color:#fff" id="state">{{.State}}</span>{{if .Reason}} <span class="mute">({{.Reason}})</span>{{end}}</h2>
<p class="mute">{{if .Started}}started {{.Started}}, crawl time {{.Elapsed}}{{else}}Run has not started{{end}}</p>
<div class="figs" id="figures">{{range .Figures}}<div class="fig"><b>{{.Value}}</b><small>{{.Name}}</small></div>{{end}}</div>
{{if .Controls}}<p>{{if .Running}}{{if .Paused}}<form method="post" action="resume"><button>Resume</button></form>{{else}}<form method="post" action="pause"><button>Pause</button></form>{{end}}
{{if .CanStop}} <form method="post" action="stop" onsubmit="return confirm('Stop the crawl? Pages in flight are finished and saved.')"><button class="stop">Stop</button></form>{{end}}{{end}}</p>{{end}}
</section>

<section id="progress"><h2>Progress toward the limits</h2>
{{if .Limits}}<table><tr><th>limit</th><th class="n">done</th><th class="n">of</th><th style="width:35%"></th><th>ETA</th></tr>
{{range .Limits}}<tr><td>{{.Name}}</td><td class="n">{{.Done}}</td><td class="n">{{.Of}}</td><td><div class="bar" role="progressbar" aria-valuenow="{{printf "%.0f" .Pct}}" aria-valuemin="0" aria-valuemax="100"><span style="width:{{printf "%.1f" .Pct}}%"></span></div></td><td>{{.ETA}}</td></tr>{{end}}
</table>{{else}}<p class="mute">No page, time or byte limit: the crawl ends when the frontier is empty.</p>{{end}}
<h2 style="margin-top:.8rem">Settings</h2>
<table id="settings"><tr><td>seeds</td><td class="url">{{range .Seeds}}{{.}}<br>{{end}}{{if .MoreSeeds}}<span class="mute">and {{.MoreSeeds}} more</span>{{end}}</td></tr>
{{range .Settings}}<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>{{end}}</table>
</section>

<section id="rate-chart"><h2>Pages per second</h2>{{.RateChart}}</section>
<section id="frontier-chart"><h2>Frontier size</h2>{{.FrontierChart}}</section>

<section id="outcomes"><h2>Outcomes of URLs taken from the frontier</h2>
<table><tr><th>final outcome</th><th class="n">URLs</th><th class="n">share</th></tr>
{{range .Outcomes}}<tr><td class="{{.Class}}">{{.Name}}</td><td class="n">{{.N}}</td><td class="n">{{pct .Pct}}</td></tr>{{else}}<tr><td colspan="3" class="mute">none yet</td></tr>{{end}}
<tr><th>finished</th><th class="n">{{.Finished}}</th><th></th></tr></table>
<h2 style="margin-top:.8rem">What became of links</h2>
<table>{{range .Links}}<tr><td>{{.Name}}</td><td class="n">{{.N}}</td></tr>{{end}}
{{range .Filtered}}<tr><td class="mute">&nbsp;&nbsp;filtered: {{.Name}}</td><td class="n">{{.N}}</td></tr>{{end}}</table>
</section>

<section id="statuses"><h2>HTTP status codes</h2>
<table><tr><th>status</th><th class="n">answers</th><th class="n">share</th></tr>
{{range .Statuses}}<tr><td class="{{.Class}}">{{.Name}}</td><td class="n">{{.N}}</td><td class="n">{{pct .Pct}}</td></tr>{{else}}<tr><td colspan="3" class="mute">none yet</td></tr>{{end}}</table>
{{if .ErrorKinds}}<h2 style="margin-top:.8rem">Fetch errors by kind</h2>
<table>{{range .ErrorKinds}}<tr><td class="bad">{{.Name}}</td><td class="n">{{.N}}</td><td class="n">{{pct .Pct}}</td></tr>{{end}}</table>{{end}}
</section>

<section id="busiest"><h2>Busiest hosts</h2>
<table><tr><th>host</th><th class="n">fetches</th><th class="n">errors</th><th class="n">mean</th><th class="n">received</th></tr>
{{range .Busiest}}<tr><td class="url">{{.Host}}</td><td class="n">{{.Fetches}}</td><td class="n">{{.Errors}}</td><td class="n">{{.Mean}}</td><td class="n">{{.Bytes}}</td></tr>{{else}}<tr><td colspan="5" class="mute">no fetch yet</td></tr>{{end}}</table>
</section>

<section id="slowest"><h2>Slowest hosts (mean fetch time)</h2>
<table><tr><th>host</th><th class="n">mean</th><th class="n">max</th><th class="n">fetches</th><th class="n">errors</th></tr>
{{range .Slowest}}<tr><td class="url">{{.Host}}</td><td class="n">{{.Mean}}</td><td class="n">{{.Max}}</td><td class="n">{{.Fetches}}</td><td class="n">{{.Errors}}</td></tr>{{else}}<tr><td colspan="5" class="mute">no fetch yet</td></tr>{{end}}</table>
</section>

<section id="stages"><h2>Where the time goes</h2>
<table><tr><th>stage</th><th class="n">count</th><th class="n">mean</th><th class="n">p50</th><th class="n">p99</th></tr>
{{range .Stages}}<tr><td>{{.Name}}</td><td class="n">{{.Count}}</td><td class="n">{{.Mean}}</td><td class="n">{{.P50}}</td><td class="n">{{.P99}}</td></tr>{{end}}</table>
<p class="mute">dns and connect are parts of the fetch, for new connections only; percentiles are bucket bounds.</p>
<h2 style="margin-top:.8rem">Caches</h2>
<table id="caches">{{range .Caches}}<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>{{end}}</table>
</section>

<section class="wide" id="errors"><h2>Recent errors</h2>
<table><tr><th>time</th><th>URL</th><th>kind</th><th>error</th></tr>
{{range .Errors}}<tr><td class="n">{{.Time}}</td><td class="url">{{.URL}}</td><td class="bad">{{.Kind}}</td><td>{{.Err}}</td></tr>{{else}}<tr><td colspan="4" class="mute">none</td></tr>{{end}}</table>
</section>{{end}}
`))

func formatPct(f float64) string {
	switch {
	case f == 0:
		return "0%"
	case f < 0.1:
		return "<0.1%"
	}
	return trim(float64(int(f*10+0.5))/10) + "%"
}
