package frontier_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/crawlkit/crawlkit/frontier"
	"github.com/crawlkit/crawlkit/frontier/frontiertest"
)

// accept and reject build the lines of a filter's table.
func accept(u string) frontiertest.Case { return frontiertest.Case{URL: u} }

func reject(u string, r frontier.Reason) frontiertest.Case {
	return frontiertest.Case{URL: u, Reject: true, Reason: r}
}

// TestFilterConformance runs the URLFilter suite on every filter of the
// package.
func TestFilterConformance(t *testing.T) {
	news := regexp.MustCompile(`/news/`)
	login := regexp.MustCompile(`/login\b`)
	tests := []struct {
		name  string
		new   func() frontier.URLFilter
		cases frontiertest.Cases
	}{
		{"Schemes", func() frontier.URLFilter { return frontier.Schemes("http", "https") }, frontiertest.Cases{
			accept("http://a.test/"), accept("HTTPS://a.test/x"),
			reject("ftp://a.test/", frontier.ReasonScheme), reject("mailto:x@a.test", frontier.ReasonScheme),
			reject("//a.test/", frontier.ReasonScheme),
		}},
		{"Domains", func() frontier.URLFilter {
			return frontier.Domains([]string{"example.test", "b.test"}, []string{"ads.example.test"})
		}, frontiertest.Cases{
			accept("http://example.test/"), accept("http://www.EXAMPLE.test:8080/"), accept("http://b.test/"),
			reject("http://badexample.test/", frontier.ReasonDomain),
			reject("http://x.ads.example.test/", frontier.ReasonDomain),
			reject("http://[::1]/", frontier.ReasonDomain),
		}},
		{"Domains/exclude-only", func() frontier.URLFilter { return frontier.Domains(nil, []string{".ads.test"}) }, frontiertest.Cases{
			accept("http://a.test/"), accept("http:///nohost"), reject("http://x.ads.test/", frontier.ReasonDomain),
		}},
		{"Patterns", func() frontier.URLFilter {
			return frontier.Patterns([]*regexp.Regexp{news}, []*regexp.Regexp{login})
		}, frontiertest.Cases{
			accept("http://a.test/news/1"),
			reject("http://a.test/news/login", frontier.ReasonPattern),
			reject("http://a.test/sport/1", frontier.ReasonPattern),
		}},
		{"Patterns/exclude-only", func() frontier.URLFilter { return frontier.Patterns(nil, []*regexp.Regexp{login}) }, frontiertest.Cases{
			accept("http://a.test/x"), reject("http://a.test/login?next=/", frontier.ReasonPattern),
		}},
		{"MaxLength", func() frontier.URLFilter { return frontier.MaxLength(100) }, frontiertest.Cases{
			accept("http://a.test/" + strings.Repeat("x", 86)),
			reject("http://a.test/"+strings.Repeat("x", 87), frontier.ReasonLength),
			reject("http://a.test/"+strings.Repeat("%C3%A9", 20), frontier.ReasonLength),
			accept("http://a.test/?" + strings.Repeat("q", 80)),
		}},
		{"MaxLength/0", func() frontier.URLFilter { return frontier.MaxLength(0) }, frontiertest.Cases{
			reject("http://a.test/", frontier.ReasonLength),
		}},
		{"MaxPathDepth", func() frontier.URLFilter { return frontier.MaxPathDepth(3) }, frontiertest.Cases{
			accept("http://a.test/"), accept("http://a.test/a/b/c/"), accept("http://a.test//a//b//c"),
			reject("http://a.test/a/b/c/d", frontier.ReasonPathDepth),
		}},
		{"RepeatedSegments", func() frontier.URLFilter { return frontier.RepeatedSegments(3) }, frontiertest.Cases{
			accept("http://a.test/a/b/a/b"), accept("http://a.test/"),
			reject("http://a.test/a/b/a/b/a", frontier.ReasonRepeatedSegment),
			reject("http://a.test/cal/x/cal/y/cal/z", frontier.ReasonRepeatedSegment),
		}},
		{"MaxQueryParams", func() frontier.URLFilter { return frontier.MaxQueryParams(2) }, frontiertest.Cases{
			accept("http://a.test/?a=1&b=2"), accept("http://a.test/?a=1&&b=2&"), accept("http://a.test/"),
			reject("http://a.test/?a=1&b=2&c=3", frontier.ReasonQueryParams),
		}},
		{"Extensions", func() frontier.URLFilter { return frontier.Extensions(nil) }, frontiertest.Cases{
			accept("http://a.test/index.html"), accept("http://a.test/dir/"), accept("http://a.test/x.jpg/"),
			reject("http://a.test/p/PHOTO.JPG", frontier.ReasonExtension),
			reject("http://a.test/app.js?v=2", frontier.ReasonExtension),
		}},
		{"Extensions/custom", func() frontier.URLFilter { return frontier.Extensions([]string{".PDF"}) }, frontiertest.Cases{
			accept("http://a.test/x.jpg"), reject("http://a.test/x.pdf", frontier.ReasonExtension),
		}},
		{"HostBudget", func() frontier.URLFilter { return frontier.NewHostBudget(2) }, frontiertest.Cases{
			accept("http://a.test/1"), accept("http://A.test/2"), reject("http://a.test/3", frontier.ReasonHostBudget),
			accept("http://b.test/1"), reject("http://a.test:8080/4", frontier.ReasonHostBudget),
		}},
		{"HostBudget/zero", func() frontier.URLFilter { return &frontier.HostBudget{} }, frontiertest.Cases{
			reject("http://a.test/", frontier.ReasonHostBudget),
		}},
		{"Chain", func() frontier.URLFilter {
			return frontier.Chain{frontier.Schemes("http"), frontier.MaxPathDepth(1), frontier.NewHostBudget(1)}
		}, frontiertest.Cases{
			reject("ftp://a.test/", frontier.ReasonScheme), accept("http://a.test/x"),
			reject("http://b.test/x/y", frontier.ReasonPathDepth), reject("http://a.test/y", frontier.ReasonHostBudget),
		}},
		{"Chain/empty", func() frontier.URLFilter { return frontier.Chain{} }, frontiertest.Cases{
			accept("gopher://a.test/"),
		}},
		{"DefaultFilters", func() frontier.URLFilter { return frontier.DefaultFilters() }, frontiertest.Cases{
			accept("https://a.test/news/today.html?id=3"),
			reject("ftp://a.test/", frontier.ReasonScheme),
			reject("http://a.test/"+strings.Repeat("x", 2100), frontier.ReasonLength),
			reject("http://a.test/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17", frontier.ReasonPathDepth),
			reject("http://a.test/a/a/a", frontier.ReasonRepeatedSegment),
			reject("http://a.test/?a&b&c&d&e&f&g&h&i", frontier.ReasonQueryParams),
			reject("http://a.test/x.zip", frontier.ReasonExtension),
		}},
		{"FilterFunc", func() frontier.URLFilter {
			return frontier.FilterFunc(func(u *url.URL) error {
				if strings.Contains(u.RawQuery, "session") {
					return &frontier.Rejection{Reason: frontier.ReasonOther, URL: u.String(), Detail: "session id"}
				}
				return nil
			})
		}, frontiertest.Cases{
			accept("http://a.test/"), reject("http://a.test/?session=1", frontier.ReasonOther),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { frontiertest.RunFilter(t, tt.new, tt.cases) })
	}
}
