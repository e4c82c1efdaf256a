package fetchtest

import (
	"bytes"
	"encoding/json"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ScriptApp is the label of the web application of Config.Scripts,
// app.<Domain>: AppPages pages whose content and links only scripts
// write. Every page is the same shell (a title, a "Loading" line, an
// empty <div id="app" data-page="N">); its script fetches /data/N.json
// and writes the page's heading, paragraphs and links from it. The pages
// of even N load the shared /app.js, which uses fetch(); those of odd N
// carry the same code inline and use XMLHttpRequest. /app.js also inserts
// /private/track.js, which robots.txt (Disallow: /private/) forbids and
// which, when it runs, marks <html data-tracked="1">. Page N links home
// and pages 2N+1 and 2N+2: the home page, linked from h000's home page,
// is the only page a crawler that runs no scripts finds (see
// RenderedLinks, ReachableRendered, RenderOnly). Three more pages, linked
// from nowhere, misbehave: AppLoop, AppHang and AppHeavy.
const ScriptApp = "app"

// Shop is the label of the shop of Config.Scripts, shop.<Domain>: a home
// page linking ShopCategories category pages and the products whose
// pages are static, category pages whose product lists a script
// (/shop.js) writes from /api/c/N.json, and ShopProducts product pages
// /product/N.html. A product has a name, a price in EUR and tags, in
// schema.org Product microdata (itemprop="name", "price" with a content
// attribute, "priceCurrency", "keywords"); the pages of even N carry it in
// their HTML, those of odd N get it from /shop.js, which fetches
// /api/product/N.json. Products gives the ground truth. robots.txt
// allows everything.
const Shop = "shop"

// The sizes of the script hosts.
const (
	AppPages       = 15 // pages of the ScriptApp host, home included
	ShopProducts   = 24 // products of the Shop host
	ShopCategories = 4  // category pages of the Shop host
)

// Pages of the ScriptApp host that misbehave, for tests of a rendering
// fetcher's limits; nothing links them and they are not in Pages.
const (
	// AppLoop is a page whose inline script never ends (while(true){}),
	// after a first paragraph: the page never finishes loading.
	AppLoop = "/loop.html"
	// AppHang is a page that loads, shows a line of text a script
	// writes, then asks for /data/hang.json, which the server answers
	// only when the client goes away or the web closes.
	AppHang = "/hang.html"
	// AppHeavy is a page whose script allocates memory without end, until
	// the browser's heap limit stops it.
	AppHeavy = "/heavy.html"
)

// appTracker is the script robots.txt forbids on the ScriptApp host.
const appTracker = "/private/track.js"

var appRobots = robotsVariant{name: "app", status: 200,
	groups: []robotsGroup{{agents: []string{"*"}, rules: []robotsRule{dis("/private/")}}}}

// appPath is the path of page j of the ScriptApp host.
func appPath(j int) string {
	if j == 0 {
		return "/"
	}
	return "/p/" + strconv.Itoa(j) + ".html"
}

// appPage returns the page index of path on the ScriptApp host, or -1.
func appPage(path string) int {
	if path == "/" {
		return 0
	}
	s, ok := strings.CutPrefix(path, "/p/")
	if !ok {
		return -1
	}
	s, ok = strings.CutSuffix(s, ".html")
	if j, err := strconv.Atoi(s); ok && err == nil && j > 0 && j < AppPages && strconv.Itoa(j) == s {
		return j
	}
	return -1
}

// appData returns the page index of /data/N.json, or -1.
func appData(path string) int {
	s, ok := strings.CutPrefix(path, "/data/")
	if !ok {
		return -1
	}
	s, ok = strings.CutSuffix(s, ".json")
	if j, err := strconv.Atoi(s); ok && err == nil && j >= 0 && j < AppPages && strconv.Itoa(j) == s {
		return j
	}
	return -1
}

func (w *Web) appTitle(j int) string {
	r := newRNG(w.seed, tagApp, j, 0)
	return r.title(2 + r.intn(3))
}

// appLinks are the links page j's script writes, as hrefs relative to the
// host.
func (w *Web) appLinks(j int) []link {
	var out []link
	if j != 0 {
		out = append(out, link{"/", "Home"})
	}
	for _, c := range []int{2*j + 1, 2*j + 2} {
		if c < AppPages {
			out = append(out, link{appPath(c), w.appTitle(c)})
		}
	}
	return out
}

// appJSON is the body of /data/N.json.
type appJSON struct {
	Title string     `json:"title"`
	Text  []string   `json:"text"`
	Links []jsonLink `json:"links"`
}

type jsonLink struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

func (w *Web) appData(j int) []byte {
	d := appJSON{Title: w.appTitle(j), Links: []jsonLink{}}
	r := newRNG(w.seed, tagApp, j, 1)
	for range 2 + r.intn(3) {
		var b strings.Builder
		for s := range 3 + r.intn(3) {
			if s > 0 {
				b.WriteByte(' ')
			}
			r.sentence(&b, 6, 14)
		}
		d.Text = append(d.Text, b.String())
	}
	for _, l := range w.appLinks(j) {
		d.Links = append(d.Links, jsonLink{l.href, l.text})
	}
	out, _ := json.Marshal(d)
	return out
}

// appRender is the code that writes a page from its data, shared by
// /app.js and the inline scripts.
const appRender = `function render(root, d) {
  root.textContent = '';
  var h = document.createElement('h1'); h.textContent = d.title; root.appendChild(h);
  d.text.forEach(function (t) { var p = document.createElement('p'); p.textContent = t; root.appendChild(p); });
  var ul = document.createElement('ul'); ul.className = 'links';
  d.links.forEach(function (l) {
    var li = document.createElement('li'), a = document.createElement('a');
    a.href = l.href; a.textContent = l.text; li.appendChild(a); ul.appendChild(li);
  });
  root.appendChild(ul);
}
`

const appJS = `(function () {
` + appRender + `var root = document.getElementById('app');
var n = root.getAttribute('data-page');
fetch('/data/' + n + '.json').then(function (r) { return r.json(); }).then(function (d) { render(root, d); });
var s = document.createElement('script'); s.src = '` + appTracker + `'; s.async = true;
document.head.appendChild(s);
})();
`

const appInline = `(function () {
` + appRender + `var root = document.getElementById('app');
var x = new XMLHttpRequest();
x.open('GET', '/data/' + root.getAttribute('data-page') + '.json');
x.onload = function () { render(root, JSON.parse(x.responseText)); };
x.send();
})();
`

const appCSS = "body { font-family: sans-serif; margin: 2em; }\n.links li { margin: .2em 0; }\n.loading { color: gray; }\n"

const trackJS = "document.documentElement.setAttribute('data-tracked', '1');\n"

func (w *Web) renderAppPage(b *bytes.Buffer, j int) {
	b.WriteString(htmlHead)
	b.WriteString(html.EscapeString(w.appTitle(j)))
	b.WriteString("</title>\n<link rel=\"stylesheet\" href=\"/style.css\">\n</head>\n<body>\n<div id=\"app\" data-page=\"")
	b.WriteString(strconv.Itoa(j))
	b.WriteString("\"><p class=\"loading\">Loading\u2026</p></div>\n<noscript><p>This site needs JavaScript.</p></noscript>\n")
	if j%2 == 0 {
		b.WriteString("<script src=\"/app.js\"></script>\n")
	} else {
		b.WriteString("<script>\n" + appInline + "</script>\n")
	}
	b.WriteString("</body>\n</html>\n")
}

// serveApp answers a request for path on the ScriptApp host; ok is false
// for a path it does not have.
func (w *Web) serveApp(sw http.ResponseWriter, r *http.Request, path string, buf *bytes.Buffer) bool {
	if j := appPage(path); j >= 0 && r.URL.RawQuery == "" {
		w.renderAppPage(buf, j)
		w.send(sw, r, 200, "text/html; charset=utf-8", buf.Bytes(), time.Time{})
		return true
	}
	if j := appData(path); j >= 0 {
		w.send(sw, r, 200, "application/json", w.appData(j), time.Time{})
		return true
	}
	switch path {
	case "/app.js":
		w.send(sw, r, 200, "text/javascript; charset=utf-8", []byte(appJS), time.Time{})
	case "/style.css":
		w.send(sw, r, 200, "text/css; charset=utf-8", []byte(appCSS), time.Time{})
	case appTracker:
		w.send(sw, r, 200, "text/javascript; charset=utf-8", []byte(trackJS), time.Time{})
	case AppLoop:
		w.send(sw, r, 200, "text/html; charset=utf-8", []byte(htmlHead+"Forever</title>\n</head>\n<body>\n<p>This page never finishes.</p>\n<script>while (true) {}</script>\n<p>Never parsed.</p>\n</body>\n</html>\n"), time.Time{})
	case AppHang:
		w.send(sw, r, 200, "text/html; charset=utf-8", []byte(htmlHead+"Waiting</title>\n</head>\n<body>\n<p>Static text.</p>\n<div id=\"app\"></div>\n<script>\n"+
			"document.getElementById('app').textContent = 'Written by the script.';\n"+
			"var x = new XMLHttpRequest(); x.open('GET', '/data/hang.json'); x.send();\n</script>\n</body>\n</html>\n"), time.Time{})
	case "/data/hang.json":
		select {
		case <-r.Context().Done():
		case <-w.closing:
		}
		sw.WriteHeader(499)
	case AppHeavy:
		w.send(sw, r, 200, "text/html; charset=utf-8", []byte(htmlHead+"Heavy</title>\n</head>\n<body>\n<p>Memory.</p>\n<script>\n"+
			"var keep = []; while (true) { keep.push(new Array(1 << 20).fill(keep.length)); }\n</script>\n</body>\n</html>\n"), time.Time{})
	default:
		return false
	}
	return true
}

// Product is a product of the Shop host, as its page shows it.
type Product struct {
	URL      string   // the product page
	Name     string   // itemprop="name"
	Price    string   // itemprop="price" content, "12.50"
	Currency string   // itemprop="priceCurrency" content, "EUR"
	Tags     []string // itemprop="keywords", in order
	Scripted bool     // the fields are written by /shop.js, not in the HTML
}

// shopProduct is product k without its URL.
func (w *Web) shopProduct(k int) Product {
	r := newRNG(w.seed, tagShop, k, 0)
	p := Product{Name: r.title(2 + r.intn(2)), Currency: "EUR", Scripted: k%2 == 1}
	cents := 199 + r.intn(49800)
	p.Price = strconv.Itoa(cents/100) + "." + strconv.Itoa(cents%100/10) + strconv.Itoa(cents%10)
	for range 2 + r.intn(3) {
		p.Tags = append(p.Tags, r.word())
	}
	return p
}

// Products returns the products of the Shop host in page order; nil
// without Config.Scripts.
func (w *Web) Products() []Product {
	if !w.cfg.Scripts {
		return nil
	}
	out := make([]Product, ShopProducts)
	for k := range out {
		out[k] = w.shopProduct(k)
		out[k].URL = w.URL(w.Host(Shop), shopProductPath(k))
	}
	return out
}

func shopProductPath(k int) string  { return "/product/" + strconv.Itoa(k) + ".html" }
func shopCategoryPath(c int) string { return "/c/" + strconv.Itoa(c) + ".html" }

func (w *Web) shopCategoryName(c int) string {
	r := newRNG(w.seed, tagShop, c, 1)
	return r.title(1)
}

// Shop pages: 0 is home, 1..ShopCategories the categories, then the
// products.
func shopPagePath(j int) string {
	switch {
	case j == 0:
		return "/"
	case j <= ShopCategories:
		return shopCategoryPath(j - 1)
	}
	return shopProductPath(j - 1 - ShopCategories)
}

const shopPages = 1 + ShopCategories + ShopProducts

// shopRoute returns the page index of path on the Shop host, or -1.
func shopRoute(path string) int {
	for j := range shopPages {
		if shopPagePath(j) == path {
			return j
		}
	}
	return -1
}

func (w *Web) shopTitle(j int) string {
	switch {
	case j == 0:
		return "Shop"
	case j <= ShopCategories:
		return "Shop: " + w.shopCategoryName(j-1)
	}
	return w.shopProduct(j - 1 - ShopCategories).Name
}

// shopLinks returns the links of Shop page j in its HTML (scripted false)
// or those its script adds (scripted true).
func (w *Web) shopLinks(j int, scripted bool) []link {
	var out []link
	switch {
	case j == 0:
		if scripted {
			return nil
		}
		for c := range ShopCategories {
			out = append(out, link{shopCategoryPath(c), w.shopCategoryName(c)})
		}
		for k := 0; k < ShopProducts; k += 2 {
			out = append(out, link{shopProductPath(k), w.shopProduct(k).Name})
		}
	case j <= ShopCategories:
		if !scripted {
			return []link{{"/", "Shop"}}
		}
		for k := j - 1; k < ShopProducts; k += ShopCategories {
			out = append(out, link{shopProductPath(k), w.shopProduct(k).Name})
		}
	default:
		if scripted {
			return nil
		}
		k := j - 1 - ShopCategories
		out = append(out, link{"/", "Shop"}, link{shopCategoryPath(k % ShopCategories), w.shopCategoryName(k % ShopCategories)})
	}
	return out
}

const shopJS = `(function () {
function el(tag, prop, text) {
  var e = document.createElement(tag);
  if (prop) e.setAttribute('itemprop', prop);
  if (text !== undefined) e.textContent = text;
  return e;
}
var list = document.getElementById('list');
if (list) {
  fetch('/api/c/' + list.getAttribute('data-category') + '.json').then(function (r) { return r.json(); }).then(function (ps) {
    var ul = document.createElement('ul'); ul.className = 'products';
    ps.forEach(function (p) {
      var li = document.createElement('li'), a = document.createElement('a');
      a.href = p.url; a.textContent = p.name; li.appendChild(a); ul.appendChild(li);
    });
    list.appendChild(ul);
  });
}
var root = document.getElementById('product');
if (root) {
  fetch('/api/product/' + root.getAttribute('data-id') + '.json').then(function (r) { return r.json(); }).then(function (p) {
    root.setAttribute('itemscope', '');
    root.setAttribute('itemtype', 'https://schema.org/Product');
    root.appendChild(el('h1', 'name', p.name));
    var price = el('p'); price.className = 'price';
    var cur = el('span', 'priceCurrency', '\u20ac'); cur.setAttribute('content', p.currency);
    var amount = el('span', 'price', p.price); amount.setAttribute('content', p.price);
    price.appendChild(cur); price.appendChild(amount); root.appendChild(price);
    var tags = el('ul'); tags.className = 'tags';
    p.tags.forEach(function (t) { tags.appendChild(el('li', 'keywords', t)); });
    root.appendChild(tags);
  });
}
})();
`

type shopProductJSON struct {
	Name     string   `json:"name"`
	Price    string   `json:"price"`
	Currency string   `json:"currency"`
	Tags     []string `json:"tags"`
}

type shopItemJSON struct {
	URL  string `json:"url"`
	Name string `json:"name"`
}

func (w *Web) renderShopPage(b *bytes.Buffer, j int) {
	b.WriteString(htmlHead)
	b.WriteString(html.EscapeString(w.shopTitle(j)))
	b.WriteString("</title>\n</head>\n<body>\n<nav>")
	for _, l := range w.shopLinks(j, false) {
		if j == 0 {
			break
		}
		writeLink(b, l)
		b.WriteByte(' ')
	}
	b.WriteString("</nav>\n")
	switch {
	case j == 0:
		b.WriteString("<h1>Shop</h1>\n<ul class=\"categories\">\n")
		for _, l := range w.shopLinks(0, false) {
			b.WriteString("<li>")
			writeLink(b, l)
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>\n")
	case j <= ShopCategories:
		b.WriteString("<h1>" + html.EscapeString(w.shopCategoryName(j-1)) + "</h1>\n<div id=\"list\" data-category=\"" + strconv.Itoa(j-1) + "\"></div>\n<script src=\"/shop.js\"></script>\n")
	default:
		k := j - 1 - ShopCategories
		p := w.shopProduct(k)
		if p.Scripted {
			b.WriteString("<div class=\"product\" id=\"product\" data-id=\"" + strconv.Itoa(k) + "\"></div>\n<script src=\"/shop.js\"></script>\n")
			break
		}
		b.WriteString("<div class=\"product\" itemscope itemtype=\"https://schema.org/Product\">\n<h1 itemprop=\"name\">")
		b.WriteString(html.EscapeString(p.Name))
		b.WriteString("</h1>\n<p class=\"price\"><span itemprop=\"priceCurrency\" content=\"" + p.Currency + "\">\u20ac</span><span itemprop=\"price\" content=\"" + p.Price + "\">" + p.Price + "</span></p>\n<ul class=\"tags\">")
		for _, t := range p.Tags {
			b.WriteString("<li itemprop=\"keywords\">" + html.EscapeString(t) + "</li>")
		}
		b.WriteString("</ul>\n</div>\n")
	}
	b.WriteString("</body>\n</html>\n")
}

// serveShop answers a request for path on the Shop host; ok is false for
// a path it does not have.
func (w *Web) serveShop(sw http.ResponseWriter, r *http.Request, path string, buf *bytes.Buffer) bool {
	if j := shopRoute(path); j >= 0 && r.URL.RawQuery == "" {
		w.renderShopPage(buf, j)
		w.send(sw, r, 200, "text/html; charset=utf-8", buf.Bytes(), time.Time{})
		return true
	}
	if s, ok := strings.CutPrefix(path, "/api/product/"); ok {
		if k, ok := jsonIndex(s, ShopProducts); ok {
			p := w.shopProduct(k)
			body, _ := json.Marshal(shopProductJSON{p.Name, p.Price, p.Currency, p.Tags})
			w.send(sw, r, 200, "application/json", body, time.Time{})
			return true
		}
	}
	if s, ok := strings.CutPrefix(path, "/api/c/"); ok {
		if c, ok := jsonIndex(s, ShopCategories); ok {
			items := []shopItemJSON{}
			for _, l := range w.shopLinks(1+c, true) {
				items = append(items, shopItemJSON{l.href, l.text})
			}
			body, _ := json.Marshal(items)
			w.send(sw, r, 200, "application/json", body, time.Time{})
			return true
		}
	}
	switch path {
	case "/shop.js":
		w.send(sw, r, 200, "text/javascript; charset=utf-8", []byte(shopJS), time.Time{})
	default:
		return false
	}
	return true
}

// scriptFile reports whether path is a script, style or data file (or a
// misbehaving page) of a script host of kind k.
func scriptFile(k hostKind, path string) bool {
	if k == kindApp {
		switch path {
		case "/app.js", "/style.css", appTracker, AppLoop, AppHang, AppHeavy, "/data/hang.json":
			return true
		}
		return appData(path) >= 0
	}
	if path == "/shop.js" {
		return true
	}
	if s, ok := strings.CutPrefix(path, "/api/product/"); ok {
		_, ok = jsonIndex(s, ShopProducts)
		return ok
	}
	if s, ok := strings.CutPrefix(path, "/api/c/"); ok {
		_, ok = jsonIndex(s, ShopCategories)
		return ok
	}
	return false
}

// jsonIndex parses "N.json" with 0 <= N < n.
func jsonIndex(s string, n int) (int, bool) {
	s, ok := strings.CutSuffix(s, ".json")
	k, err := strconv.Atoi(s)
	return k, ok && err == nil && k >= 0 && k < n && strconv.Itoa(k) == s
}

// scriptPages returns the pages of the script hosts (see Pages).
func (w *Web) scriptPages() []string {
	if !w.cfg.Scripts {
		return nil
	}
	var out []string
	for j := range AppPages {
		out = append(out, w.URL(w.Host(ScriptApp), appPath(j)))
	}
	for j := range shopPages {
		out = append(out, w.URL(w.Host(Shop), shopPagePath(j)))
	}
	return out
}

// scriptLinks returns the links of page path on a script host h, in its
// HTML or, with scripted, those its scripts add; ok is false if path is
// not a page.
func (w *Web) scriptLinks(h *hostInfo, path string, scripted bool) (links []link, ok bool) {
	switch h.kind {
	case kindApp:
		j := appPage(path)
		if j < 0 {
			return nil, false
		}
		if scripted {
			return w.appLinks(j), true
		}
		return nil, true
	case kindShop:
		j := shopRoute(path)
		if j < 0 {
			return nil, false
		}
		return w.shopLinks(j, scripted), true
	}
	return nil, false
}

// scriptTitle returns the title of page path on a script host, "" if none.
func (w *Web) scriptTitle(h *hostInfo, path string) string {
	switch h.kind {
	case kindApp:
		if j := appPage(path); j >= 0 {
			return w.appTitle(j)
		}
	case kindShop:
		if j := shopRoute(path); j >= 0 {
			return w.shopTitle(j)
		}
	}
	return ""
}
