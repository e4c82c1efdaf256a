package fetchtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzServe sends arbitrary paths to every kind of host through the handler
// (hosts of the subdomain trap included): it must never panic, and must
// answer what the ground truth (Status) says.
func FuzzServe(f *testing.F) {
	w := NewWeb(Config{Seed: 1, Hosts: 9, SubdomainTrap: "explode.test"})
	f.Cleanup(w.Close)
	hosts := append(w.Hosts(), "x0.explode.test", "xzz.explode.test", "explode.test", "a.b.explode.test")
	for _, s := range []string{"/", "/robots.txt", "/calendar/2026/01", "/calendar/0000/13/99",
		"/chain/3/1", "/loop/0/1", "/404/x", "/d/a/b/", "/item/19?sid=1", "/p/5.html",
		"/search?q=x&page=3", "/sitemap_index.xml", "/%2e%2e/x", "/a?%zz", "/p/2", "/p/3?x=1"} {
		f.Add(uint8(0), s)
		f.Add(uint8(len(s)), s)
	}
	f.Fuzz(func(t *testing.T, hi uint8, target string) {
		host := hosts[int(hi)%len(hosts)]
		if strings.HasPrefix(host, Hostile+".") || !strings.HasPrefix(target, "/") {
			return // hostile answers are slow on purpose
		}
		full := "http://" + host + ":" + w.Port() + target
		req, err := http.NewRequest("GET", full, nil)
		if err != nil {
			return
		}
		want := w.Status(full) // before serving: /retry/ paths count requests
		rec := httptest.NewRecorder()
		w.serveHTTP(rec, req)
		if rec.Code != want && !(want == 0 && rec.Code == http.StatusNotFound) {
			t.Fatalf("%s%s: served %d, Status says %d", host, target, rec.Code, want)
		}
	})
}
