package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit"
)

// hostRuleFlags is the repeatable -host-rule flag: one crawlkit.HostRule
// per value, "MATCH[,delay=DURATION][,max-pages=N][,max-domain-pages=N]",
// e.g. "docs.example.com,delay=100ms" or ".example.com,max-domain-pages=500000".
type hostRuleFlags []string

func (h *hostRuleFlags) String() string { return strings.Join(*h, " ") }

// Set checks one value and keeps it.
func (h *hostRuleFlags) Set(v string) error {
	if _, err := parseHostRule(v); err != nil {
		return err
	}
	*h = append(*h, v)
	return nil
}

// rules returns the parsed rules.
func (h hostRuleFlags) rules() []crawlkit.HostRule {
	var rs []crawlkit.HostRule
	for _, v := range h {
		r, _ := parseHostRule(v) // checked by Set or by check
		rs = append(rs, r)
	}
	return rs
}

// check validates rules restored from saved settings, and the set as a
// whole (two rules for one name).
func (h hostRuleFlags) check() error {
	for _, v := range h {
		if _, err := parseHostRule(v); err != nil {
			return usageError{fmt.Sprintf("-host-rule %q: %v", v, err)}
		}
	}
	seen := map[string]bool{}
	for _, r := range h.rules() {
		if seen[r.Match] {
			return usageError{fmt.Sprintf("-host-rule: two rules for %s", r.Match)}
		}
		seen[r.Match] = true
	}
	return nil
}

// parseHostRule parses one -host-rule value.
func parseHostRule(v string) (crawlkit.HostRule, error) {
	parts := strings.Split(v, ",")
	r := crawlkit.HostRule{Match: strings.TrimSpace(parts[0])}
	if r.Match == "" {
		return r, fmt.Errorf("want HOST or .DOMAIN first, then delay=, max-pages=, max-domain-pages=")
	}
	if err := validRule(r); err != nil {
		return r, err
	}
	for _, p := range parts[1:] {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			return r, fmt.Errorf("%q: want key=value", p)
		}
		switch k {
		case "delay":
			d, err := time.ParseDuration(val)
			if err != nil || d < 0 {
				return r, fmt.Errorf("delay=%s: want a duration ≥ 0 like 500ms", val)
			}
			r.MinDelay = d
			if d == 0 {
				r.MinDelay = -1 // no least gap for this host
			}
		case "max-pages", "max-domain-pages":
			n, err := strconv.Atoi(val)
			if err != nil || n < -1 || n == 0 {
				return r, fmt.Errorf("%s=%s: want a positive number, or -1 for no limit", k, val)
			}
			if k == "max-pages" {
				r.MaxPages = n
			} else {
				r.MaxDomainPages = n
			}
		default:
			return r, fmt.Errorf("unknown key %q: want delay, max-pages or max-domain-pages", k)
		}
	}
	return r, validRule(r)
}

// validRule is HostRule.Validate without the library's prefix: the
// message is the crawler's.
func validRule(r crawlkit.HostRule) error {
	if err := r.Validate(); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "crawlkit: "))
	}
	return nil
}
