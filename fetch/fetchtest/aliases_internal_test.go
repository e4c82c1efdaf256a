package fetchtest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// FuzzAliases sends arbitrary paths and queries to both hosts of the
// Aliases site through the handler. Both hosts must answer the same status
// and bytes; the status must be what Status says; and a URL that answers a
// page must serve the bytes of its canonical URL, which must be a page of
// PagesOf, its own canonical URL, with the same title.
func FuzzAliases(f *testing.F) {
	w := NewWeb(Config{Seed: 1, Hosts: 2, Aliases: true})
	f.Cleanup(w.Close)
	site := w.alias()
	pages := w.PagesOf(w.Host(Aliases))
	for _, s := range []string{"/", "/index.html", "/news/?page=2", "/news/index.html?page=1&ref=3",
		"/about.html?lang=de&utm_source=x", "/about.html?lang=en", "/current/", "/v2/index.html",
		"/v2/" + site.files[3], "/current/" + site.files[29] + "?sessionid=1", "/api/class-use/" + site.classes[0] + ".html",
		"/news/" + site.articles[0] + "?ref=2", "/robots.txt", "/news/?page=%32", "/a?%zz", "/v3/%69ndex.html",
		"/news/?page=2;x=1", "/about.html?lang=de&lang=de", "//v3/"} {
		f.Add(s)
	}
	serve := func(host, target string) (int, []byte, bool) {
		req, err := http.NewRequest("GET", "http://"+host+":"+w.Port()+target, nil)
		if err != nil {
			return 0, nil, false
		}
		rec := httptest.NewRecorder()
		w.serveHTTP(rec, req)
		return rec.Code, rec.Body.Bytes(), true
	}
	f.Fuzz(func(t *testing.T, target string) {
		if !strings.HasPrefix(target, "/") {
			return
		}
		host := w.Host(Aliases)
		code, body, ok := serve(host, target)
		if !ok {
			return
		}
		full := "http://" + host + ":" + w.Port() + target
		if want := w.Status(full); code != want && !(want == 0 && code == http.StatusNotFound) {
			t.Fatalf("%s: served %d, Status says %d", target, code, want)
		}
		wcode, wbody, _ := serve(w.aliasWWW(), target)
		if wcode != code || !bytes.Equal(wbody, body) {
			t.Fatalf("%s: %d on %s, %d on its www alias; same bytes %v", target, code, host, wcode, bytes.Equal(wbody, body))
		}
		c, ok := w.Canonical(full)
		if ok != (code == 200 && target != "/robots.txt") {
			t.Fatalf("%s: answers %d, Canonical %q %v", target, code, c, ok)
		}
		if !ok {
			return
		}
		if cc, ok := w.Canonical(c); !ok || cc != c || !slices.Contains(pages, c) {
			t.Fatalf("%s: canonical %s is not a page of its own (%q %v, in PagesOf %v)", target, c, cc, ok, slices.Contains(pages, c))
		}
		ccode, cbody, _ := serve(host, strings.TrimPrefix(c, "http://"+host+":"+w.Port()))
		if ccode != 200 || !bytes.Equal(cbody, body) {
			t.Fatalf("%s: canonical %s answers %d, same bytes %v", target, c, ccode, bytes.Equal(cbody, body))
		}
		if w.Title(full) != w.Title(c) {
			t.Fatalf("%s: title %q, canonical's %q", target, w.Title(full), w.Title(c))
		}
	})
}
