package robots

import (
	"testing"

	"github.com/temoto/robotstxt"
)

// TestTemotoDeviations is the evidence behind the package doc's account of
// github.com/temoto/robotstxt (v1.1.2): for each RFC 9309 behaviour listed
// there, the file where temoto gives a different answer (or rejects the whole
// file), and the answer this package gives. If temoto is upgraded and a case
// starts to agree, this test says so, and the doc must be revisited.
func TestTemotoDeviations(t *testing.T) {
	tests := []struct {
		name         string
		file         string
		agent, path  string
		want         bool // RFC 9309
		temotoFailed bool // temoto rejects the whole file
	}{
		{name: "agent matched by prefix", file: "User-agent: foo\nDisallow: /\n", agent: "foobot", path: "/x", want: true},
		{name: "empty group falls back to *", file: "User-agent: *\nDisallow: /\n\nUser-agent: quxbot\n", agent: "quxbot", path: "/x", want: true},
		{name: "first rule wins a tie", file: "User-agent: *\nDisallow: /page\nAllow: /page\n", agent: "a", path: "/page", want: true},
		{name: "wildcard length is the regexp's", file: "User-agent: *\nAllow: /*.html\nDisallow: /private\n", agent: "a", path: "/private.html", want: false},
		{name: "percent-encoding not normalised", file: "User-agent: *\nDisallow: /%62ar\n", agent: "a", path: "/bar", want: false},
		{name: "UTF-8 rule vs encoded URL", file: "User-agent: *\nDisallow: /\u00fcber\n", agent: "a", path: "/%C3%BCber", want: false},
		{name: "comment inside a value", file: "User-agent: *\nDisallow: /x#comment\n", agent: "a", path: "/x", want: false},
		{name: "whitespace before colon", file: "User-agent : *\nDisallow : /x\n", agent: "a", path: "/x", want: false},
		{name: "'$' inside a pattern", file: "User-agent: *\nDisallow: /a$b\n", agent: "a", path: "/a$b", want: false},
		{name: "/robots.txt disallowed", file: "User-agent: *\nDisallow: /\n", agent: "a", path: "/robots.txt", want: true},
		{name: "partial BOM", file: "\xEF\xBBUser-agent: *\nDisallow: /x\n", agent: "a", path: "/x", want: false, temotoFailed: true},
		{name: "rule before user-agent rejects file", file: "Disallow: /y\nUser-agent: *\nDisallow: /x\n", agent: "a", path: "/x", want: false, temotoFailed: true},
		{name: "bad crawl-delay rejects file", file: "User-agent: *\nCrawl-delay: soon\nDisallow: /x\n", agent: "a", path: "/x", want: false, temotoFailed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(200, []byte(tt.file)).Allowed(tt.agent, tt.path); got != tt.want {
				t.Errorf("Allowed = %v, want %v", got, tt.want)
			}
			data, err := robotstxt.FromString(tt.file)
			if tt.temotoFailed {
				if err == nil {
					t.Errorf("temoto now accepts the file (TestAgent = %v): revisit the package doc", data.TestAgent(tt.path, tt.agent))
				}
				return
			}
			if err != nil {
				t.Fatalf("temoto: %v", err)
			}
			if got := data.TestAgent(tt.path, tt.agent); got == tt.want {
				t.Errorf("temoto now agrees with RFC 9309 (%v): revisit the package doc", got)
			}
		})
	}
	// A 3xx is an error for temoto; the RFC defines it.
	if _, err := robotstxt.FromStatusAndBytes(301, nil); err == nil {
		t.Error("temoto now accepts a 3xx status")
	}
}

// BenchmarkTemotoTestAgent times temoto's answer on the file and paths of
// BenchmarkAllowed, for comparison (its answers differ where the doc says).
func BenchmarkTemotoTestAgent(b *testing.B) {
	data, err := robotstxt.FromBytes(hundredRules())
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range []string{"/articles/2024/05/some-long-article-name.html?page=2", "/section42/private/file.html"} {
		b.Run(path[:9], func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuNanos()
			for b.Loop() {
				data.TestAgent(path, "ExampleBot/1.0")
			}
			b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
