// Package dust learns URL rewrite rules from the fetches of a crawl, so
// that the crawler stops fetching Different URLs with Similar Text: a
// site served again under its "www." name, a query parameter that does
// not change the page, "/dir/index.html" next to "/dir/", a symlinked
// directory. The content-seen test of the crawl loop (IIR §20.2.1) finds
// such duplicates after the fetch, every time; a Learner turns them into
// rules that the crawler applies to discovered links before its URL-seen
// test, so that the duplicates are not fetched at all.
//
// The method follows two papers, adapted to a crawl that learns while it
// runs. DustBuster (Bar-Yossef, Keidar, Schonfeld, "Do Not Crawl in the
// DUST: Different URLs with Similar Text", WWW 2007; ACM TWEB 3(1), 2009)
// mines substitution rules from a list of URLs, ranks them by support —
// the pairs of listed URLs a rule maps to one another — and validates the
// likely ones by fetching a sample. Dasgupta, Kumar and Sasturkar
// ("De-duping URLs via Rewrite Rules", KDD 2008) learn rules scoped by
// context (host, path, parameter) from clusters of URLs with one content,
// and rewrite every URL of a cluster to one canonical target. Here the
// crawl is both the list and the sample: every fetch is evidence.
//
// # Evidence and thresholds
//
// A supporting pair is two fetched URLs with equal content fingerprints,
// or a redirect from one to the other: the crawler reports the pair
// (url, first) when the content-seen test finds an exact duplicate, and
// the Learner finds others in its recent sample of fetches. A pair is
// explained by the one rule that maps one URL to the other; a pair that
// differs in two places (host and path) explains nothing, unless active
// rules account for one of them. A counterexample is two fetched URLs the
// rule maps to one another with different fingerprints; only the sample
// finds those, since the content-seen test reports equal contents only.
//
// A rule is proposed by its first supporting pair and then checked at
// once against the sample, so that a counterexample fetched before the
// first support counts. It becomes active at Options.MinSupport (default
// 4) distinct supporting pairs with no counterexample. Pairs are distinct
// by their witness, the URL the rule rewrites: the variants of one
// frameset, which all pair with one another, count once each. The first
// counterexample withdraws a rule, active or not, for good: a withdrawn
// rule is kept (and persisted) so that it is never proposed again, since
// one counterexample shows the rule can lose a page and fresh support
// cannot show that it will not again. A rule learned on a host whose
// pages change between fetches (a clock, a random quote) has no exact
// duplicates to learn from in the first place.
//
// Known parameters are the exception: tracking and session parameters
// (Options.KnownParams: utm_*, gclid, fbclid, jsessionid, sessionid and
// the like) that host after host shows not to select content. A
// DropParam rule of known parameters alone is activated by
// Options.KnownSupport pairs (default 1), without the two values, and
// parks without probation; its validations, its counterexamples and the
// failure of its canonical forms (Failed) still undo it. A parameter
// also becomes known on every host once rules dropping it alone are
// active on Options.GeneralizeAfter hosts (default 3) and none was
// refuted, as Dasgupta et al. generalise a rule over its contexts: a
// crawl of many sites learns "ref" on three and spends one pair on each
// of the others. It is a prior, not a licence: a site on which a known
// parameter selects content keeps a page behind the rule until a
// validation or the sample meets it, which KnownParams set empty avoids.
//
// # Rules
//
// Each rule is scoped to a host ("host:port" when the port is not the
// default; the scheme is not part of it, so a rule learned over http
// applies to https too):
//
//   - HostAlias: "www.x" serves the same paths as "x", or any two hosts
//     do; the alias host maps to the host fetched first in the first
//     supporting pair. Aliases form groups, whose other rules apply to
//     all their hosts.
//   - DropParam: a named query parameter ("ref", a session id), or a set
//     of them ("utm_medium&utm_source"), does not change the content on
//     any path of the host; all of them are dropped. The evidence is
//     gathered over the paths of the host, as Dasgupta et al. generalise
//     a rule over its contexts: two URLs of one path whose queries differ
//     only in the components of a set of named parameters, one URL
//     perhaps without them ("?ref=3" and "", "?sid=a" and "?sid=b",
//     "?utm_source=share&utm_medium=mail" and ""), support the rule for
//     that set; the pairs of distinct paths add up. Two URLs that differ
//     only in those parameters and have different contents refute it: so
//     "page" on a listing and "lang" on a page with translations are
//     refuted by the sample as soon as two of their values, or one and
//     the page without it, have been fetched. A rule needs two values of
//     its parameters among its pairs ("page=1" being the page without
//     "page" says nothing of "page=2"), and each of its parameters seen
//     with two values in the URLs fetched on the host (in its sample, or
//     since the rule was proposed). A parameter that selects the content
//     is therefore not dropped, unless MinSupport of its values give one
//     page (an error page): then the first of its other values that a
//     validation fetches withdraws the rule.
//   - DropQuery: the whole query of one path does not change its content
//     (4,207 "index.html?…" variants of one javadoc frameset).
//   - DefaultDoc: "/dir/NAME" is "/dir/": NAME is learned (index.html,
//     index.htm, default.asp, …), not taken from a list.
//   - PathPrefix: the paths under one prefix are those under another
//     ("/current/" and "/v3/", a symlinked directory); the prefixes end in
//     "/" and are the two differing heads of paths with a common tail.
//     The prefix fetched first is canonical.
//
// Rewrite applies the active rules in the order host, prefix, default
// document, query, parameters; rules that would conflict (a prefix nested
// in another, an alias between hosts already grouped) are not applied, so
// the canonical form is a fixed point and is the same whichever alias a
// URL starts from.
//
// # Validation and parking
//
// Once a rule is active the crawler stops fetching the URLs it rewrites,
// which are also the URLs that could refute it. So Rewrite asks for a
// validation on 1 in Options.ValidateEvery (default 16) of the URLs it
// rewrites, chosen by a hash of the URL (deterministic: the same URL
// always gets the same answer): the crawler fetches those anyway, and
// Observe compares them with their canonical forms.
//
// A URL the crawler drops because of a rule is parked (Park), under every
// rule its rewrite used. When a rule is withdrawn, Observe returns its
// parked URLs, which the crawler queues again: a wrong rule costs fetches,
// never pages. So does a canonical form that gives no page (a 404 or 403
// where the alias serves one, a host that went down): Failed releases the
// URLs parked on it and keeps it, in a bounded set saved with the rules,
// from being parked on again. A rule holds at most Options.MaxParked URLs (default
// 16384); when its lot is full it stops rewriting new URLs, which are then
// fetched, rather than losing them.
//
// # Probation
//
// A rule that has just been activated may still be on probation: Rewrite
// then asks for a validation of every URL it rewrites, so the crawler
// fetches both the URL and its canonical form and each fetch checks the
// rule; it parks nothing until its support reaches the probation of its
// kind. The kinds differ in what their supporting pairs show:
//
//   - A HostAlias, whose pairs are the same path and query on two hosts,
//     a DefaultDoc, whose pairs are a directory and its document, and a
//     DropQuery or DropParam with pairs of a URL with the parameters and
//     the same URL without them, have seen the canonical form serve the
//     page they rewrite to it, on MinSupport distinct URLs. Another path
//     of the same host behaving otherwise is the exception; they have no
//     probation, and 1 in ValidateEvery of their rewrites is checked.
//   - A DropParam learned from values alone ("?sid=a" ≡ "?sid=b") has
//     shown that the values do not select the content, not that the URL
//     without the parameters, its canonical form, serves it (it may be an
//     error page or another page). It is on probation until a pair with
//     a URL without its parameters confirms it — the first validation
//     whose canonical form is fetched, usually — or its support reaches
//     Options.Probation (default 4 × MinSupport).
//   - A PathPrefix is the risky kind: its pairs cannot tell a symlinked
//     directory from a decoy — "/v2/" sharing most files with "/v3/" but
//     not all — until a distinct file is fetched, and the directory's
//     links are in its own files, so a rule that parks "/v2/index.html"
//     keeps the crawler from even discovering the rest. It is on
//     probation until its support reaches Options.Probation: a validation
//     makes one or two pairs (with the first URL of the content and with
//     the sample), so about six files of the directory after activation
//     are fetched and compared.
//
// A decoy directory is therefore handled as follows: if a distinct file
// is fetched before the prefix rule reaches MinSupport, the rule is
// refuted and never activated; if it is fetched during the probation,
// the rule is withdrawn having parked nothing. Otherwise the distinct
// files are parked with the rest, and the first of them fetched as a
// validation (or by any other path) withdraws the rule and releases them
// all. Distinct files that no validation reaches would stay parked, and
// the rule active, and their pages be lost: so when the crawler has
// nothing else to fetch, ReleaseUnproven gives back every URL parked
// under an active PathPrefix, and the crawler fetches them. A symlinked
// directory's files are then fetched after all, once each, at the end of
// the crawl: a PathPrefix saves no fetch of a crawl that runs to its
// end, but defers its URLs past every other, so a crawl that stops at a
// limit spends it on distinct pages first; a decoy's first file of its
// own withdraws the rule. The other kinds' evidence is
// about the URLs they park, and they keep them.
//
// # Calling it from the crawl loop
//
// In the fetch → parse → content seen → link admission loop:
//
//	// Link admission, for each link after canonicalisation and the URL
//	// filter, before the URL-seen test.
//	res, ok := learner.Rewrite(link)
//	switch {
//	case ok && !res.Validate:
//		if !urlSeen.TestAndAdd(link) { // seen: parked or fetched before
//			if learner.Park(link, res.URL) {
//				admit(res.URL) // through the URL-seen test
//			} else {
//				frontier.Add(link) // the rule is gone: fetch it
//			}
//		}
//	case ok: // validate: fetch the link, and admit its canonical form
//		admit(res.URL)
//		admit(link)
//	default:
//		admit(link)
//	}
//
//	// After the content-seen test of a fetched page (exact duplicates
//	// only: a near-duplicate is not the same content).
//	first := "" // or m.URL when m.Seen && !m.Near
//	for _, u := range learner.Observe(page, fp, first) {
//		// Released: it passed the URL-seen test when it was parked.
//		readmit(u) // Rewrite again (another rule may hold), else frontier.Add
//	}
//
//	// After a redirect from page to location.
//	learner.ObserveRedirect(page, location)
//
//	// After a fetch that gave no page (an error status, a failed fetch,
//	// robots.txt denying it): the URLs parked on it come back, and none
//	// is parked on it again.
//	for _, u := range learner.Failed(page) {
//		readmit(u)
//	}
//
//	// When nothing else is left to fetch, before the crawl ends: the
//	// URLs parked under rules whose evidence does not cover them. Park
//	// refuses them until they are observed.
//	for _, u := range learner.ReleaseUnproven() {
//		frontier.Add(u)
//	}
//
//	// When the frontier hands out a URL, before fetching it: a rule
//	// learned since it was queued may map it to another (park it, as
//	// at admission), or map to it an alias already fetched with its
//	// page (the "?ref=" variant of an article, found before the rule):
//	// then it is parked on that alias, and released like any parked URL.
//	if res, ok := learner.Served(u); ok && !res.Validate && learner.Park(u, res.URL) {
//		return // not fetched: its page is res.URL's
//	}
//
// A checkpoint stores MarshalBinary's bytes with the frontier, and a
// resume gives them to UnmarshalBinary before the first Rewrite: the
// active rules, their evidence (their probation included), the withdrawn
// rules and the parked URLs survive, since parked URLs are in the
// URL-seen set but in no frontier. Proposed rules and the sample are
// relearned. The encoding is versioned; the state of the previous
// version is still read.
//
// # Cost and memory
//
// Rewrite takes no lock: it reads an immutable snapshot of the active
// rules, replaced when one is activated or withdrawn. For a link whose
// host no rule names it costs a scan for the host and one map lookup
// (about 40 ns, no allocation); a rewrite costs one allocation, the
// result. Observe costs O(rules naming the host + query parameters), each
// a URL built in a reused buffer and a map lookup; a proposal also checks
// the new rule against its hosts' samples, O(Options.HostSample). The
// sample keeps the last Options.HostSample fetches of each host, at most
// Options.SampleSize in all (dropping the hosts observed least recently),
// about 80 bytes each plus the URL; a counterexample whose other URL has
// left the sample goes unseen, which is what validation makes up for.
// Rule records are bounded by Options.MaxRules and Options.MaxHostRules.
package dust
