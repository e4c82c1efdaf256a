package main

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"

	"github.com/crawlkit/crawlkit/webgraph"
)

// The HTML pages: an index with a query form, and a page per URL with
// its out- and in-links, each a link to its own page, so the graph can be
// browsed without JavaScript. The JSON endpoints stay the API.

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} — connectivity server</title>
<style>body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em}input[type=text]{width:70%}li{word-break:break-all}.err{color:#a00}</style>
</head><body>
<h1><a href="/">Connectivity server</a></h1>
<p>{{.Nodes}} URLs, {{.Arcs}} links.</p>
<form action="/view" method="get"><label>URL <input type="text" name="url" value="{{.Query}}" placeholder="http://example.com/"></label> <button type="submit">Show links</button></form>
{{if .Error}}<p class="err">{{.Error}}</p>{{end}}
{{with .Node}}
<h2>{{.URL}}</h2>
<p>id {{.ID}}: {{.OutDegree}} out-links, {{.InDegree}} in-links. As JSON: <a href="{{.OutJSON}}">out</a>, <a href="{{.InJSON}}">in</a>.</p>
<h3>Links from this page{{if gt .OutDegree (len .Out)}} (first {{len .Out}}){{end}}</h3>
<ul>{{range .Out}}<li><a href="/view?id={{.ID}}">{{.URL}}</a></li>{{else}}<li>none</li>{{end}}</ul>
<h3>Links to this page{{if gt .InDegree (len .In)}} (first {{len .In}}){{end}}</h3>
<ul>{{range .In}}<li><a href="/view?id={{.ID}}">{{.URL}}</a></li>{{else}}<li>none</li>{{end}}</ul>
{{end}}
{{if .Start}}<h2>Start from</h2><ul>{{range .Start}}<li><a href="/view?id={{.ID}}">{{.URL}}</a></li>{{end}}</ul>{{end}}
<h2>API</h2>
<ul>
<li><a href="/stats">/stats</a>: node and arc counts, bits per link</li>
<li><code>/out?url=U</code> or <code>/out?id=N</code>: out-links as JSON, with <code>limit</code> and <code>offset</code></li>
<li><code>/in?url=U</code> or <code>/in?id=N</code>: in-links as JSON</li>
</ul>
<p>A URL is found as typed or in its canonical form: case of scheme and host, default port, a trailing slash, a missing <code>http://</code> do not matter.</p>
</body></html>
`))

// viewLinks is the number of out- and in-links a page lists.
const viewLinks = 200

type nodeView struct {
	ID                  int
	URL                 string
	OutDegree, InDegree int
	Out, In             []link
	OutJSON, InJSON     string
}

type pageData struct {
	Title string
	Nodes int
	Arcs  int64
	Query string
	Error string
	Node  *nodeView
	Start []link
}

// serveIndex serves the index page: the counts, the form, a few URLs to
// start from (the first ids: one host's pages, host-reversed order) and
// the API.
func serveIndex(w http.ResponseWriter, s webgraph.GraphStore) {
	d := pageData{Title: "Index", Nodes: s.NumNodes(), Arcs: s.NumArcs()}
	for id := range min(10, s.NumNodes()) {
		u, err := s.URL(id)
		if err != nil {
			d.Error = err.Error()
			break
		}
		d.Start = append(d.Start, link{ID: id, URL: u})
	}
	renderPage(w, http.StatusOK, &d)
}

// serveView serves the page of one URL, by url= (looked up as /out does)
// or id=.
func serveView(w http.ResponseWriter, r *http.Request, s webgraph.GraphStore) {
	q := r.URL.Query()
	d := pageData{Title: "Links", Nodes: s.NumNodes(), Arcs: s.NumArcs(), Query: q.Get("url")}
	id, status := 0, http.StatusOK
	switch {
	case q.Get("url") != "":
		var err error
		if id, err = lookup(s, q.Get("url")); err != nil {
			status, d.Error = http.StatusNotFound, "No such URL in the graph: "+q.Get("url")
			if errors.Is(err, errNotURL) {
				status, d.Error = http.StatusBadRequest, err.Error()
			} else if !errors.Is(err, webgraph.ErrUnknownURL) {
				status, d.Error = http.StatusInternalServerError, err.Error()
			}
		}
	case q.Get("id") != "":
		n, err := strconv.Atoi(q.Get("id"))
		if err != nil || n < 0 || n >= s.NumNodes() {
			status, d.Error = http.StatusNotFound, "No node with id "+q.Get("id")
		}
		id = n
	default:
		status, d.Error = http.StatusBadRequest, "Give a URL."
	}
	if status == http.StatusOK {
		nv, err := view(s, id)
		if err != nil {
			status, d.Error = http.StatusInternalServerError, err.Error()
		} else {
			d.Node, d.Title, d.Query = nv, nv.URL, nv.URL
		}
	}
	renderPage(w, status, &d)
}

func view(s webgraph.GraphStore, id int) (*nodeView, error) {
	u, err := s.URL(id)
	if err != nil {
		return nil, err
	}
	nv := &nodeView{ID: id, URL: u}
	nv.OutJSON = "/out?url=" + url.QueryEscape(u)
	nv.InJSON = "/in?url=" + url.QueryEscape(u)
	for _, side := range []struct {
		f      func(int, []int) ([]int, error)
		degree *int
		links  *[]link
	}{{s.Out, &nv.OutDegree, &nv.Out}, {s.In, &nv.InDegree, &nv.In}} {
		ids, err := side.f(id, nil)
		if err != nil {
			return nil, err
		}
		*side.degree = len(ids)
		for _, y := range ids[:min(len(ids), viewLinks)] {
			yu, err := s.URL(y)
			if err != nil {
				return nil, err
			}
			*side.links = append(*side.links, link{ID: y, URL: yu})
		}
	}
	return nv, nil
}

func renderPage(w http.ResponseWriter, status int, d *pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	pageTmpl.Execute(w, d) // the client may be gone; nothing to do then
}
