package dust

import (
	"cmp"
	"container/list"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Learner learns URL rewrite rules from the fetches of a crawl and
// rewrites discovered URLs with the active ones. See the package
// documentation for the method and for how a crawler calls it.
//
// A Learner is safe for concurrent use. Rewrite reads an immutable
// snapshot of the active rules without a lock; the other methods take
// one mutex. The zero value is a Learner with the default Options.
type Learner struct {
	snap atomic.Pointer[snapshot] // nil: no active rule

	mu           sync.Mutex
	opts         Options
	ready        bool
	seed         maphash.Seed
	rules        map[key]*cand
	byHost       map[string][]*cand // the rules naming a host (both hosts of an alias)
	nextID       RuleID
	nextSeq      uint64
	hosts        map[string]*hostSample
	lru          list.List // of *hostSample, most recently observed first
	sampled      int       // URLs in all host samples
	parkedBy     map[string][]*cand
	parkedOn     map[uint64][]string // fnv of a canonical form → the URLs parked on it (some since released)
	failed       map[uint64]struct{} // fnv of canonical forms that gave no page (Failed)
	failedOrder  []uint64            // the same, oldest first
	activeParam  map[string]int      // lower-case parameter → hosts whose rule dropping it alone is active
	refutedParam map[string]bool     // lower-case parameters a rule dropping them alone was refuted for
	released     []string            // URLs released by the current call
	unproven     map[uint64]struct{} // fnv of URLs ReleaseUnproven gave back, until observed
	served       map[uint64]string   // fnv of a canonical form → a URL fetched with a page that the active rules rewrite to it
	servedOrder  []uint64            // the same keys, oldest first
	retro        *cand               // the rule whose retrospective check is running
	counted      []counted           // the supporting pairs the current call counted
	buf          []byte
	specs        []spec
	gen          uint64
	st           Stats // the cumulative counters
}

// cand is the record of a rule: proposed, active or withdrawn.
type cand struct {
	spec
	id       RuleID
	state    State
	refuted  bool // withdrawn before it was active
	bare     bool // a DropParam: a pair had a URL without its parameters
	support  int
	counter  int
	pairs    []uint64    // the witnesses of the supporting pairs, until activation
	vals     [2]uint64   // two values of a DropParam's parameters among them
	seen     [][2]uint64 // a DropParam: two values of each name in fetched URLs
	seq      uint64      // order of activation
	act      *active     // set on activation
	parked   []string    // URLs parked under the rule; some may be released (see parkedBy)
	nParked  int
	released uint64
	mark     uint64 // Learner.gen of the observation that last checked it
}

// counted is a supporting pair counted by the current call: the rule
// and the pair's witness.
type counted struct {
	c        *cand
	w        uint64
	proposed bool // c was proposed, not yet active, when the pair came
	values   bool // two values of c's parameters, neither URL without them
}

// Result is the answer of Rewrite.
type Result struct {
	// URL is the canonical form of the URL given to Rewrite, or that URL
	// itself when no rule applies.
	URL string
	// Rule is the first rule applied (host, prefix, default document,
	// query, parameters, in that order); others may have applied too.
	Rule RuleID
	// Validate asks the crawler to fetch the URL given to Rewrite anyway,
	// so that Observe can check the rules on it (Options.ValidateEvery).
	Validate bool
}

// Stats are the Learner's counters.
type Stats struct {
	Observed  uint64 // calls of Observe with a URL the rules apply to
	Proposed  uint64 // rules proposed (first supporting pair)
	Activated uint64 // rules activated
	Withdrawn uint64 // active rules withdrawn by a counterexample
	Refuted   uint64 // proposed rules withdrawn before activation
	Dropped   uint64 // candidates not recorded: no room (MaxRules, MaxHostRules)
	Rewritten uint64 // rewrites, summed over the rules that took part
	Released  uint64 // URLs released by withdrawals and by failed canonical forms
	Unproven  uint64 // URLs ReleaseUnproven gave back to be fetched (not encoded)
	Served    uint64 // URLs parked on an alias fetched before them (Served; not encoded)
	Failed    uint64 // canonical forms recorded as giving no page (Failed)
	Parked    int    // URLs parked now
	Rules     int    // rule records now
	Active    int    // active rules now
	Sampled   int    // URLs in the recent sample now
	Hosts     int    // hosts in the recent sample now
}

// New returns a Learner with the given options (nil means all
// defaults), or an *Error wrapping ErrOptions naming a field out of
// range.
func New(opts *Options) (*Learner, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	if bad := o.validate(); bad != "" {
		return nil, &Error{Op: "New", Subject: bad, Err: ErrOptions}
	}
	l := &Learner{opts: o}
	l.init()
	return l, nil
}

// init readies a zero Learner; l.mu is held.
func (l *Learner) init() {
	if l.ready {
		return
	}
	l.opts = l.opts.withDefaults()
	l.seed = maphash.MakeSeed()
	l.rules = make(map[key]*cand)
	l.byHost = make(map[string][]*cand)
	l.hosts = make(map[string]*hostSample)
	l.parkedBy = make(map[string][]*cand)
	l.parkedOn = make(map[uint64][]string)
	l.failed = make(map[uint64]struct{})
	l.unproven = make(map[uint64]struct{})
	l.served = make(map[uint64]string)
	l.activeParam = make(map[string]int)
	l.refutedParam = make(map[string]bool)
	l.nextID = 1
	l.ready = true
}

// countRewrite counts a rewrite in the rules that made it.
var countRewrite visitFunc = func(a *active, dep bool) {
	if !dep {
		a.rewritten.Add(1)
	}
}

// Rewrite returns the canonical form of url under the active rules, and
// whether any applied. url should be canonical (urlnorm.Canonical); a
// URL with userinfo or a fragment is returned as it is. The result is a
// fixed point: rewriting it again returns it with ok false. The
// canonical form does not depend on the alias started from: every host
// of an alias group maps to the same host, both prefixes of a
// PathPrefix to the same one.
//
// When ok, the crawler admits res.URL in place of url and parks url
// (Park), unless res.Validate asks it to fetch url as well.
//
// Rewrite takes no lock. Cost: when no rule names url's host, a scan for
// the host and one map lookup, about 40 ns, no allocation; when rules
// apply, one allocation (the result) and a pass over the URL.
func (l *Learner) Rewrite(url string) (res Result, ok bool) {
	s := l.snap.Load()
	if s == nil {
		return Result{URL: url}, false
	}
	out, first, ok := s.rewrite(url, countRewrite)
	if !ok {
		return Result{URL: url}, false
	}
	return Result{URL: out, Rule: first.id, Validate: first.probation.Load() || s.every > 0 && fnv(url)%s.every == 0}, true
}

// Park records that the crawler dropped url because Rewrite mapped it to
// canonical, so that url is released if a rule that made the rewrite is
// withdrawn. It reports false, and records nothing, when the rewrite no
// longer holds (a rule was withdrawn since, or its parking lot filled):
// the crawler must then admit url itself. Parking a parked URL again
// reports true. canonical may also be the alias Served returned for url,
// a URL the rules rewrite to url whose page the crawler has: url is then
// parked on it the same way. Cost: a rewrite and one map insert under
// the mutex.
func (l *Learner) Park(url, canonical string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	if _, ok := l.parkedBy[url]; ok {
		return true
	}
	s := l.snap.Load()
	if s == nil || len(l.parkedBy) >= l.opts.MaxParkedTotal {
		return false
	}
	hc := fnv(canonical)
	if _, failed := l.failed[hc]; failed {
		return false // its page would be lost: the crawler fetches url
	}
	if _, ok := l.unproven[fnv(url)]; ok {
		return false // given back by ReleaseUnproven: to be fetched
	}
	out, _, chain, ok := s.rewriteChain(url)
	if !ok || out != canonical {
		// canonical is url's alias (Served)?
		if out, _, chain, ok = s.rewriteChain(canonical); !ok || out != url || !servable(chain) {
			return false
		}
	}
	for _, c := range chain {
		if c.state != Active || c.act.full.Load() {
			return false
		}
	}
	if out != canonical {
		l.st.Served++
	}
	for _, c := range chain {
		l.park(c, url)
	}
	l.parkedBy[url] = chain
	l.parkedOn[hc] = append(l.parkedOn[hc], url)
	return true
}

// park adds url to c's parking lot.
func (l *Learner) park(c *cand, url string) {
	if len(c.parked) > 2*c.nParked+64 {
		// Drop the entries released by the withdrawal of other rules.
		c.parked = slices.DeleteFunc(c.parked, func(u string) bool {
			return !slices.Contains(l.parkedBy[u], c)
		})
	}
	c.parked = append(c.parked, url)
	c.nParked++
	if c.nParked >= l.opts.MaxParked {
		c.act.full.Store(true)
	}
}

// release withdraws c's parking lot: every URL parked under c leaves
// every rule it is parked under and goes to l.released. With unproven
// (ReleaseUnproven: the rule stays active) the URLs are counted in
// Stats.Unproven and kept from parking again until observed; else in
// Stats.Released and the rule's Released.
func (l *Learner) release(c *cand, unproven bool) {
	for _, u := range c.parked {
		chain, ok := l.parkedBy[u]
		if !ok || !slices.Contains(chain, c) {
			continue
		}
		l.unpark(u, chain)
		l.released = append(l.released, u)
		if unproven {
			l.unproven[fnv(u)] = struct{}{}
			l.st.Unproven++
			continue
		}
		c.released++
		l.st.Released++
	}
	c.parked, c.nParked = nil, 0
}

// ReleaseUnproven gives back, for the crawler to fetch, the URLs parked
// under active PathPrefix rules, whose evidence is about other files of
// the two directories and never about these: a directory that shares most
// files with another but not all (a "/v2/" next to "/v3/") is told from a
// symlink only by fetching its files, and a file of its own that no
// validation reached would otherwise stay parked, its page lost, when the
// crawl ends. The rules stay active: a crawler calls ReleaseUnproven when
// it has nothing else to fetch, queues what it returns, and calls it again
// the next time, until it returns nothing. The fetches check the rules as
// validations do: the first file of its own withdraws its rule. Park
// refuses the URLs given back until they are observed (or fail), so that a
// crawler that rewrites a URL when it leases it fetches it all the same.
// Other kinds' evidence is about the URLs they park (see Probation in the
// package documentation): they are not given back. Cost: O(rules) and
// O(URLs given back) under the mutex.
func (l *Learner) ReleaseUnproven() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	for _, c := range l.rules {
		if c.state != Active || c.kind != PathPrefix || c.nParked == 0 {
			continue
		}
		l.release(c, true)
	}
	return l.takeReleased()
}

// maxServed bounds the canonical forms Served remembers: the most
// recent, oldest forgotten first.
const maxServed = 1 << 14

// Served reports whether the page of url, a URL no active rule rewrites,
// was fetched under an alias: a URL the crawler fetched with a page
// (ObserveFetch) that the active rules rewrite to url, typically before
// the rules were learned (the "?ref=" variant of an article, found first).
// Fetching url would only fetch that page again, so when ok and not
// res.Validate the crawler parks url on res.URL, the alias (Park(url,
// res.URL)), and a withdrawal of the rules releases url as it releases
// any parked URL. Only rules whose evidence is about the URLs they map
// serve: a PathPrefix rule's pairs are other files of the two
// directories (see ReleaseUnproven), so a file fetched under one prefix
// never stands for the other's. Validate asks for a fetch anyway, at the
// rate and under the probation of Rewrite. The aliases are remembered
// for the last 16,384 canonical forms, and not across a resume. Cost: a
// map lookup and a rewrite under the mutex.
func (l *Learner) Served(url string) (res Result, ok bool) {
	s := l.snap.Load()
	if s == nil || !s.names(url) {
		return Result{URL: url}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	h := fnv(url)
	alias, ok := l.served[h]
	if !ok {
		return Result{URL: url}, false
	}
	out, first, chain, ok := s.rewriteChain(alias)
	if !ok || out != url || !servable(chain) {
		return Result{URL: url}, false
	}
	validate := s.every > 0 && h%s.every == 0
	for _, c := range chain {
		validate = validate || c.act.probation.Load()
	}
	return Result{URL: alias, Rule: first.id, Validate: validate}, true
}

// servable reports whether a fetch under an alias stands for the URL the
// rules of chain rewrite it to: all active, none a PathPrefix.
func servable(chain []*cand) bool {
	for _, c := range chain {
		if c.state != Active || c.kind == PathPrefix {
			return false
		}
	}
	return len(chain) > 0
}

// servedAdd remembers that alias, fetched with a page, stands for url.
func (l *Learner) servedAdd(url, alias string) {
	h := fnv(url)
	if _, ok := l.served[h]; ok {
		return
	}
	if len(l.servedOrder) >= maxServed {
		delete(l.served, l.servedOrder[0])
		l.servedOrder = l.servedOrder[1:]
	}
	l.served[h] = alias
	l.servedOrder = append(l.servedOrder, h)
}

// serveSample remembers, for the rule c just activated, the sampled
// fetches of its hosts that the active rules now rewrite: the aliases
// fetched before the rule was learned.
func (l *Learner) serveSample(c *cand, s *snapshot) {
	for _, host := range l.scope(c) {
		hs := l.hosts[host]
		if hs == nil {
			continue
		}
		for e := range hs.entries() {
			if out, _, ok := s.rewrite(e.url, nil); ok && out != e.url {
				l.servedAdd(out, e.url)
			}
		}
	}
}

// takeReleased returns the URLs released by the current call.
func (l *Learner) takeReleased() []string {
	r := l.released
	l.released = nil
	return r
}

// Observe records a fetch: url (canonical) was fetched and its content
// has fingerprint fp; first is the URL the content-seen test found the
// same content at (an exact duplicate, never a near one), or "" for new
// content. It returns the parked URLs released by the rules the
// observation withdrew, which the crawler queues again (they passed the
// URL-seen test when they were parked).
//
// The pair (url, first) supports the rules that explain their
// difference; url is also checked against its host's recent sample for
// the proposed and active rules of its host, which finds supporting
// pairs and counterexamples; then url joins the sample. Cost: O(rules
// naming url's host + url's query parameters), each a URL built in a
// reused buffer and a map lookup, under the mutex; a proposal also
// checks the new rule against its host's sample.
func (l *Learner) Observe(url string, fp uint64, first string) []string {
	return l.ObserveFetch(url, fp, first).Released
}

// Observation is what ObserveFetch reports.
type Observation struct {
	// Released are the parked URLs released by the rules the observation
	// withdrew, which the crawler queues again.
	Released []string
	// Explained reports that the fetch was a duplicate (first, or a URL
	// of the sample with the same fingerprint) that supports a rule
	// being learned: an alias host, a prefix, a default document or a
	// parameter. Such a fetch is URL aliasing the rules will soon stop,
	// not a sign of a spider trap, whose new URLs serve content seen
	// before that no rule explains. A DropQuery rule explains nothing:
	// it is learned path by path, and a session-id trap makes endless
	// query variants of every path it has; nor does a pair of two values
	// of a parameter ("?sid=a", "?sid=b"), for the same reason, though
	// it supports the DropParam rule. Nor does a validation of an
	// active rule (its URL and first rewrite to one URL): validations
	// go on as long as links do, and a trap's links never end.
	Explained bool
	// Confirmed reports that active rules map the fetched URL and first
	// to one URL: a validation that held (or a URL fetched before the
	// rules were learned).
	Confirmed bool
}

// ObserveFetch is Observe, and also reports whether a rule explains the
// fetch as a duplicate.
func (l *Learner) ObserveFetch(url string, fp uint64, first string) Observation {
	p, ok := split(url)
	if !ok {
		return Observation{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	l.st.Observed++
	if len(l.unproven) > 0 {
		delete(l.unproven, fnv(url))
	}
	h := l.hash(url)
	hs := l.hostSample(p.host)
	var confirmed bool
	if first != "" && first != url {
		confirmed = l.pair(url, h, first)
	}
	var explained bool
	l.checkAll(url, p, h, fp)
	for _, c := range l.counted {
		explained = explained || c.proposed && c.c.state != Withdrawn && c.c.kind != DropQuery && !c.values
	}
	l.counted = l.counted[:0]
	l.sampleAdd(hs, h, fp, url)
	if s := l.snap.Load(); s != nil {
		if out, _, ok := s.rewrite(url, nil); ok && out != url {
			l.servedAdd(out, url)
		}
	}
	return Observation{Released: l.takeReleased(), Explained: explained, Confirmed: confirmed}
}

// ObserveRedirect records that from redirected to to: the server says
// they are one page, a supporting pair for the rules that explain their
// difference (www to the bare host, a default document to its
// directory). A redirect never counts against a rule.
func (l *Learner) ObserveRedirect(from, to string) {
	if _, ok := split(from); !ok || from == to {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	l.pair(from, l.hash(from), to)
	l.counted = l.counted[:0]
}

// pair takes u and v (canonical side) as one content. It reports
// whether active rules map both to one URL.
func (l *Learner) pair(u string, hu uint64, v string) bool {
	if _, ok := split(v); !ok {
		return false
	}
	hv := l.hash(v)
	ru, rv := u, v
	var chain []*cand
	if s := l.snap.Load(); s != nil {
		collect := func(a *active, dep bool) {
			if !dep && !slices.Contains(chain, a.c) {
				chain = append(chain, a.c)
			}
		}
		ru, _, _ = s.rewrite(u, collect)
		rv, _, _ = s.rewrite(v, collect)
	}
	if ru == rv {
		// Explained by active rules (a validation): support for them.
		pu, _ := split(u)
		pv, _ := split(v)
		for _, c := range chain {
			if c.state == Active {
				c.support++
				c.bare = c.bare || c.kind == DropParam && !(c.rewrites(pu) && c.rewrites(pv))
				l.probe(c)
			}
		}
		return true
	}
	a, ok1 := split(ru)
	b, ok2 := split(rv)
	if !ok1 || !ok2 {
		return false
	}
	l.specs = derive(l.specs[:0], a, b)
	for _, sp := range l.specs {
		if !sp.valid() {
			continue
		}
		k := sp.key()
		c := l.rules[k]
		if c == nil {
			if c = l.propose(sp, k); c == nil {
				continue
			}
		}
		c.see(a)
		c.see(b)
		ra, rb := c.rewrites(a), c.rewrites(b)
		w, va, vb := hv, uint64(0), uint64(0)
		if ra {
			w, va = hu, c.value(a)
		}
		if rb {
			vb = c.value(b)
		}
		l.addSupport(c, w, va, vb, c.kind == DropParam && ra && rb)
	}
	return false
}

// propose records a new candidate and checks it against the sample, so
// that a counterexample fetched before its first supporting pair counts.
func (l *Learner) propose(sp spec, k key) *cand {
	if l.nextID == ^RuleID(0) || !l.makeRoom(sp) {
		l.st.Dropped++
		return nil
	}
	c := &cand{spec: sp, id: l.nextID, state: Proposed}
	if sp.kind == DropParam {
		c.seen = make([][2]uint64, strings.Count(sp.from, "&")+1)
	}
	l.nextID++
	l.st.Proposed++
	l.rules[k] = c
	l.index(c)
	l.retro = c
	for _, h := range l.scope(c) {
		hs := l.hosts[h]
		if hs == nil {
			continue
		}
		for e := range hs.entries() {
			if p, ok := split(e.url); ok && c.state == Proposed {
				l.check(c, e.url, p, e.h, e.fp)
			}
		}
	}
	l.retro = nil
	if c.state == Proposed && l.ripe(c) {
		l.activate(c)
	}
	return c
}

// scope returns the hosts whose URLs c applies to.
func (l *Learner) scope(c *cand) []string {
	if c.kind == HostAlias {
		return []string{c.from, c.to}
	}
	if s := l.snap.Load(); s != nil {
		if g := s.groups[c.host]; g != nil {
			return g
		}
	}
	return []string{c.host}
}

// index adds c to the per-host index.
func (l *Learner) index(c *cand) {
	l.byHost[c.host] = append(l.byHost[c.host], c)
	if c.kind == HostAlias {
		l.byHost[c.to] = append(l.byHost[c.to], c)
	}
}

// makeRoom makes room for a candidate like sp under MaxRules and
// MaxHostRules, evicting proposed rules with the least support.
func (l *Learner) makeRoom(sp spec) bool {
	hosts := []string{sp.host}
	if sp.kind == HostAlias {
		hosts = append(hosts, sp.to)
	}
	for _, h := range hosts {
		if len(l.byHost[h]) >= l.opts.MaxHostRules {
			v := weakest(l.byHost[h])
			if v == nil {
				return false
			}
			l.evict(v)
		}
	}
	if len(l.rules) >= l.opts.MaxRules {
		var all []*cand
		for _, c := range l.rules {
			all = append(all, c)
		}
		v := weakest(all)
		if v == nil {
			return false
		}
		l.evict(v)
	}
	return true
}

// weakest returns the proposed rule with the least support, the oldest
// of equals, or nil.
func weakest(cs []*cand) *cand {
	var w *cand
	for _, c := range cs {
		if c.state == Proposed && (w == nil || c.support < w.support || c.support == w.support && c.id < w.id) {
			w = c
		}
	}
	return w
}

func (l *Learner) evict(c *cand) {
	delete(l.rules, c.key())
	for _, h := range [2]string{c.host, c.to} {
		if hs, ok := l.byHost[h]; ok {
			hs = slices.DeleteFunc(hs, func(o *cand) bool { return o == c })
			if len(hs) == 0 {
				delete(l.byHost, h)
			} else {
				l.byHost[h] = hs
			}
		}
	}
}

// addSupport counts a supporting pair for c, activating c when ripe. A
// pair is identified by its witness w, the URL of the two that c
// rewrites (the newer if c rewrites both): the pairs a frameset's
// variants make with one another and with the frameset count once per
// variant. For a DropParam, va and vb identify the values of its
// parameters in the two URLs (0 for a URL without them), and values
// reports a pair of two values, neither URL without the parameters.
func (l *Learner) addSupport(c *cand, w, va, vb uint64, values bool) {
	if slices.ContainsFunc(l.counted, func(k counted) bool { return k.c == c && k.w == w }) {
		return
	}
	l.counted = append(l.counted, counted{c, w, c.state == Proposed, values})
	switch c.state {
	case Active:
		c.support++
		c.bare = c.bare || c.kind == DropParam && !values
		l.probe(c)
		return
	case Withdrawn:
		return
	}
	if slices.Contains(c.pairs, w) {
		return
	}
	if len(c.pairs) < l.opts.MinSupport {
		c.pairs = append(c.pairs, w)
	}
	c.support++
	c.bare = c.bare || c.kind == DropParam && !values
	for _, v := range [2]uint64{va, vb} {
		if v != 0 && v != c.vals[0] && c.vals[1] == 0 {
			if c.vals[0] == 0 {
				c.vals[0] = v
			} else {
				c.vals[1] = v
			}
		}
	}
	if l.retro != c && l.ripe(c) {
		l.activate(c)
	}
}

// ripe reports whether the proposed c has the support to be activated:
// MinSupport distinct pairs and, for a DropParam, two values of its
// parameters among them ("page=1" the same as no page says nothing about
// "page=2") and two values of each of its parameters in the URLs fetched
// on the host since it was proposed, its host's sample included.
func (l *Learner) ripe(c *cand) bool {
	if l.known(c) {
		return c.support >= min(l.opts.KnownSupport, l.opts.MinSupport)
	}
	if c.support < l.opts.MinSupport {
		return false
	}
	if c.kind != DropParam {
		return true
	}
	for _, v := range c.seen {
		if v[1] == 0 {
			return false
		}
	}
	return c.vals[1] != 0
}

// see records the values of the parameters of a proposed DropParam c in
// the URL p.
func (c *cand) see(p parts) {
	if c.state != Proposed || c.seen == nil || !p.hasQuery {
		return
	}
	for q := p.query; q != ""; {
		comp, rest, _ := strings.Cut(q, "&")
		q = rest
		n, ok := paramName(comp)
		if !ok {
			continue
		}
		i := 0
		for set := c.from; set != ""; i++ {
			m, more, _ := strings.Cut(set, "&")
			if m == n {
				v := &c.seen[i]
				switch h := fnv(comp) | 1; {
				case v[0] == 0:
					v[0] = h
				case v[0] != h && v[1] == 0:
					v[1] = h
				}
				break
			}
			set = more
		}
	}
}

// activate makes c active unless it conflicts with an active rule (see
// build), in which case it stays proposed.
func (l *Learner) activate(c *cand) {
	c.state, c.seq = Active, l.nextSeq
	c.act = &active{id: c.id, c: c}
	l.probe(c)
	s := l.build()
	if s.inert[c] {
		c.state, c.act = Proposed, nil
		return
	}
	l.nextSeq++
	l.st.Activated++
	c.pairs, c.seen = nil, nil
	l.generalize(c, 1, false)
	l.snap.Store(s)
	l.serveSample(c, s)
}

// probe puts the active rule c on probation while its support is below
// the probation of its kind, and ends it after.
func (l *Learner) probe(c *cand) {
	c.act.probation.Store(c.support < l.probation(c))
}

// probation is the support c needs before it parks URLs (see Probation
// in the package documentation): Options.Probation for a PathPrefix,
// whose pairs cannot tell a symlink from a directory that shares most of
// its files, and for a DropParam learned from values alone until a pair
// with a URL without its parameters confirms its canonical form; none
// for the others.
func (l *Learner) probation(c *cand) int {
	if c.kind == PathPrefix || c.kind == DropParam && !c.bare && !l.known(c) {
		return l.opts.Probation
	}
	return 0
}

// counter counts a counterexample against c, withdrawing it.
func (l *Learner) counter(c *cand) {
	c.counter++
	switch c.state {
	case Proposed:
		c.state, c.refuted, c.pairs, c.seen = Withdrawn, true, nil, nil
		l.st.Refuted++
		l.generalize(c, 0, true)
	case Active:
		c.state = Withdrawn
		l.st.Withdrawn++
		l.generalize(c, -1, true)
		l.release(c, false)
		l.snap.Store(l.build())
	}
}

// build makes the snapshot of the active rules.
func (l *Learner) build() *snapshot {
	var acts []*cand
	for _, c := range l.rules {
		if c.state == Active {
			acts = append(acts, c)
		}
	}
	slices.SortFunc(acts, func(a, b *cand) int { return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.id, b.id)) })
	return build(acts, l.opts.ValidateEvery)
}

// Rules returns every rule record (proposed, active, withdrawn) in
// order of ID. Cost: O(rules log rules) under the mutex.
func (l *Learner) Rules() []Rule {
	l.mu.Lock()
	defer l.mu.Unlock()
	rs := make([]Rule, 0, len(l.rules))
	for _, c := range l.rules {
		rs = append(rs, c.rule())
	}
	slices.SortFunc(rs, func(a, b Rule) int { return cmp.Compare(a.ID, b.ID) })
	return rs
}

// rewrites reports whether c, active, would rewrite the URL p: it is on
// the alias host, under the rewritten prefix, has the parameter...
func (c *cand) rewrites(p parts) bool {
	switch c.kind {
	case HostAlias:
		return p.host == c.from
	case PathPrefix:
		return strings.HasPrefix(p.path, c.from)
	case DefaultDoc:
		n := len(p.path) - len(c.from)
		return n > 0 && p.path[n-1] == '/' && p.path[n:] == c.from
	case DropParam:
		return p.hasQuery && hasParam(p.query, c.from)
	case DropQuery:
		return p.hasQuery && p.path == c.from
	}
	return false
}

// value identifies the values of the parameters of a DropParam in p,
// whatever their order (never 0), or is 0.
func (c *cand) value(p parts) uint64 {
	if c.kind != DropParam {
		return 0
	}
	var h uint64
	for q := p.query; q != ""; {
		comp, rest, _ := strings.Cut(q, "&")
		q = rest
		if n, ok := paramName(comp); ok && inSet(c.from, n) {
			h += fnv(comp)
		}
	}
	return h | 1
}

func (c *cand) rule() Rule {
	r := Rule{
		ID: c.id, Kind: c.kind, State: c.state, Host: c.host, From: c.from, To: c.to,
		Support: c.support, Counterexamples: c.counter, Parked: c.nParked, Released: c.released,
	}
	if c.act != nil {
		r.Rewritten = c.act.rewritten.Load()
	}
	return r
}

// Version returns a number that changes whenever what AppendRules
// encodes for the rules changes: a rule activated, withdrawn or refuted,
// or a canonical form recorded by Failed.
// A crawler saves the rules again when it has moved. O(1).
func (l *Learner) Version() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st.Activated + l.st.Withdrawn + l.st.Refuted + l.st.Failed
}

// Stats returns the counters. Cost: O(rules) under the mutex.
func (l *Learner) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.st
	for _, c := range l.rules {
		if c.act != nil {
			st.Rewritten += c.act.rewritten.Load()
		}
		if c.state == Active {
			st.Active++
		}
	}
	st.Parked = len(l.parkedBy)
	st.Rules = len(l.rules)
	st.Sampled = l.sampled
	st.Hosts = len(l.hosts)
	return st
}

func (l *Learner) hash(s string) uint64 { return maphash.String(l.seed, s) }

func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// fnv is FNV-1a: a hash of the URL that is the same in every process,
// so that the URLs chosen for validation are.
func fnv(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return mix(h)
}
