package dns

import (
	"net/netip"
	"strings"

	mdns "github.com/miekg/dns"
)

// answer is what one response says about a name and type.
type answer struct {
	addrs []netip.Addr
	ttl   uint32 // smallest TTL of the records used (aliases included)
	// next is set when the response ends the chain at an alias without
	// telling more about it (a server that does not chase CNAMEs): the
	// alias must be asked about next.
	next string
	hops int // aliases followed in this response
	// negative answers: NXDOMAIN, or NODATA (no records of the type)
	nxdomain, nodata bool
	negTTL           uint32 // from the SOA in the authority section; 0 if none
}

// extract reads the answer to the question (name, qtype) out of m, following
// the CNAME chain inside the message. seen holds the names already on the
// chain (in lower case, FQDN) and is extended; budget is the number of
// aliases that may still be followed. Records not on the chain are ignored.
// m's RCODE must be NOERROR or NXDOMAIN. extract never panics, whatever m
// holds.
func extract(m *mdns.Msg, name string, qtype uint16, seen map[string]bool, budget int) (answer, error) {
	var a answer
	a.ttl = ^uint32(0)
	cur := name
	for {
		var alias string
		found := false
		for _, rr := range m.Answer {
			h := rr.Header()
			if h.Class != mdns.ClassINET || !strings.EqualFold(h.Name, cur) {
				continue
			}
			switch rr := rr.(type) {
			case *mdns.A:
				if qtype == mdns.TypeA {
					if ip, ok := netip.AddrFromSlice(rr.A.To4()); ok {
						a.addrs = append(a.addrs, ip)
						a.ttl = min(a.ttl, h.Ttl)
						found = true
					}
				}
			case *mdns.AAAA:
				if qtype == mdns.TypeAAAA && len(rr.AAAA) == 16 {
					a.addrs = append(a.addrs, netip.AddrFrom16([16]byte(rr.AAAA)))
					a.ttl = min(a.ttl, h.Ttl)
					found = true
				}
			case *mdns.CNAME:
				if alias == "" {
					alias = rr.Target
					a.ttl = min(a.ttl, h.Ttl)
				}
			}
		}
		if found || alias == "" {
			break
		}
		target := strings.ToLower(mdns.Fqdn(alias))
		if seen[target] {
			return a, errLoop
		}
		if a.hops >= budget {
			return a, errLongChain
		}
		seen[target] = true
		a.hops++
		cur = target
	}
	if len(a.addrs) > 0 {
		return a, nil
	}
	for _, rr := range m.Ns {
		if soa, ok := rr.(*mdns.SOA); ok {
			a.negTTL = min(soa.Hdr.Ttl, soa.Minttl)
			break
		}
	}
	switch {
	case m.Rcode == mdns.RcodeNameError:
		a.nxdomain = true
	case cur != name && a.negTTL == 0 && len(m.Ns) == 0:
		// The chain stops at an alias the server said nothing about, not
		// even "no data" with an SOA: ask about the alias itself.
		a.next = cur
	default:
		a.nodata = true
	}
	return a, nil
}
