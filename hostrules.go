package crawlkit

import (
	"fmt"
	"strings"
	"time"
)

// HostRule overrides the politeness gap and the budgets for the hosts it
// matches (Config.HostRules): a site of one's own crawled faster, a
// fragile one more gently, a large one allowed more pages.
type HostRule struct {
	// Match is a host name ("docs.example.com", the host alone) or a
	// domain with a leading dot (".example.com": example.com and every
	// host under it). Lower case, no port, no scheme. When several rules
	// match a host, the most specific wins: the host's own rule, then
	// the longest domain.
	Match string
	// MinDelay, if not zero, replaces Config.MinDelay for these hosts
	// (negative means none). The gap still grows with the fetch time
	// (DelayFactor) and never goes below the host's robots.txt
	// Crawl-delay or a Retry-After.
	MinDelay time.Duration
	// MaxPages, if not zero, replaces Config.MaxPagesPerHost for each of
	// these hosts (negative means no limit).
	MaxPages int
	// MaxDomainPages, if not zero, replaces Config.MaxPagesPerDomain for
	// the registrable domains of these hosts (negative means no limit).
	// Only a rule of a whole domain (".example.com") may set it.
	MaxDomainPages int
}

// Validate reports whether r can be used: Match a lower-case host name
// or a domain with a leading dot, MaxDomainPages only on a domain rule.
func (r HostRule) Validate() error {
	name, isDomain := strings.CutPrefix(r.Match, ".")
	switch {
	case name == "" || name != strings.ToLower(name) || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") ||
		strings.ContainsAny(name, ":/ \t") || strings.Contains(name, ".."):
		return fmt.Errorf("crawlkit: host rule %q: want a lower-case host name, or a domain with a leading dot", r.Match)
	case r.MaxDomainPages != 0 && !isDomain:
		return fmt.Errorf("crawlkit: host rule %q: MaxDomainPages needs a domain rule (\".%s\")", r.Match, name)
	}
	return nil
}

// hostRules finds the rule of a host: exact names, then domains from the
// longest. O(labels of the host) map lookups.
type hostRules struct {
	exact  map[string]*HostRule
	domain map[string]*HostRule // without the leading dot
}

// newHostRules validates rules and indexes them.
func newHostRules(rules []HostRule) (*hostRules, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	r := &hostRules{exact: map[string]*HostRule{}, domain: map[string]*HostRule{}}
	for i := range rules {
		h := &rules[i]
		if err := h.Validate(); err != nil {
			return nil, fmt.Errorf("HostRules[%d]: %s", i, strings.TrimPrefix(err.Error(), "crawlkit: "))
		}
		name, isDomain := strings.CutPrefix(h.Match, ".")
		set := r.exact
		if isDomain {
			set = r.domain
		}
		if _, dup := set[name]; dup {
			return nil, fmt.Errorf("HostRules[%d]: a second rule for %q", i, h.Match)
		}
		set[name] = h
	}
	return r, nil
}

// of returns the rule for host (a frontier host key: a name, with its
// port when it is not the scheme's), or nil. Safe on a nil receiver.
func (r *hostRules) of(host string) *HostRule {
	if r == nil {
		return nil
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host = host[:i]
	}
	if h := r.exact[host]; h != nil {
		return h
	}
	for name := host; ; {
		if h := r.domain[name]; h != nil {
			return h
		}
		i := strings.IndexByte(name, '.')
		if i < 0 {
			return nil
		}
		name = name[i+1:]
	}
}

// hostBudget returns the page budget of host: its rule's, else
// Config.MaxPagesPerHost (≤ 0: no limit).
func (c *Crawler) hostBudget(host string) int {
	if h := c.hostRules.of(host); h != nil && h.MaxPages != 0 {
		return h.MaxPages
	}
	return c.cfg.MaxPagesPerHost
}

// domainBudget returns the page budget of host's registrable domain.
func (c *Crawler) domainBudget(host string) int {
	if h := c.hostRules.of(host); h != nil && h.MaxDomainPages != 0 {
		return h.MaxDomainPages
	}
	return c.cfg.MaxPagesPerDomain
}

// minDelay returns the least gap of host: its rule's, else 0 (the
// frontier's own, Config.MinDelay); negative means none.
func (c *Crawler) minDelay(host string) time.Duration {
	if h := c.hostRules.of(host); h != nil {
		return h.MinDelay
	}
	return 0
}
