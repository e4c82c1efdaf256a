package dust

import "strings"

// Known parameters (Options.KnownParams): tracking and session
// parameters that every crawler meets on host after host. Learning them
// anew on each host costs the fetches of four pairs and a probation; a
// prior that they do not select content, checked by the same validations
// and counterexamples, costs one. The prior also grows from the crawl:
// a parameter dropped alone by active rules on Options.GeneralizeAfter
// hosts, and refuted on none, is known on every host (Dasgupta et al.
// generalise a rule over its contexts).

// known reports whether c drops only known parameters. Called with l.mu
// held.
func (l *Learner) known(c *cand) bool {
	if c.kind != DropParam {
		return false
	}
	for name := range strings.SplitSeq(c.from, "&") {
		if !l.knownName(name) {
			return false
		}
	}
	return true
}

// knownName reports whether the parameter name is known.
func (l *Learner) knownName(name string) bool {
	for _, k := range l.opts.KnownParams {
		if p, ok := strings.CutSuffix(k, "*"); ok {
			if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
				return true
			}
		} else if strings.EqualFold(name, k) {
			return true
		}
	}
	g := l.opts.GeneralizeAfter
	return g > 0 && !l.refutedParam[name] && l.activeParam[name] >= g
}

// generalize counts, for the parameter that a single-parameter DropParam
// c drops, the hosts on which it is active (delta +1 on activation, -1 on
// withdrawal) and notes a refutation. Called with l.mu held.
func (l *Learner) generalize(c *cand, delta int, refuted bool) {
	if c.kind != DropParam || strings.Contains(c.from, "&") {
		return
	}
	name := strings.ToLower(c.from)
	l.activeParam[name] += delta
	if refuted {
		l.refutedParam[name] = true
	}
}
