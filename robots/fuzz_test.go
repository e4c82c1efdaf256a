package robots

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// refMatch is the matcher of Google's reference parser (robots.cc,
// RobotsMatchStrategy::Matches), kept deliberately naive: it tracks every
// position the pattern prefix can end at. '*' and '$' are metacharacters here;
// canonical segments never contain them raw.
func refMatch(path, pattern string) bool {
	pos := []int{0}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '$' && i == len(pattern)-1 {
			return pos[len(pos)-1] == len(path)
		}
		if c == '*' {
			start := pos[0]
			pos = pos[:0]
			for j := start; j <= len(path); j++ {
				pos = append(pos, j)
			}
			continue
		}
		var next []int
		for _, p := range pos {
			if p < len(path) && path[p] == c {
				next = append(next, p+1)
			}
		}
		if len(next) == 0 {
			return false
		}
		pos = next
	}
	return true
}

// refAllowed decides by trying every rule of the group: longest pattern as
// written wins, allow wins a tie. It shares only parsing and canonical forms
// with Rules.Allowed, not the ordering, the index or the segment matcher.
func refAllowed(r *Rules, agent, target string) bool {
	if r.kind == allowAll {
		return true
	}
	var buf [512]byte
	p := strings.Clone(canonPath(buf[:], target))
	if isRobotsPath(p) {
		return true
	}
	if r.kind == disallowAll {
		return false
	}
	var all []rule
	for _, g := range r.group(agent) {
		all = append(all, g.rules...)
	}
	bestLen, allow, found := -1, true, false
	for _, ru := range all {
		pat := strings.Join(ru.segs, "*")
		if ru.anchored {
			pat += "$"
		}
		if !refMatch(p, pat) {
			continue
		}
		if ru.length > bestLen || ru.length == bestLen && ru.allow {
			bestLen, allow, found = ru.length, ru.allow, true
		}
	}
	return !found || allow
}

// TestMatchAgainstReference compares Allowed with refAllowed on random files
// over a small alphabet, big enough to build the radix index and to make
// wildcards, anchors, escapes and ties collide.
func TestMatchAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "/", "*", "$", "%61", "%2F", "%2f", "ä", "?", "="}
	piece := func(n int) string {
		var b strings.Builder
		for range rng.IntN(n) + 1 {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for file := 0; file < 200; file++ {
		var b strings.Builder
		b.WriteString("User-agent: *\n")
		for range rng.IntN(40) + 1 {
			if rng.IntN(8) == 0 {
				b.WriteString("User-agent: *\n") // a second group, merged
			}
			if rng.IntN(2) == 0 {
				b.WriteString("Allow: ")
			} else {
				b.WriteString("Disallow: ")
			}
			b.WriteString([]string{"/", "/", "/", "*", "", "%2F"}[rng.IntN(6)] + piece(6) + "\n")
		}
		r := Parse(200, []byte(b.String()))
		for range 100 {
			target := "/" + strings.NewReplacer("*", "", "$", "").Replace(piece(10))
			if got, want := r.Allowed("bot", target), refAllowed(r, "bot", target); got != want {
				t.Fatalf("Allowed(%q) = %v, reference %v\nfile:\n%s", target, got, want, b.String())
			}
		}
	}
}

// FuzzParse checks that Parse and Allowed never panic, that Allowed agrees
// with the naive reference and is deterministic, and that parsing the same
// bytes twice gives the same answers.
func FuzzParse(f *testing.F) {
	f.Add([]byte("User-Agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\nUser-Agent: foobot\nDisallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n\nUser-Agent: barbot\nUser-Agent: bazbot\nDisallow: /example/page.html\n\nUser-Agent: quxbot\n\nEOF\n"), "foobot", "/example/page.html")
	f.Add([]byte("User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"), "FooBot/1.0", "https://example.com/example/page/disallowed.gif")
	f.Add([]byte("\xEF\xBBuser-agent : a # c\r\ndisallow:/%62*%E3%83%84$\rcrawl-delay: 1.5\nsitemap: https://x/s.xml"), "a", "/b/\u30c4")
	f.Add([]byte("User-agent: *\nDisallow: /a$b\nAllow: /**x*\nDisallow: /100%\n"), "*", "/a$b?q#f")
	f.Fuzz(func(t *testing.T, body []byte, agent, target string) {
		r := Parse(200, body)
		got := r.Allowed(agent, target)
		if again := r.Allowed(agent, target); again != got {
			t.Fatalf("Allowed not deterministic: %v then %v", got, again)
		}
		if want := refAllowed(r, agent, target); got != want {
			t.Fatalf("Allowed(%q, %q) = %v, reference %v", agent, target, got, want)
		}
		if r2 := Parse(200, body); r2.Allowed(agent, target) != got || r2.CrawlDelay(agent) != r.CrawlDelay(agent) {
			t.Fatal("Parse not deterministic")
		}
		if r.CrawlDelay(agent) < 0 {
			t.Fatal("negative crawl delay")
		}
	})
}

// FuzzCanonPath checks the canonical form of request paths: no panic, only
// printable ASCII out, idempotent (a canonical URL stays as it is, so a crawler
// may store either form), and the same decision for a URL and its canonical
// form.
func FuzzCanonPath(f *testing.F) {
	for _, s := range []string{"/", "/a%62c", "https://h/p?u=https://x/y#f", "/%E3%83%84/\u30c4", "/%zz%", "//h?q", "/*$%2a%24", "http://h#/x"} {
		f.Add(s)
	}
	r := Parse(200, []byte("User-agent: *\nDisallow: /a\nAllow: /a*b$\nDisallow: /*?u=https%3A\nDisallow: /%E3\n"))
	f.Fuzz(func(t *testing.T, target string) {
		var b1, b2 [512]byte
		c1 := strings.Clone(canonPath(b1[:], target))
		for i := 0; i < len(c1); i++ {
			if c1[i] <= ' ' || c1[i] >= 0x7f {
				t.Fatalf("canonPath(%q) = %q has byte %#x", target, c1, c1[i])
			}
		}
		if !strings.HasPrefix(c1, "/") {
			t.Fatalf("canonPath(%q) = %q does not start with /", target, c1)
		}
		if c2 := canonPath(b2[:], c1); c2 != c1 {
			t.Fatalf("not idempotent: %q -> %q -> %q", target, c1, c2)
		}
		if r.Allowed("x", target) != r.Allowed("x", c1) {
			t.Fatalf("%q and its canonical form %q decided differently", target, c1)
		}
	})
}
