package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit"
	"github.com/crawlkit/crawlkit/fetch"
	"github.com/crawlkit/crawlkit/fetch/render"
)

// renderPolicy parses -render: off, adaptive, always, hosts=H[,H...] or
// pattern=REGEXP. It returns nil for off.
func renderPolicy(s string) (render.Policy, error) {
	switch {
	case s == "" || s == "off":
		return nil, nil
	case s == "adaptive":
		return render.Adaptive{}, nil
	case s == "always":
		return render.Always, nil
	case strings.HasPrefix(s, "hosts="):
		var hosts []string
		for _, h := range strings.Split(strings.TrimPrefix(s, "hosts="), ",") {
			if h = strings.TrimSpace(h); h != "" {
				hosts = append(hosts, h)
			}
		}
		if len(hosts) == 0 {
			return nil, fmt.Errorf("-render hosts= names no host")
		}
		return render.Hosts(hosts...), nil
	case strings.HasPrefix(s, "pattern="):
		re, err := regexp.Compile(strings.TrimPrefix(s, "pattern="))
		if err != nil {
			return nil, fmt.Errorf("-render pattern: %w", err)
		}
		return render.Pattern(re), nil
	}
	return nil, fmt.Errorf("-render %q: want off, adaptive, always, hosts=H,H... or pattern=REGEXP", s)
}

// renderer is the rendering fetcher a crawl with -render wraps its
// fetcher in, once the crawl has made it.
type renderer struct{ f *render.Fetcher }

// setRender makes cfg render the pages -render picks, in headless
// Chromium, each request of the browser admitted by the crawl (robots.txt,
// politeness).
func setRender(cfg *crawlkit.Config, o *options) (*renderer, error) {
	policy, err := renderPolicy(o.Render)
	if err != nil || policy == nil {
		return nil, err
	}
	r := &renderer{}
	cfg.WrapFetcher = func(static fetch.Fetcher) (fetch.Fetcher, error) {
		f, err := render.New(&render.Options{Static: static, Policy: policy, Browser: o.Chromium,
			Tabs: o.RenderTabs, PageTimeout: time.Duration(o.RenderTimeout)})
		if err != nil {
			return nil, fmt.Errorf("-render: %w (install Chromium, e.g. apt-get install chromium, or name it with -chromium)", err)
		}
		r.f = f
		return f, nil
	}
	cfg.Subrequests = crawlkit.SubrequestOptions{ThirdParty: o.ThirdParty}
	return r, nil
}

// report prints what rendering did.
func (r *renderer) report(w io.Writer, s crawlkit.Stats) {
	if r == nil || r.f == nil {
		return
	}
	rs := r.f.Stats()
	fmt.Fprintf(w, "rendering: %d pages rendered in Chromium (%d left static by the policy, %d timed out, %d fell back to the fetched page), %d browser requests admitted, %d refused (robots.txt, other hosts), %d answered from the cache\n",
		rs.Rendered, rs.PolicySkip, rs.Timeouts, rs.Fallbacks, s.Subrequests, s.SubrequestsRefused, rs.CacheHits)
}
