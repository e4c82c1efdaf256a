package dust

import (
	"slices"
	"strings"
	"sync/atomic"
)

// active is the part of an active rule that Rewrite reads and counts,
// shared by every snapshot the rule is in.
type active struct {
	id        RuleID
	c         *cand // read under Learner.mu only
	rewritten atomic.Uint64
	full      atomic.Bool // the rule's parking lot is full: it rewrites no new URL
	probation atomic.Bool // support below Options.Probation: every rewrite is validated
}

// snapshot is the immutable set of active rules that Rewrite applies,
// replaced whole (Learner.snap) whenever a rule is activated or
// withdrawn.
type snapshot struct {
	hosts map[string]*hostRules // by host; absent: no rule applies
	every uint64                // Options.ValidateEvery; 0: never
	// groups lists the hosts of each alias group of two or more hosts,
	// by each of its hosts; the learner checks a group's rules on all
	// of them.
	groups map[string][]string
	inert  map[*cand]bool // active rules the snapshot leaves out (conflicts)
}

// hostRules are the rules for the URLs of one host.
type hostRules struct {
	to     string    // the canonical host of the host's alias group; "" for itself
	alias  []*active // the alias rules of the group
	prefix []prefixRule
	doc    []nameRule
	param  []nameRule
	query  []nameRule // name is the path
}

type prefixRule struct {
	from, to string
	a        *active
	host     string // the host the rule was learned on
}

type nameRule struct {
	name string
	a    *active
	host string
}

// build makes the snapshot of the active rules acts, which are in order
// of activation. A rule that conflicts with an earlier one is left out
// and reported in inert, so that rewriting stays idempotent: an alias
// between hosts already in one group, a prefix nested in (or nesting)
// another prefix of the group, a second rule for the same name.
func build(acts []*cand, every int) *snapshot {
	s := &snapshot{hosts: make(map[string]*hostRules), every: uint64(max(every, 0))}
	parent := make(map[string]string)
	find := func(h string) string {
		for {
			p, ok := parent[h]
			if !ok {
				return h
			}
			h = p
		}
	}
	var aliases []*cand
	for _, c := range acts {
		if c.kind != HostAlias {
			continue
		}
		rf, rt := find(c.from), find(c.to)
		if rf == rt {
			s.inert = setInert(s.inert, c)
			continue
		}
		parent[rf] = rt // the alias's group joins the group of the host it maps to
		aliases = append(aliases, c)
	}
	groups := make(map[string]*hostRules)
	group := func(host string) *hostRules {
		root := find(host)
		g := groups[root]
		if g == nil {
			g = new(hostRules)
			groups[root] = g
		}
		return g
	}
	members := make(map[string][]string)
	for _, c := range aliases {
		g := group(c.from)
		g.alias = append(g.alias, c.act)
		for _, h := range [2]string{c.from, c.to} {
			root := find(h)
			if !slices.Contains(members[root], h) {
				members[root] = append(members[root], h)
			}
		}
	}
	for _, c := range acts {
		if c.kind == HostAlias {
			continue
		}
		g := group(c.host)
		if !g.add(c) {
			s.inert = setInert(s.inert, c)
		}
	}
	for root, g := range groups {
		if len(g.prefix)+len(g.doc)+len(g.param)+len(g.query) > 0 {
			s.hosts[root] = g
		}
		for _, h := range members[root] {
			if h != root {
				m := *g
				m.to = root
				s.hosts[h] = &m
			}
		}
	}
	for root, hs := range members {
		if !slices.Contains(hs, root) {
			hs = append(hs, root)
		}
		if s.groups == nil {
			s.groups = make(map[string][]string)
		}
		for _, h := range hs {
			s.groups[h] = hs
		}
	}
	return s
}

func setInert(m map[*cand]bool, c *cand) map[*cand]bool {
	if m == nil {
		m = make(map[*cand]bool)
	}
	m[c] = true
	return m
}

// add adds the path or query rule c to the group g unless it conflicts
// with one there.
func (g *hostRules) add(c *cand) bool {
	switch c.kind {
	case PathPrefix:
		for _, p := range g.prefix {
			if related(c.from, p.from) || related(c.from, p.to) || related(c.to, p.from) {
				return false
			}
		}
		g.prefix = append(g.prefix, prefixRule{c.from, c.to, c.act, c.host})
		return true
	case DefaultDoc:
		return addName(&g.doc, c)
	case DropParam:
		// A set of names is one rule per name, all of them c.
		for n := range strings.SplitSeq(c.from, "&") {
			if slices.ContainsFunc(g.param, func(r nameRule) bool { return r.name == n }) {
				return false
			}
		}
		for n := range strings.SplitSeq(c.from, "&") {
			g.param = append(g.param, nameRule{n, c.act, c.host})
		}
		return true
	case DropQuery:
		return addName(&g.query, c)
	}
	return false
}

func addName(rs *[]nameRule, c *cand) bool {
	for _, r := range *rs {
		if r.name == c.from {
			return false
		}
	}
	*rs = append(*rs, nameRule{c.from, c.act, c.host})
	return true
}

// visitFunc is told each rule a rewrite applies (dep false) and each
// rule it depends on without applying it (dep true: the alias rules of
// a group whose path rules were learned on another of its hosts).
type visitFunc func(a *active, dep bool)

// rewriteChain is rewrite that also returns the rules applied, each
// once, in the order applied.
func (s *snapshot) rewriteChain(u string) (string, *active, []*cand, bool) {
	var chain []*cand
	out, first, ok := s.rewrite(u, func(a *active, _ bool) {
		if !slices.Contains(chain, a.c) {
			chain = append(chain, a.c)
		}
	})
	return out, first, chain, ok
}

// names reports whether an active rule names u's host: only then can
// the rules rewrite a URL to u or u to another. No lock, no allocation.
func (s *snapshot) names(u string) bool {
	i := strings.Index(u, "://")
	if i <= 0 {
		return false
	}
	rest := u[i+3:]
	return s.hosts[rest[:hostEnd(rest)]] != nil
}

// rewrite applies the rules to u and returns the canonical form, the
// first rule applied and whether any was. It makes one allocation, the
// result, when a rule applies and none otherwise. Rules whose parking lot
// is full are skipped. The order — host, prefix, default document,
// query, parameters — and the conflicts build leaves out make the result
// a fixed point: rewriting it again changes nothing.
func (s *snapshot) rewrite(u string, visit visitFunc) (string, *active, bool) {
	i := strings.Index(u, "://")
	if i <= 0 {
		return u, nil, false
	}
	rest := u[i+3:]
	hr := s.hosts[rest[:hostEnd(rest)]]
	if hr == nil {
		return u, nil, false
	}
	p, ok := split(u)
	if !ok {
		return u, nil, false
	}
	var first, last *active
	apply := func(a *active) {
		if first == nil {
			first = a
		}
		if visit != nil && a != last {
			visit(a, false) // once for the names of one set in a row
		}
		last = a
	}
	// A rule learned on another host of the group depends on the alias
	// rules: it is not used while one of them has a full parking lot.
	aliasOK := !anyFull(hr.alias)
	foreign := false
	usable := func(a *active, learned string) bool {
		if a.full.Load() || learned != p.host && !aliasOK {
			return false
		}
		foreign = foreign || learned != p.host
		return true
	}
	host := p.host
	if hr.to != "" && aliasOK {
		host = hr.to
		for _, a := range hr.alias {
			apply(a)
		}
	}
	// The path is pre+tail: pre is a prefix's replacement.
	pre, tail := "", p.path
	for k := range hr.prefix {
		r := &hr.prefix[k]
		if strings.HasPrefix(tail, r.from) && usable(r.a, r.host) {
			pre, tail = r.to, tail[len(r.from):]
			apply(r.a)
			break
		}
	}
	if len(hr.doc) > 0 {
		slash := strings.LastIndexByte(tail, '/')
		if name := tail[slash+1:]; name != "" {
			for k := range hr.doc {
				r := &hr.doc[k]
				if r.name == name && usable(r.a, r.host) {
					tail = tail[:slash+1]
					apply(r.a)
					break
				}
			}
		}
	}
	hasQuery, query := p.hasQuery, p.query
	if hasQuery {
		for k := range hr.query {
			r := &hr.query[k]
			if (r.name == p.path || isJoin(r.name, pre, tail)) && usable(r.a, r.host) {
				hasQuery, query = false, ""
				apply(r.a)
				break
			}
		}
	}
	// Parameters: drop marks the components dropped, keptLen is the
	// length of the rest. A query of more than 64 is left as it is.
	var drop uint64
	kept, keptLen := 0, 0
	if hasQuery && len(hr.param) > 0 && strings.Count(query, "&") < 64 {
		k := 0
		for q := query; q != ""; {
			c, next, _ := strings.Cut(q, "&")
			q = next
			if c == "" {
				continue
			}
			if r := paramRule(hr.param, c); r != nil && usable(r.a, r.host) {
				drop |= 1 << k
				apply(r.a)
			} else {
				kept++
				keptLen += len(c) + 1
			}
			k++
		}
	}
	if first == nil {
		return u, nil, false
	}
	if foreign && host == p.host && visit != nil {
		for _, a := range hr.alias {
			visit(a, true)
		}
	}
	n := len(p.scheme) + 3 + len(host) + len(pre) + len(tail)
	switch {
	case drop != 0:
		n += keptLen
	case hasQuery:
		n += 1 + len(query)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(p.scheme)
	b.WriteString("://")
	b.WriteString(host)
	b.WriteString(pre)
	b.WriteString(tail)
	switch {
	case drop != 0 && kept > 0:
		sep, k := byte('?'), 0
		for q := query; q != ""; {
			c, next, _ := strings.Cut(q, "&")
			q = next
			if c == "" {
				continue
			}
			if drop&(1<<k) == 0 {
				b.WriteByte(sep)
				b.WriteString(c)
				sep = '&'
			}
			k++
		}
	case drop == 0 && hasQuery:
		b.WriteByte('?')
		b.WriteString(query)
	}
	return b.String(), first, true
}

// paramRule returns the rule dropping query component c, if any.
func paramRule(rs []nameRule, c string) *nameRule {
	n, ok := paramName(c)
	if !ok {
		return nil
	}
	for k := range rs {
		if rs[k].name == n {
			return &rs[k]
		}
	}
	return nil
}

// isJoin reports whether s == pre+tail.
func isJoin(s, pre, tail string) bool {
	return len(s) == len(pre)+len(tail) && strings.HasPrefix(s, pre) && s[len(pre):] == tail
}

func anyFull(as []*active) bool {
	for _, a := range as {
		if a.full.Load() {
			return true
		}
	}
	return false
}
