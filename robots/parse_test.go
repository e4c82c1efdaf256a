package robots

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// One test per behaviour issue 4 lists, in its order.

func TestAgentCaseInsensitive(t *testing.T) {
	runChecks(t, "User-Agent: FooBot\nDisallow: /\n", []check{
		{"foobot", "/x", false},
		{"FOOBOT", "/x", false},
		{"FooBot/1.0 (+https://example.com)", "/x", false},
	})
	runChecks(t, "user-agent: foobot\nDisallow: /\n", []check{{"FooBot", "/x", false}})
	// Past maxAgentList agents the lookup hashes; tokens over 64 bytes too.
	long := strings.Repeat("LongBot", 12)
	var b strings.Builder
	for i := range maxAgentList + 2 {
		fmt.Fprintf(&b, "User-agent: bot%c\nDisallow: /%c\n\n", 'a'+i, 'a'+i)
	}
	b.WriteString("User-agent: " + long + "\nDisallow: /long\n")
	runChecks(t, b.String(), []check{
		{"botc", "/c", false}, {"BOTC/1", "/c", false}, {"botc", "/d", true}, {"botz", "/c", true},
		{long, "/long", false}, {strings.ToLower(long), "/long", false}, {long[:70], "/long", true},
	})
}

func TestAgentLinesShareGroup(t *testing.T) {
	runChecks(t, "User-agent: a\nUser-agent: b\n# comment between\nUser-agent: c\nDisallow: /x\n", []check{
		{"a", "/x", false}, {"b", "/x", false}, {"c", "/x", false}, {"d", "/x", true},
	})
	// A sitemap or an unknown line between user-agent lines does not split
	// the group.
	runChecks(t, "User-agent: a\nSitemap: https://example.com/s.xml\nFoo: bar\nUser-agent: b\nDisallow: /x\n", []check{
		{"a", "/x", false}, {"b", "/x", false},
	})
}

func TestGroupsMergedForSameAgent(t *testing.T) {
	file := "User-agent: a\nDisallow: /one\nCrawl-delay: 2\n\nUser-agent: b\nDisallow: /two\n\nUser-agent: A\nDisallow: /three\nAllow: /one/ok\nCrawl-delay: 5\n"
	runChecks(t, file, []check{
		{"a", "/one", false}, {"a", "/three", false}, {"a", "/two", true}, {"a", "/one/ok", true},
		{"b", "/two", false}, {"b", "/one", true},
	})
	if d := Parse(200, []byte(file)).CrawlDelay("a"); d != 5*time.Second {
		t.Errorf("merged CrawlDelay = %v, want the larger 5s", d)
	}
}

// A file naming many agents for one large group must not cost agents ×
// rules: the group is compiled once and shared.
func TestManyAgentsShareOneGroup(t *testing.T) {
	var b strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&b, "User-agent: bot%s\n", strings.Repeat("x", i%20)+string(rune('a'+i%26)))
	}
	for i := range 10000 {
		fmt.Fprintf(&b, "Disallow: /p%d\n", i)
	}
	r := Parse(200, []byte(b.String()))
	first := r.group("bota")
	if len(first) != 1 || len(first[0].rules) != 10000 {
		t.Fatalf("group of bota: %d groups", len(first))
	}
	for a, gs := range r.groups {
		if len(gs) != 1 || gs[0] != first[0] {
			t.Fatalf("agent %s does not share the compiled group", a)
		}
	}
	runChecks(t, b.String(), []check{{"botxxxb", "/p9999", false}, {"botxxxb", "/q", true}})
}

func TestEmptyGroupAppliesWithoutFallback(t *testing.T) {
	runChecks(t, "User-agent: *\nDisallow: /\n\nUser-agent: quiet\n", []check{
		{"quiet", "/x", true}, {"other", "/x", false},
	})
	// Empty because its only rule is empty.
	runChecks(t, "User-agent: *\nDisallow: /\n\nUser-agent: quiet\nDisallow:\n", []check{
		{"quiet", "/x", true},
	})
}

func TestNoPrefixMatchingOfAgents(t *testing.T) {
	runChecks(t, "User-agent: foo\nDisallow: /foo\n\nUser-agent: foobot-news\nDisallow: /news\n\nUser-agent: *\nDisallow: /star\n", []check{
		{"foobot", "/foo", true}, {"foobot", "/star", false}, // "foo" is not a prefix match for "foobot"
		{"foobot", "/news", true}, // nor "foobot-news" for "foobot"
		{"foobot-news", "/news", false}, {"foobot-news", "/foo", true},
		{"fo", "/foo", true}, {"fo", "/star", false},
	})
}

func TestStarOnlyWhenNoGroupMatches(t *testing.T) {
	runChecks(t, "User-agent: *\nDisallow: /private\n\nUser-agent: bot\nDisallow: /other\n", []check{
		{"bot", "/private", true}, {"bot", "/other", false},
		{"somebody", "/private", false}, {"somebody", "/other", true},
		{"*", "/private", false},
	})
	// No group at all: no rules apply.
	runChecks(t, "User-agent: bot\nDisallow: /\n", []check{{"somebody", "/x", true}})
}

func TestLongestMatchWins(t *testing.T) {
	file := "User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\nAllow: /a/b/c/d\n"
	runChecks(t, file, []check{
		{"x", "/a", false}, {"x", "/a/b", true}, {"x", "/a/b/c", false}, {"x", "/a/b/c/d", true},
		{"x", "/b", true},
	})
	// Order in the file does not matter.
	lines := []string{"Disallow: /a", "Allow: /a/b", "Disallow: /a/b/c", "Allow: /a/b/c/d"}
	slices.Reverse(lines)
	runChecks(t, "User-agent: *\n"+strings.Join(lines, "\n"), []check{
		{"x", "/a", false}, {"x", "/a/b", true}, {"x", "/a/b/c", false}, {"x", "/a/b/c/d", true},
	})
}

func TestLengthMeasuredOnRuleAsWritten(t *testing.T) {
	// "/private" (8 octets) beats "/*.html" (7) for /private.html, whatever
	// the matched span; temoto compares regexp lengths ("/.*\.html", 9).
	runChecks(t, "User-agent: *\nAllow: /*.html\nDisallow: /private\n", []check{
		{"x", "/private.html", false}, {"x", "/public.html", true},
	})
	// "/page*" (6) beats "/page" (5): the wildcard counts as written.
	runChecks(t, "User-agent: *\nDisallow: /page\nAllow: /page*\n", []check{{"x", "/page1", true}})
}

func TestAllowWinsTie(t *testing.T) {
	runChecks(t, "User-agent: *\nDisallow: /page\nAllow: /page\n", []check{{"x", "/page", true}})
	runChecks(t, "User-agent: *\nAllow: /page\nDisallow: /page\n", []check{{"x", "/page", true}})
	runChecks(t, "User-agent: *\nDisallow: /*.gif\nAllow: /a*gif\n", []check{{"x", "/a.gif", true}})
}

func TestWildcardsAnchoredAtStart(t *testing.T) {
	runChecks(t, "User-agent: *\nDisallow: /b\nDisallow: *.php$\nDisallow: /x*y$\nDisallow: /fish*.php\n", []check{
		{"x", "/a/b", true},  // no implicit leading wildcard
		{"x", "/b/a", false}, // prefix match
		{"x", "/index.php", false}, {"x", "/a/index.php", false}, {"x", "/index.php?q", true},
		{"x", "/xay", false}, {"x", "/xy", false}, {"x", "/xyz", true}, {"x", "/ay", true},
		{"x", "/fish.php", false}, {"x", "/fishheads/catfish.php?parameters", false}, {"x", "/Fish.PHP", true},
		{"x", "/a$b", true},
	})
	// '$' only anchors at the end of a pattern; elsewhere it is a literal.
	runChecks(t, "User-agent: *\nDisallow: /a$b\n", []check{
		{"x", "/a$b", false}, {"x", "/a$bc", false}, {"x", "/a", true},
	})
	// A pattern without a leading '/' is read as if it had one.
	runChecks(t, "User-agent: *\nDisallow: private\n", []check{{"x", "/private/x", false}})
}

func TestPercentEncodingNormalized(t *testing.T) {
	runChecks(t, "User-agent: *\nDisallow: /%62ar\nDisallow: /caf%c3%a9\nDisallow: /\u00fcber\nDisallow: /%7Euser\n", []check{
		{"x", "/bar", false}, {"x", "/%62ar", false}, {"x", "/%62%61r", false}, // %62 is b
		{"x", "/caf%C3%A9", false}, {"x", "/caf%c3%a9", false}, {"x", "/caf\u00e9", false}, // hex case
		{"x", "/%C3%BCber", false}, {"x", "/%c3%bcber", false}, // UTF-8 in the rule
		{"x", "/~user", false}, {"x", "/%7euser", false},
		{"x", "/car", true},
	})
	// A stray '%' is itself.
	runChecks(t, "User-agent: *\nDisallow: /100%\n", []check{{"x", "/100%25", false}, {"x", "/100%", false}, {"x", "/100", true}})
}

func TestRobotsTxtAlwaysAllowed(t *testing.T) {
	for _, r := range []*Rules{Parse(200, []byte("User-agent: *\nDisallow: /\n")), Parse(503, nil), DisallowAll()} {
		for _, target := range []string{"/robots.txt", "https://example.com/robots.txt", "/robots.txt?x=1"} {
			if !r.Allowed("bot", target) {
				t.Errorf("%v: Allowed(%q) = false", r, target)
			}
		}
		if r.Allowed("bot", "/robots.txt.bak") {
			t.Errorf("%v: /robots.txt.bak allowed", r)
		}
	}
}

func TestBOM(t *testing.T) {
	for _, bom := range []string{"\xEF\xBB\xBF", "\xEF\xBB", "\xEF", ""} {
		runChecks(t, bom+"User-agent: *\nDisallow: /x\n", []check{{"a", "/x", false}, {"a", "/y", true}})
	}
}

func TestWhitespaceAroundColon(t *testing.T) {
	for _, sep := range []string{":", " :", ": ", " : ", "\t:\t", "  :  "} {
		runChecks(t, " User-agent"+sep+"a \nDisallow"+sep+"/x\t\n", []check{{"a", "/x", false}, {"a", "/y", true}})
	}
}

func TestCommentsAnywhere(t *testing.T) {
	file := "# header\nUser-agent: a # the bot\n#Disallow: /commented\nDisallow: /x#fragment-like\nDisallow: /y # trailing\nAllow: # nothing\n"
	runChecks(t, file, []check{
		{"a", "/x", false}, {"a", "/xyz", false}, {"a", "/y", false},
		{"a", "/commented", true}, {"a", "/z", true},
	})
}

func TestLineEndings(t *testing.T) {
	for _, eol := range []string{"\n", "\r", "\r\n"} {
		file := strings.Join([]string{"User-agent: a", "Disallow: /x", "", "User-agent: b", "Disallow: /y"}, eol)
		runChecks(t, file, []check{{"a", "/x", false}, {"a", "/y", true}, {"b", "/y", false}, {"b", "/x", true}})
	}
	// Mixed.
	runChecks(t, "User-agent: a\r\nDisallow: /x\rDisallow: /y\nDisallow: /z", []check{{"a", "/x", false}, {"a", "/y", false}, {"a", "/z", false}})
}

func TestLinesBeforeFirstUserAgentIgnored(t *testing.T) {
	runChecks(t, "Disallow: /x\nAllow: /y\nCrawl-delay: 9\n\nUser-agent: a\nDisallow: /y\n", []check{
		{"a", "/x", true}, {"a", "/y", false}, {"b", "/x", true},
	})
	if d := Parse(200, []byte("Crawl-delay: 9\nUser-agent: a\nDisallow: /")).CrawlDelay("a"); d != 0 {
		t.Errorf("CrawlDelay before user-agent applied: %v", d)
	}
}

func TestMalformedLinesSkipped(t *testing.T) {
	file := "User-agent: a\n" +
		"this line has no colon\n" +
		"Disalow: /typo\n" +
		"Crawl-delay: soon\n" +
		"Crawl-delay: -1\n" +
		"Crawl-delay: NaN\n" +
		"Crawl-delay: +Inf\n" +
		": /no-key\n" +
		"\x00\xff\xfe: garbage\n" +
		"Disallow: /x\n" +
		"Crawl-delay: 1.5\n" +
		"User-agent\n" +
		"Disallow: /y\n"
	runChecks(t, file, []check{{"a", "/x", false}, {"a", "/y", false}, {"a", "/typo", true}, {"a", "/no-key", true}})
	if d := Parse(200, []byte(file)).CrawlDelay("a"); d != 1500*time.Millisecond {
		t.Errorf("CrawlDelay = %v, want 1.5s", d)
	}
	for _, bad := range []string{"soon", "-1", "NaN", "+Inf", "1e400", ""} {
		if d := Parse(200, []byte("User-agent: a\nCrawl-delay: "+bad+"\n")).CrawlDelay("a"); d != 0 {
			t.Errorf("Crawl-delay %q = %v, want skipped", bad, d)
		}
	}
}

func TestParsesAtLeast500KiB(t *testing.T) {
	b := []byte("User-agent: *\n")
	for i := 0; len(b) < MaxSize-100; i++ {
		b = append(b, "Disallow: /dir"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "/\n"...)
	}
	b = append(b, "Disallow: /last\n"...)
	if len(b) < 500*1024-100 {
		t.Fatalf("test file is only %d bytes", len(b))
	}
	// A line straddling the limit is dropped whole: cut, it would allow
	// more than it says ("/cut" instead of "/cut-in-half...").
	b = append(b, strings.Repeat("#", MaxSize-len(b)-5)+"\nDisallow: /cut-in-half-allow-too-much\n"...)
	b = append(b, "Disallow: /beyond\n"...)
	r := Parse(200, b)
	for _, c := range []check{{"x", "/dir0/", false}, {"x", "/dir20000/", false}, {"x", "/last", false}, {"x", "/beyond", true}, {"x", "/cut", true}} {
		if got := r.Allowed(c.agent, c.target); got != c.want {
			t.Errorf("Allowed(%q) = %v, want %v", c.target, got, c.want)
		}
	}
	if g := r.group("x"); len(g[0].rules) < 24000 {
		t.Errorf("%d rules parsed", len(g[0].rules))
	}
}

// A line that ends exactly at the limit is complete and kept.
func TestLimitOnLineEnd(t *testing.T) {
	head := "User-agent: *\n"
	rule := "Disallow: /edge"
	pad := strings.Repeat("#", MaxSize-len(head)-len(rule)-1) + "\n"
	for _, tail := range []string{"\n", "\r\n", "\r"} {
		r := Parse(200, []byte(head+pad+rule+tail+"Disallow: /beyond\n"))
		if r.Allowed("x", "/edge") || !r.Allowed("x", "/beyond") {
			t.Errorf("tail %q: /edge allowed %v, /beyond allowed %v", tail, r.Allowed("x", "/edge"), r.Allowed("x", "/beyond"))
		}
	}
	// One byte more and the line straddles the limit: dropped.
	r := Parse(200, []byte(head+pad+rule+"x\n"))
	if !r.Allowed("x", "/edgex") {
		t.Error("straddling line applied")
	}
}

func TestStatus(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /x\n")
	tests := []struct {
		status int
		want   bool // Allowed("/x")
		wantY  bool // Allowed("/y")
	}{
		{200, false, true}, {204, false, true}, {299, false, true},
		{301, true, true}, {399, true, true}, // redirects not followable: unavailable
		{400, true, true}, {401, true, true}, {403, true, true}, {404, true, true}, {410, true, true}, {499, true, true},
		{429, false, false}, // treated as 5xx
		{500, false, false}, {503, false, false}, {599, false, false},
		{0, false, false}, {100, false, false}, {600, false, false}, {-1, false, false},
	}
	for _, tt := range tests {
		r := Parse(tt.status, body)
		if got := r.Allowed("bot", "/x"); got != tt.want {
			t.Errorf("status %d: Allowed(/x) = %v, want %v", tt.status, got, tt.want)
		}
		if got := r.Allowed("bot", "/y"); got != tt.wantY {
			t.Errorf("status %d: Allowed(/y) = %v, want %v", tt.status, got, tt.wantY)
		}
	}
}

func TestCrawlDelay(t *testing.T) {
	r := Parse(200, []byte("User-agent: *\nCrawl-delay: 3\nDisallow: /tmp\n\nUser-agent: slow\nCrawl-delay: 0.1\nCrawl-delay: 0.25\nDisallow: /x\n\nUser-agent: huge\nCrawl-delay: 1e300\n"))
	tests := []struct {
		agent string
		want  time.Duration
	}{{"any", 3 * time.Second}, {"slow", 250 * time.Millisecond}, {"SLOW/2", 250 * time.Millisecond}, {"huge", maxCrawlDelay}}
	for _, tt := range tests {
		if got := r.CrawlDelay(tt.agent); got != tt.want {
			t.Errorf("CrawlDelay(%q) = %v, want %v", tt.agent, got, tt.want)
		}
	}
	if d := Parse(503, nil).CrawlDelay("x"); d != 0 {
		t.Errorf("unreachable CrawlDelay = %v", d)
	}
}

func TestCrawlDelayDoesNotSplitGroups(t *testing.T) {
	file := "User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /x\n"
	runChecks(t, file, []check{{"a", "/x", false}, {"b", "/x", false}})
	r := Parse(200, []byte(file))
	if da, db := r.CrawlDelay("a"), r.CrawlDelay("b"); da != 5*time.Second || db != 5*time.Second {
		t.Errorf("CrawlDelay a=%v b=%v, want 5s for both", da, db)
	}
}

func TestSitemaps(t *testing.T) {
	r := Parse(200, []byte("Sitemap: https://example.com/a.xml\nUser-agent: *\nDisallow: /\nsitemap:https://example.com/b.xml # c\nSITEMAP :\n"))
	want := []string{"https://example.com/a.xml", "https://example.com/b.xml"}
	if got := r.Sitemaps(); !slices.Equal(got, want) {
		t.Errorf("Sitemaps = %q, want %q", got, want)
	}
	if got := Parse(404, nil).Sitemaps(); got != nil {
		t.Errorf("404 Sitemaps = %q", got)
	}
}

func TestAllowedTargets(t *testing.T) {
	r := Parse(200, []byte("User-agent: *\nDisallow: /$\nDisallow: /a?b\nDisallow: /*?q=\n"))
	tests := []struct {
		target string
		want   bool
	}{
		{"https://example.com", false}, {"https://example.com/", false}, {"http://example.com?x", true},
		{"http://example.com:8080/#frag", false}, {"//example.com/", true}, {"/", false}, {"", false},
		{"/a?b", false}, {"/a?c", true}, {"https://h/a?b=1", false}, {"/a#?b", true},
		{"/x?q=1", false}, {"/x?r=1", true}, {"https://u:p@h/a?b", false},
		{"mailto:x", true}, {"http://h#/a?b", false}, {"http://h?a#x", true}, {"/a?b#", false}, {"/%61?b#c", false},
		{"a?b", false}, {"#x", false},
		// A target starting with "/" is a path, "//" too (http://h//x/a?b
		// has the path //x/a): not a scheme-relative URL.
		{"//x/a?b", true}, {"//x?q=1", false},
		// A scheme is a letter, then letters, digits, '+', '-', '.'.
		{"h+s-1.x://h/a?b", false}, {"[x://h/a?b", true}, {"1x://h/a?b", true},
	}
	for _, tt := range tests {
		if got := r.Allowed("bot", tt.target); got != tt.want {
			t.Errorf("Allowed(%q) = %v, want %v", tt.target, got, tt.want)
		}
	}
}

func TestAllowedDoesNotAllocate(t *testing.T) {
	r := Parse(200, hundredRules())
	small := Parse(200, []byte("User-agent: *\nDisallow: /a*b$\n"))
	for _, target := range []string{"/", "/section01/private/x", "https://example.com/caf%c3%a9?q=%7E", "/über/*$", "http://h?x", "/" + strings.Repeat("%41", 150)} {
		for _, agent := range []string{"ExampleBot/1.0", "otherbot", "OTHERBOT", "*", ""} {
			if n := testing.AllocsPerRun(20, func() { r.Allowed(agent, target); small.Allowed(agent, target) }); n != 0 {
				t.Errorf("Allowed(%q, %q): %v allocations", agent, target, n)
			}
		}
	}
}

func TestNilAndString(t *testing.T) {
	var r *Rules
	if !r.Allowed("a", "/") || r.CrawlDelay("a") != 0 || r.Sitemaps() != nil {
		t.Error("nil Rules is not allow-all")
	}
	for _, tt := range []struct {
		r    *Rules
		want string
	}{{AllowAll(), "robots: allow all"}, {DisallowAll(), "robots: disallow all"}, {Parse(200, []byte("User-agent: a\nUser-agent: b\nSitemap: s")), "robots: 2 agents, 1 sitemaps"}} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("String = %q, want %q", got, tt.want)
		}
	}
}
