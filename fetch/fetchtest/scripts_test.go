package fetchtest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/fetchtest"
)

// TestScriptHosts checks the hosts of Config.Scripts without a browser:
// every page is served with the links Links promises in its HTML, the
// data files hold the links RenderedLinks adds, and the ground truth
// splits the pages into those a static crawl reaches and those only
// rendering reaches.
func TestScriptHosts(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 4, MeanPages: 8, Scripts: true})
	defer w.Close()
	app, shop := w.Host(fetchtest.ScriptApp), w.Host(fetchtest.Shop)
	home := w.Links(w.URL(w.OrdinaryHosts()[0], "/"))
	for _, h := range []string{app, shop} {
		if !slices.Contains(w.Hosts(), h) || !slices.Contains(home, w.URL(h, "/")) {
			t.Fatalf("%s: in Hosts %v, linked from h000 %v", h, slices.Contains(w.Hosts(), h), slices.Contains(home, w.URL(h, "/")))
		}
	}
	appPages, shopPages := w.PagesOf(app), w.PagesOf(shop)
	if len(appPages) != fetchtest.AppPages || len(shopPages) != 1+fetchtest.ShopCategories+fetchtest.ShopProducts {
		t.Fatalf("PagesOf: %d app pages, %d shop pages", len(appPages), len(shopPages))
	}
	all := w.Pages()
	for _, u := range append(slices.Clone(appPages), shopPages...) {
		if !slices.Contains(all, u) {
			t.Errorf("%s not in Pages", u)
		}
		resp, body := get(t, w, u)
		if resp.StatusCode != 200 || w.Status(u) != 200 {
			t.Fatalf("GET %s: %d (Status %d)", u, resp.StatusCode, w.Status(u))
		}
		if got := parsedLinks(t, u, body, true); !slices.Equal(got, w.Links(u)) && !(len(got) == 0 && len(w.Links(u)) == 0) {
			t.Errorf("%s: links in the HTML %v, Links %v", u, got, w.Links(u))
		}
		d := (&fetch.HTML{}).ParseBytes(body, mustParse(t, u))
		if d.Title == "" || d.Title != w.Title(u) {
			t.Errorf("%s: title %q, Title %q", u, d.Title, w.Title(u))
		}
		if !strings.Contains(string(body), "<script") && u != w.URL(shop, "/") && !strings.Contains(u, "/product/") {
			t.Errorf("%s has no script", u)
		}
	}

	// The app's data files hold the links its scripts write.
	for j, u := range appPages {
		if len(w.Links(u)) != 0 {
			t.Errorf("%s: a static crawler sees links %v", u, w.Links(u))
		}
		_, body := get(t, w, w.URL(app, "/data/"+strconv.Itoa(j)+".json"))
		var d struct {
			Title string
			Text  []string
			Links []struct{ Href string }
		}
		if err := json.Unmarshal(body, &d); err != nil || d.Title != w.Title(u) || len(d.Text) < 2 {
			t.Fatalf("/data/%d.json: %v, %+v", j, err, d)
		}
		var hrefs []string
		for _, l := range d.Links {
			hrefs = append(hrefs, w.URL(app, l.Href))
		}
		if !slices.Equal(hrefs, w.RenderedLinks(u)) {
			t.Errorf("%s: data links %v, RenderedLinks %v", u, hrefs, w.RenderedLinks(u))
		}
	}

	reach, rendered, only := w.Reachable("crawlkit"), w.ReachableRendered("crawlkit"), w.RenderOnly("crawlkit")
	for _, u := range appPages {
		inStatic := slices.Contains(reach, u)
		if inStatic != (u == w.URL(app, "/")) || !slices.Contains(rendered, u) || slices.Contains(only, u) == inStatic {
			t.Errorf("%s: Reachable %v, ReachableRendered %v, RenderOnly %v", u, inStatic, slices.Contains(rendered, u), slices.Contains(only, u))
		}
	}
	products := w.Products()
	if len(products) != fetchtest.ShopProducts {
		t.Fatalf("%d products", len(products))
	}
	for k, p := range products {
		if p.Scripted != (k%2 == 1) || p.Name == "" || p.Currency != "EUR" || len(p.Tags) < 2 || !strings.Contains(p.Price, ".") {
			t.Errorf("product %d: %+v", k, p)
		}
		if slices.Contains(reach, p.URL) == p.Scripted || !slices.Contains(rendered, p.URL) {
			t.Errorf("%s (scripted %v): Reachable %v, ReachableRendered %v", p.URL, p.Scripted, slices.Contains(reach, p.URL), slices.Contains(rendered, p.URL))
		}
		_, body := get(t, w, p.URL)
		dom, err := fetch.ParseDOM(body, mustParse(t, p.URL), true)
		if err != nil {
			t.Fatal(err)
		}
		name := dom.Root().ChildText("[itemprop=name]")
		if p.Scripted {
			if name != "" {
				t.Errorf("%s: scripted product has a name %q in its HTML", p.URL, name)
			}
			_, body := get(t, w, w.URL(shop, "/api/product/"+strconv.Itoa(k)+".json"))
			var j struct {
				Name, Price, Currency string
				Tags                  []string
			}
			if err := json.Unmarshal(body, &j); err != nil || j.Name != p.Name || j.Price != p.Price || !slices.Equal(j.Tags, p.Tags) {
				t.Errorf("%s: API %+v (%v), product %+v", p.URL, j, err, p)
			}
			continue
		}
		if price := dom.Root().ChildAttr("[itemprop=price]", "content"); name != p.Name || price != p.Price ||
			!slices.Equal(dom.Root().ChildTexts("[itemprop=keywords]"), p.Tags) {
			t.Errorf("%s: HTML says %q %q %v, product %+v", p.URL, name, price, dom.Root().ChildTexts("[itemprop=keywords]"), p)
		}
	}

	// robots.txt forbids the tracker app.js inserts, and the log says so
	// when a client fetches it.
	tracker := w.URL(app, "/private/track.js")
	if w.Allowed("crawlkit", tracker) || !w.Allowed("crawlkit", w.URL(app, "/app.js")) || w.RobotsVariant(app) != "app" {
		t.Errorf("robots of %s: tracker allowed %v, variant %q", app, w.Allowed("crawlkit", tracker), w.RobotsVariant(app))
	}
	w.ResetLog()
	for _, p := range []string{"/app.js", "/style.css", "/private/track.js", "/robots.txt"} {
		if resp, _ := get(t, w, w.URL(app, p)); resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", p, resp.StatusCode)
		}
	}
	if v := w.RobotsViolations("crawlkit"); len(v) != 1 || v[0].Path != "/private/track.js" {
		t.Errorf("RobotsViolations = %+v, want the tracker only", v)
	}
	for _, u := range []string{w.URL(app, "/p/99.html"), w.URL(app, "/data/99.json"), w.URL(shop, "/api/product/x.json"), w.URL(app, "/?x=1")} {
		if resp, _ := get(t, w, u); resp.StatusCode != 404 || w.Status(u) != 404 {
			t.Errorf("GET %s: %d, Status %d; want 404", u, resp.StatusCode, w.Status(u))
		}
	}
}

// TestScriptHostsOff: without Config.Scripts the hosts do not exist and
// the ground truth of a rendering crawl is that of a static one.
func TestScriptHostsOff(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 4, MeanPages: 8})
	defer w.Close()
	if slices.Contains(w.Hosts(), w.Host(fetchtest.ScriptApp)) || w.Products() != nil || len(w.RenderOnly("crawlkit")) != 0 {
		t.Fatal("script hosts without Config.Scripts")
	}
	if !slices.Equal(w.Reachable("crawlkit"), w.ReachableRendered("crawlkit")) {
		t.Error("ReachableRendered differs from Reachable on a web without scripts")
	}
}

// TestAppHang: the held answer ends when the client goes away, and when
// the web closes.
func TestAppHang(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2, Scripts: true})
	u := w.URL(w.Host(fetchtest.ScriptApp), "/data/hang.json")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	if resp, err := w.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("hang answered %d", resp.StatusCode)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := w.Client().Get(u)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	w.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the held request outlived Close")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
}
