package robots

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// hundredRules is a 100-rule file shaped like large real ones: a "*" group of
// directory prefixes, some wildcards and anchors, and a group for another bot.
func hundredRules() []byte {
	var b strings.Builder
	b.WriteString("User-agent: otherbot\nDisallow: /\n\nUser-agent: *\n")
	for i := 0; i < 80; i++ {
		fmt.Fprintf(&b, "Disallow: /section%02d/private/\n", i)
	}
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "Allow: /section%02d/private/public-*.html$\n", i)
	}
	for i := 0; i < 9; i++ {
		fmt.Fprintf(&b, "Disallow: /*.ext%d$\n", i)
	}
	b.WriteString("Sitemap: https://example.com/sitemap.xml\n")
	return []byte(b.String())
}

func BenchmarkAllowed(b *testing.B) {
	r := Parse(200, hundredRules())
	if n := len(r.star[0].rules) + len(r.groups["otherbot"][0].rules); n != 100 {
		b.Fatalf("%d rules", n)
	}
	targets := []struct{ name, target string }{
		{"miss", "/articles/2024/05/some-long-article-name.html?page=2"},
		{"prefix", "/section42/private/file.html"},
		{"wildcard", "/section03/private/public-page.html"},
		{"url", "https://www.example.com/section42/index.html"},
		{"escaped", "/section42/caf%C3%A9/%7Euser"},
	}
	for _, tt := range targets {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tt.target)))
			cpu := cpuNanos()
			for b.Loop() {
				r.Allowed("ExampleBot/1.0", tt.target)
			}
			b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkAllowedSmallFile is the common case: a handful of rules, matched
// without the index.
func BenchmarkAllowedSmallFile(b *testing.B) {
	r := Parse(200, []byte("User-agent: *\nDisallow: /admin/\nDisallow: /cart\nDisallow: /*?sessionid=\nAllow: /admin/public/\n"))
	const target = "/products/shoes/red-sneakers?size=42"
	b.ReportAllocs()
	cpu := cpuNanos()
	for b.Loop() {
		r.Allowed("ExampleBot/1.0", target)
	}
	b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
}

func BenchmarkParse(b *testing.B) {
	body := hundredRules()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		Parse(200, body)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(100*b.N), "ns/rule")
}

func BenchmarkCacheAllowedHit(b *testing.B) {
	body := hundredRules()
	c := NewCache(&Options{Fetch: func(context.Context, string) (*Response, error) {
		return &Response{Status: 200, Body: body}, nil
	}})
	defer c.Close()
	u, _ := url.Parse("https://example.com/articles/2024/some-article.html")
	ctx := context.Background()
	if _, err := c.Allowed(ctx, u); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := cpuNanos()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Allowed(ctx, u)
		}
	})
	b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
}
