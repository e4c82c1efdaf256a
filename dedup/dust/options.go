package dust

import "slices"

// Options configures a Learner. The zero value means all defaults; a
// zero field means its default.
//
// Memory is bounded by these fields. The recent sample holds at most
// SampleSize URLs (about 80 bytes each, with the per-host index and the
// images of DropParam and DropQuery candidates, plus the URL string,
// which it keeps), at most HostSample of them per host. Rule records are
// at most MaxRules (about 200 bytes each), parked URLs at most MaxParked
// per active rule and MaxParkedTotal in all (about 80 bytes each plus the
// URL). With the defaults and 100-byte URLs: about 12 MB for a full
// sample, 1 MB for full rule records, 3 MB per rule whose parking lot is
// full, 46 MB when every lot together is.
type Options struct {
	// MinSupport is how many distinct supporting pairs a rule needs to
	// become active: pairs of fetched URLs that the rule maps to one
	// another and that had equal content, or that redirected one to the
	// other. Default 4; 1 trusts the first pair.
	MinSupport int

	// ValidateEvery chooses the share of rewritten URLs reported with
	// Result.Validate, which the crawler fetches anyway so that a wrong
	// rule meets its counterexample: 1 in ValidateEvery, chosen by a hash
	// of the URL (the same URL always gets the same answer). Default 16;
	// 1 validates every rewrite (the rules then save no fetch); negative
	// never validates.
	ValidateEvery int

	// Probation is the support an active rule of a risky kind needs
	// before it parks URLs: a PathPrefix, and a DropParam learned from
	// values alone until a pair with the URL without its parameters
	// confirms it (see Probation in the package documentation). Until
	// then every URL it rewrites is reported with Result.Validate, so the
	// crawler fetches both the URL and its canonical form and each fetch
	// checks the rule: a prefix learned from the files two directories
	// share meets the files they do not before it parks them. The other
	// kinds park once active. Default 4 × MinSupport; negative means no
	// probation.
	Probation int

	// MaxParked is how many URLs one active rule may hold parked (dropped
	// by the crawler because of the rule, to be released if the rule is
	// withdrawn). A rule whose lot is full stops rewriting new URLs
	// rather than lose them; it rewrites again when releases (by the
	// withdrawal of another rule sharing the URLs) make room. Default
	// 16384.
	MaxParked int

	// MaxParkedTotal bounds the URLs parked under all rules together.
	// When it is reached, Park reports false and the crawler fetches the
	// URL instead: the rules cost fetches again, never memory without
	// end, on a crawl with many alias hosts. Default 262144.
	MaxParkedTotal int

	// MaxRules bounds the rule records: proposed, active and withdrawn.
	// When it is reached, a new candidate evicts the proposed rule with
	// the least support; active and withdrawn rules are never evicted,
	// and when only they remain the new candidate is dropped
	// (Stats.Dropped). Default 4096.
	MaxRules int

	// MaxHostRules bounds the rule records naming one host, with the same
	// eviction as MaxRules; it bounds the work of an observation. Default
	// 64.
	MaxHostRules int

	// SampleSize bounds the recent sample of fetched URLs and their
	// content fingerprints, all hosts together, in which counterexamples
	// are looked for. When it is full, the host observed least recently
	// leaves the sample. Default 65536.
	SampleSize int

	// HostSample bounds the sample of one host: its most recent
	// HostSample fetches. Default 4096; at most SampleSize.
	HostSample int

	// KnownParams names query parameters known not to select a page's
	// content: a DropParam rule whose parameters are all known is
	// activated by KnownSupport supporting pairs, without the two values
	// of each parameter the others need, and parks without probation.
	// Names compare without regard to ASCII case; a name ending in "*" is
	// a prefix. A name becomes known on every host, too, once a rule
	// dropping it alone is active on GeneralizeAfter hosts and no host
	// refuted one. Validations and counterexamples still withdraw such a
	// rule, and a canonical form that gives no page releases what it
	// parked (Learner.Failed). Default (nil): DefaultKnownParams; an
	// empty slice: none.
	KnownParams []string

	// KnownSupport is the supporting pairs a rule of known parameters
	// needs. Default 1.
	KnownSupport int

	// GeneralizeAfter is the hosts on which a rule dropping one
	// parameter must be active before the parameter is known everywhere.
	// Default 3; negative: never.
	GeneralizeAfter int
}

// DefaultKnownParams returns the parameters Options.KnownParams defaults
// to: analytics and ad-click tracking parameters, and the session
// parameters of common server frameworks. Not "sid" or "ref", which some
// sites use to choose content.
func DefaultKnownParams() []string {
	return []string{
		"utm_*", "gclid", "dclid", "fbclid", "msclkid", "yclid", "mc_cid", "mc_eid", "_ga", "_gl",
		"jsessionid", "phpsessid", "aspsessionid", "sessionid", "cfid", "cftoken",
	}
}

const (
	defaultMinSupport    = 4
	defaultValidateEvery = 16
	defaultMaxParked     = 16384
	defaultMaxParkedAll  = 1 << 18
	defaultMaxRules      = 4096
	defaultMaxHostRules  = 64
	defaultSampleSize    = 65536
	defaultHostSample    = 4096
	maxOption            = 1 << 30
)

// withDefaults returns o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MinSupport, defaultMinSupport)
	def(&o.ValidateEvery, defaultValidateEvery)
	if o.Probation == 0 {
		o.Probation = 4 * o.MinSupport
	}
	def(&o.MaxParked, defaultMaxParked)
	def(&o.MaxParkedTotal, defaultMaxParkedAll)
	def(&o.MaxRules, defaultMaxRules)
	def(&o.MaxHostRules, defaultMaxHostRules)
	def(&o.SampleSize, defaultSampleSize)
	if o.HostSample == 0 {
		o.HostSample = min(defaultHostSample, o.SampleSize)
	}
	if o.KnownParams == nil {
		o.KnownParams = DefaultKnownParams()
	}
	def(&o.KnownSupport, 1)
	def(&o.GeneralizeAfter, 3)
	return o
}

// validate checks o after withDefaults and names the first bad field.
func (o Options) validate() string {
	switch {
	case o.MinSupport < 1 || o.MinSupport > maxOption:
		return "MinSupport"
	case o.ValidateEvery > maxOption:
		return "ValidateEvery"
	case o.Probation > maxOption:
		return "Probation"
	case o.MaxParked < 1 || o.MaxParked > maxOption:
		return "MaxParked"
	case o.MaxParkedTotal < 1 || o.MaxParkedTotal > maxOption:
		return "MaxParkedTotal"
	case o.MaxRules < 1 || o.MaxRules > maxOption:
		return "MaxRules"
	case o.MaxHostRules < 1 || o.MaxHostRules > maxOption:
		return "MaxHostRules"
	case o.SampleSize < 1 || o.SampleSize > maxOption:
		return "SampleSize"
	case o.HostSample < 1 || o.HostSample > o.SampleSize:
		return "HostSample"
	case slices.ContainsFunc(o.KnownParams, func(k string) bool { return k == "" || k == "*" }):
		return "KnownParams" // every parameter would be known
	case o.KnownSupport < 1 || o.KnownSupport > maxOption:
		return "KnownSupport"
	case o.GeneralizeAfter > maxOption:
		return "GeneralizeAfter"
	}
	return ""
}
