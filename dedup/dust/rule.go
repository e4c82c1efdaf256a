package dust

import (
	"slices"
	"strconv"
	"strings"
)

// Kind is the kind of a rewrite rule.
type Kind uint8

// The rule kinds. Each is scoped to a host; a HostAlias joins two hosts
// into a group whose other rules apply to all its hosts.
const (
	// HostAlias: host Host serves the same paths as host To, so its URLs
	// are rewritten to To ("www.x" ≡ "x", a mirror name). To is the host
	// fetched first in the first supporting pair.
	HostAlias Kind = 1 + iota
	// DropParam: the query parameters From (one name, or a set of names
	// sorted and joined by "&") do not change the content on Host, on
	// any path; they are dropped ("ref", a session id,
	// "utm_medium&utm_source").
	DropParam
	// DropQuery: the query does not change the content of path From on
	// Host; it is dropped whole (a javadoc frameset "index.html?…").
	DropQuery
	// DefaultDoc: From is the default document of the directories of
	// Host: "/dir/From" is rewritten to "/dir/" (index.html, default.asp).
	DefaultDoc
	// PathPrefix: the paths under prefix From on Host are the paths
	// under To ("/current/" ≡ "/v3/", a symlinked directory). To is the
	// prefix fetched first in the first supporting pair.
	PathPrefix
	maxKind = PathPrefix
)

var kindNames = [...]string{"", "host", "param", "query", "default", "prefix"}

// String returns "host", "param", "query", "default" or "prefix".
func (k Kind) String() string {
	if k == 0 || k > maxKind {
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// State is where a rule is in its life.
type State uint8

// A rule is proposed by its first supporting pair, active once it has
// Options.MinSupport of them and no counterexample, withdrawn by its
// first counterexample, whether it was active or not. Withdrawal is
// final: a withdrawn rule is never proposed again (its record is kept,
// and persisted, for that reason).
const (
	Proposed State = 1 + iota
	Active
	Withdrawn
)

// String returns "proposed", "active" or "withdrawn".
func (s State) String() string {
	switch s {
	case Proposed:
		return "proposed"
	case Active:
		return "active"
	case Withdrawn:
		return "withdrawn"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// RuleID identifies a rule within a Learner and its encoded state; IDs
// are given in order of proposal, starting at 1.
type RuleID uint32

// Rule is a snapshot of a rewrite rule and its evidence.
type Rule struct {
	ID    RuleID
	Kind  Kind
	State State
	// Host is the host the rule is about: the alias for a HostAlias, the
	// host whose URLs it rewrites for the others (and then for every
	// host of Host's alias group).
	Host string
	// From and To are, by Kind: HostAlias, Host and the canonical host;
	// DropParam, the parameter name or the names of a set, sorted and
	// joined by "&"; DropQuery, the path; DefaultDoc,
	// the document name; PathPrefix, the prefix rewritten and its
	// canonical replacement. Unused fields are empty.
	From, To string
	// Support counts the distinct supporting pairs until activation and
	// every supporting pair after (validations the crawler fetched).
	Support int
	// Counterexamples counts pairs the rule maps to one another that
	// had different content; the first withdrew the rule.
	Counterexamples int
	// Rewritten counts the calls of Rewrite the rule took part in (a
	// link seen on many pages counts each time).
	Rewritten uint64
	// Parked is the number of URLs parked under the rule now; Released,
	// how many its withdrawal released.
	Parked   int
	Released uint64
}

// String returns the rule in a readable form, for instance
//
//	host www.alias.sim.test -> alias.sim.test (support 12)
//	param ref on alias.sim.test (support 30)
//	query on javadoc.sim.test/api/index.html (support 40)
//	default index.html on static.sim.test (support 5)
//	prefix /current/ -> /v3/ on docs.sim.test (support 9)
//
// followed by the counterexamples if any, and the state unless active.
func (r Rule) String() string {
	var b strings.Builder
	switch r.Kind {
	case HostAlias:
		b.WriteString("host " + r.Host + " -> " + r.To)
	case DropParam:
		b.WriteString("param " + r.From + " on " + r.Host)
	case DropQuery:
		b.WriteString("query on " + r.Host + r.From)
	case DefaultDoc:
		b.WriteString("default " + r.From + " on " + r.Host)
	case PathPrefix:
		b.WriteString("prefix " + r.From + " -> " + r.To + " on " + r.Host)
	default:
		b.WriteString(r.Kind.String() + " on " + r.Host)
	}
	b.WriteString(" (support " + strconv.Itoa(r.Support))
	if r.Counterexamples > 0 {
		b.WriteString(", counterexamples " + strconv.Itoa(r.Counterexamples))
	}
	b.WriteByte(')')
	if r.State != Active {
		b.WriteString(" [" + r.State.String() + "]")
	}
	return b.String()
}

// spec describes a candidate rule: its kind, scope and direction.
type spec struct {
	kind           Kind
	host, from, to string
}

// key identifies a candidate whatever its direction: two URLs that
// support "/v2/ -> /v3/" support "/v3/ -> /v2/" as well.
type key struct {
	kind       Kind
	host, a, b string
}

func (s spec) key() key {
	switch s.kind {
	case HostAlias:
		return key{HostAlias, "", min(s.from, s.to), max(s.from, s.to)}
	case PathPrefix:
		return key{PathPrefix, s.host, min(s.from, s.to), max(s.from, s.to)}
	}
	return key{s.kind, s.host, s.from, ""}
}

// valid reports whether s is a rule Rewrite can apply without making an
// invalid URL or a rewrite that is not idempotent: names without the
// delimiters of their part, prefixes that are directories and are not
// nested in each other.
func (s spec) valid() bool {
	if !validHost(s.host) {
		return false
	}
	switch s.kind {
	case HostAlias:
		return s.from == s.host && validHost(s.to) && s.to != s.from
	case DropParam:
		return s.to == "" && validParams(s.from)
	case DropQuery:
		return s.to == "" && validPath(s.from)
	case DefaultDoc:
		return s.to == "" && s.from != "" && !strings.ContainsAny(s.from, "/?#") && validChars(s.from)
	case PathPrefix:
		return validPath(s.from) && validPath(s.to) && strings.HasSuffix(s.from, "/") &&
			strings.HasSuffix(s.to, "/") && !related(s.from, s.to)
	}
	return false
}

// related reports whether one of a and b is a prefix of the other.
func related(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }

func validHost(h string) bool {
	return h != "" && !strings.ContainsAny(h, "/?#@\\") && validChars(h)
}

func validPath(p string) bool {
	return p != "" && p[0] == '/' && !strings.ContainsAny(p, "?#") && validChars(p)
}

// validChars reports whether s has no control, space or non-ASCII byte,
// as in a canonical URL.
func validChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// derive appends to dst the candidates that explain why u and v, two
// URLs with one content, differ: v is the canonical side (fetched first,
// or the redirect's target). It finds at most two (a parameter and the
// whole query); a pair that differs in more than one part explains
// nothing.
func derive(dst []spec, u, v parts) []spec {
	if u.scheme != v.scheme {
		return dst
	}
	sameQuery := u.query == v.query && u.hasQuery == v.hasQuery
	if u.host != v.host {
		if u.path == v.path && sameQuery {
			dst = append(dst, spec{HostAlias, u.host, u.host, v.host})
		}
		return dst
	}
	switch {
	case u.path == v.path && !sameQuery:
		return deriveQuery(dst, u, v)
	case u.path != v.path && sameQuery:
		return derivePath(dst, u.host, u.path, v.path)
	}
	return dst
}

// maxParams bounds the query components a pair is compared by.
const maxParams = 32

// maxSetParams bounds the names of one DropParam rule.
const maxSetParams = 8

// deriveQuery explains two queries of one path that differ only in the
// components of a set of named parameters, whatever their values and
// whether one URL has them at all: DropParam for the set of names
// ("?ref=3" and "", "?sid=a" and "?sid=b", "?ref=3" and
// "?utm_source=share&utm_medium=mail"). When one URL has no query and
// the other more than a parameter, or components that are not named
// parameters, the whole query of the path explains them too (DropQuery).
func deriveQuery(dst []spec, u, v parts) []spec {
	var ub, vb [maxParams]string
	uc, ok1 := components(ub[:0], u.query)
	vc, ok2 := components(vb[:0], v.query)
	if !ok1 || !ok2 || len(uc)+len(vc) == 0 {
		return dst
	}
	var nb [maxSetParams]string
	names, named := nb[:0], true
	for _, c := range append(difference(uc, vc), difference(vc, uc)...) {
		n, ok := paramName(c)
		switch {
		case !ok:
			named = false
		case slices.Contains(names, n):
		case len(names) == maxSetParams:
			named = false
		default:
			names = append(names, n)
		}
	}
	if named && len(names) > 0 {
		slices.Sort(names)
		dst = append(dst, spec{DropParam, u.host, strings.Join(names, "&"), ""})
	}
	if (len(uc) == 0 || len(vc) == 0) && !(named && len(names) == 1) {
		dst = append(dst, spec{DropQuery, u.host, u.path, ""})
	}
	return dst
}

// components appends the "&"-separated components of q, empty ones
// left out; false if there are more than maxParams.
func components(dst []string, q string) ([]string, bool) {
	for q != "" {
		c, rest, _ := strings.Cut(q, "&")
		if c != "" {
			if len(dst) == maxParams {
				return dst, false
			}
			dst = append(dst, c)
		}
		q = rest
	}
	return dst, true
}

// difference returns the components of a not in b, as multisets.
func difference(a, b []string) []string {
	var used [maxParams]bool
	var out []string
outer:
	for _, x := range a {
		for j, y := range b {
			if !used[j] && x == y {
				used[j] = true
				continue outer
			}
		}
		out = append(out, x)
	}
	return out
}

// validParams reports whether s names a set of query parameters: names
// without "=" or "#", sorted, distinct, joined by "&".
func validParams(s string) bool {
	prev, n := "", 0
	for s != "" || n == 0 {
		name, rest, more := strings.Cut(s, "&")
		if name == "" || name <= prev || strings.ContainsAny(name, "=#") || !validChars(name) || n == maxSetParams {
			return false
		}
		if more && rest == "" {
			return false
		}
		prev, s, n = name, rest, n+1
	}
	return true
}

// inSet reports whether name is one of the "&"-joined names of set.
func inSet(set, name string) bool {
	for set != "" {
		n, rest, _ := strings.Cut(set, "&")
		if n == name {
			return true
		}
		set = rest
	}
	return false
}

// paramName returns the name of a query component "name=value"; a
// component without "=" is not a named parameter (a javadoc frame
// "index.html?p/C.html", a flag).
func paramName(c string) (string, bool) {
	n, _, ok := strings.Cut(c, "=")
	return n, ok && n != ""
}

// derivePath explains two paths with one query: a default document
// ("/d/index.html" and "/d/") or a prefix substitution ("/v2/a/b" and
// "/v3/a/b": the longest common suffix that starts a segment, and the
// two prefixes before it).
func derivePath(dst []spec, host, pu, pv string) []spec {
	if name, ok := docName(pu, pv); ok {
		return append(dst, spec{DefaultDoc, host, name, ""})
	}
	if name, ok := docName(pv, pu); ok {
		return append(dst, spec{DefaultDoc, host, name, ""})
	}
	i, j := len(pu), len(pv)
	for i > 0 && j > 0 && pu[i-1] == pv[j-1] {
		i, j = i-1, j-1
	}
	m := strings.IndexByte(pu[i:], '/')
	if m < 0 {
		return dst // the last segments differ
	}
	s := spec{PathPrefix, host, pu[:i+m+1], pv[:j+m+1]}
	if s.valid() {
		dst = append(dst, s)
	}
	return dst
}

// docName reports whether long is dir followed by one segment, a
// document name.
func docName(long, dir string) (string, bool) {
	if !strings.HasSuffix(dir, "/") || len(long) <= len(dir) || !strings.HasPrefix(long, dir) {
		return "", false
	}
	name := long[len(dir):]
	return name, strings.IndexByte(name, '/') < 0
}
