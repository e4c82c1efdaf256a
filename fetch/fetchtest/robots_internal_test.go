package fetchtest

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMatchRule(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"/", "/anything", true},
		{"/private/", "/private/x.html", true},
		{"/private/", "/private", false},
		{"/private/", "/privateer/", false},
		{"/*.pdf$", "/docs/a.pdf", true},
		{"/*.pdf$", "/docs/a.pdf?x=1", false},
		{"/*.pdf$", "/docs/a.pdfx", false},
		{"/*.pdf", "/docs/a.pdfx", true},
		{"/docs/*.pdf$", "/docs/x/y.pdf", true},
		{"/docs/*.pdf$", "/papers/y.pdf", false},
		{"/search?*sort=", "/search?page=2&q=x&sort=date", true},
		{"/search?*sort=", "/search?page=2&q=x", false},
		{"/*/guide/", "/docs/guide/a.html", true},
		{"/*/guide/", "/guide/a.html", false},
		{"/a*b*c$", "/abxbxc", true},
		{"/a*b*c$", "/abxbxcd", false},
		{"*", "/", true},
		{"/$", "/", true},
		{"/$", "/a", false},
		{"/a$b", "/a$b/c", true}, // '$' only anchors at the end
	} {
		if got := matchRule(tc.pattern, tc.path); got != tc.want {
			t.Errorf("matchRule(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

// patternRegexp is the obvious reference implementation of matchRule.
func patternRegexp(pattern string) *regexp.Regexp {
	anchored := strings.HasSuffix(pattern, "$")
	pattern = strings.TrimSuffix(pattern, "$")
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re := "^(?s:" + strings.Join(parts, ".*") + ")"
	if anchored {
		re += "$"
	}
	return regexp.MustCompile(re)
}

func FuzzMatchRule(f *testing.F) {
	for _, s := range [][2]string{
		{"/*.pdf$", "/docs/a.pdf"}, {"/search?*sort=", "/search?q=1&sort=d"},
		{"/a*b*c$", "/abxbxc"}, {"", "/"}, {"**$", ""}, {"/$", "/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if len(pattern) > 64 || len(path) > 256 || !utf8.ValidString(pattern) || !utf8.ValidString(path) {
			return // the reference regexp works on UTF-8 only
		}
		want := patternRegexp(pattern).MatchString(path)
		if got := matchRule(pattern, path); got != want {
			t.Fatalf("matchRule(%q, %q) = %v, regexp says %v", pattern, path, got, want)
		}
	})
}

func TestAllowedBy(t *testing.T) {
	byName := func(name string) *robotsVariant {
		for i := range robotsVariants {
			if robotsVariants[i].name == name {
				return &robotsVariants[i]
			}
		}
		t.Fatalf("no variant %s", name)
		return nil
	}
	for _, tc := range []struct {
		variant, agent, path string
		want                 bool
	}{
		{"plain", "crawlkit", "/private/x.html", true},
		{"prefix", "crawlkit", "/private/x.html", false},
		{"prefix", "crawlkit", "/shop/x.html", false},
		{"prefix", "crawlkit", "/news/x.html", true},
		{"prefix", "crawlkit", "/robots.txt", true},
		{"allow-override", "x", "/archive/2018/a.html", false},
		{"allow-override", "x", "/archive/2019/a.html", true},
		{"allow-override", "x", "/archive/", false},
		{"wildcard", "x", "/papers/a.pdf", false},
		{"wildcard", "x", "/docs/a.pdf", true}, // longer allow wins
		{"wildcard", "x", "/search?page=3&q=y&sort=date", false},
		{"wildcard", "x", "/search?page=3&q=y", true},
		{"wildcard", "x", "/docs/guide/a.html", false},
		{"crawl-delay", "x", "/private/a", false},
		{"404", "x", "/private/a", true},
		{"5xx", "x", "/", false},
		{"5xx", "x", "/robots.txt", true},
		{"redirect", "x", "/blog/a.html", false},
		{"redirect", "x", "/shop/a.html", true},
		{"agents", "evilbot", "/", false},
		{"agents", "EvilBot/2.0", "/news/a.html", false},
		{"agents", "crawlkit/1.0 (+http://x)", "/shop/a.html", true},
		{"agents", "crawlkit", "/private/a.html", false},
		{"agents", "goodbot", "/shop/a.html", true},
		{"agents", "otherbot", "/shop/a.html", false},
		{"agents", "otherbot", "/news/a.html", true},
	} {
		if got := allowedBy(byName(tc.variant), tc.agent, tc.path); got != tc.want {
			t.Errorf("%s: allowed(%q, %q) = %v, want %v", tc.variant, tc.agent, tc.path, got, tc.want)
		}
	}
	// Allow wins a tie of equal length.
	tie := &robotsVariant{status: 200, groups: []robotsGroup{{agents: []string{"*"},
		rules: []robotsRule{dis("/a/"), alw("/a/")}}}}
	if !allowedBy(tie, "x", "/a/b") {
		t.Error("tie not won by allow")
	}
}

func TestRelRef(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"/", "/a.html", "a.html"},
		{"/news/x.html", "/news/y.html", "y.html"},
		{"/news/x.html", "/blog/y.html", "../blog/y.html"},
		{"/a/b/c.html", "/", "../../"},
		{"/a/b/c.html", "/a/", "../"},
		{"/a/", "/a/", "./"},
		{"/x.html", "/search?page=1&q=z", "search?page=1&q=z"},
		{"/search?page=1", "/search?page=2", "search?page=2"},
		{"/blog/2025/03/a.html", "/blog/b.html", "../../b.html"},
		{"/", "/a:b.html", "./a:b.html"},
	} {
		if got := relRef(tc.from, tc.to); got != tc.want {
			t.Errorf("relRef(%q, %q) = %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
}

func FuzzRelRef(f *testing.F) {
	f.Add("/news/x.html", "/blog/y.html")
	f.Add("/a/b/c.html", "/")
	f.Add("/", "/search?page=1&q=z")
	f.Add("/a/", "/a/")
	f.Fuzz(func(t *testing.T, from, to string) {
		for _, s := range []string{from, to} {
			if !strings.HasPrefix(s, "/") || strings.ContainsAny(s, "#%\\ \t\r\n") || strings.Contains(s, "//") ||
				strings.Contains(s, "/./") || strings.Contains(s, "/../") || strings.HasSuffix(s, "/.") || strings.HasSuffix(s, "/..") {
				return
			}
			if _, err := url.Parse(s); err != nil {
				return
			}
		}
		base, _ := url.Parse("http://h.test" + from)
		ref, err := url.Parse(relRef(from, to))
		if err != nil {
			t.Fatalf("relRef(%q, %q) = %q: %v", from, to, relRef(from, to), err)
		}
		got := base.ResolveReference(ref)
		want, _ := url.Parse("http://h.test" + to)
		if got.EscapedPath() != want.EscapedPath() || got.RawQuery != want.RawQuery {
			t.Fatalf("relRef(%q, %q) = %q resolves to %s", from, to, relRef(from, to), got)
		}
	})
}
