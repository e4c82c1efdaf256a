package dust_test

import (
	"net/url"
	"testing"

	"github.com/crawlkit/crawlkit/dedup/dust"
	"github.com/crawlkit/crawlkit/urlnorm"
)

// FuzzRewrite learns one rule of each kind from fuzzed parts (an alias
// host, a parameter, a document name, two prefixes), then rewrites a
// fuzzed URL: no panic, a valid absolute URL, and a fixed point.
func FuzzRewrite(f *testing.F) {
	f.Add("www.f.sim.test", "ref", "index.html", "/current/", "/v3/", "http://www.f.sim.test/current/a/index.html?ref=1&x=2")
	f.Add("f.sim.test", "", "", "/", "/a/", "http://f.sim.test/?")
	f.Add("m.sim.test:8080", "a b", "x?y", "/a/b/", "/a/", "https://m.sim.test:8080/a/b/c#frag")
	f.Fuzz(func(t *testing.T, alias, param, doc, from, to, raw string) {
		l, _ := dust.New(&dust.Options{Probation: -1, MinSupport: 1, ValidateEvery: 3})
		const host = "f.sim.test"
		obs := func(u, first string, fp uint64) {
			if cu, err := urlnorm.Canonical(u); err == nil {
				if cf, err := urlnorm.Canonical(first); err == nil || first == "" {
					l.Observe(cu, fp, cf)
				}
			}
		}
		obs("http://"+host+"/p", "", 1)
		obs("http://"+alias+"/p", "http://"+host+"/p", 1)
		obs("http://"+host+"/q", "", 2)
		obs("http://"+host+"/q?"+param+"=1", "http://"+host+"/q", 2)
		obs("http://"+host+"/q?"+param+"=2", "http://"+host+"/q", 2)
		obs("http://"+host+"/d/", "", 3)
		obs("http://"+host+"/d/"+doc, "http://"+host+"/d/", 3)
		obs("http://"+host+to+"x", "", 4)
		obs("http://"+host+from+"x", "http://"+host+to+"x", 4)
		obs("http://"+host+"/api/index.html", "", 5)
		obs("http://"+host+"/api/index.html?"+param, "http://"+host+"/api/index.html", 5)

		u, err := urlnorm.Canonical(raw)
		if err != nil {
			return
		}
		res, ok := l.Rewrite(u)
		if !ok {
			if res.URL != u {
				t.Fatalf("Rewrite(%q) = %q without a rule", u, res.URL)
			}
			return
		}
		pu, err := url.Parse(res.URL)
		if err != nil || !pu.IsAbs() || pu.Host == "" {
			t.Fatalf("Rewrite(%q) = %q: not a valid absolute URL (%v); rules %v", u, res.URL, err, l.Rules())
		}
		if c, err := urlnorm.Canonical(res.URL); err != nil || c != res.URL {
			t.Fatalf("Rewrite(%q) = %q: not canonical (%q, %v); rules %v", u, res.URL, c, err, l.Rules())
		}
		if again, ok := l.Rewrite(res.URL); ok {
			t.Fatalf("Rewrite(%q) = %q, then %q: not idempotent; rules %v", u, res.URL, again.URL, l.Rules())
		}
	})
}
