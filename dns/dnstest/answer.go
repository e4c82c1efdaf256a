package dnstest

import (
	"iter"
	"strings"
	"time"

	mdns "github.com/miekg/dns"
)

// Query is one query the server received, as recorded in its log.
type Query struct {
	Name      string        // name asked, lower case, without the trailing dot
	Type      string        // query type: "A", "AAAA", "CNAME", ...
	Transport string        // "udp" or "tcp"
	Time      time.Time     // arrival
	Rcode     string        // RCODE sent: "NOERROR", "NXDOMAIN", "SERVFAIL", ...; "" if dropped
	Answers   int           // records in the answer section
	Truncated bool          // the TC bit was set
	Dropped   bool          // no answer was sent (Drop fault, or Close during a delay)
	Delay     time.Duration // how long the answer was held back
}

// Log returns a copy of the query log in arrival order. A query held back by
// a Delay appears at once, with its outcome filled in when it is answered.
func (s *Server) Log() []Query {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Query(nil), s.log...)
}

// ResetLog empties the query log.
func (s *Server) ResetLog() {
	s.mu.Lock()
	s.log = nil
	s.mu.Unlock()
}

// reply is the server's decision about one query.
type reply struct {
	msg   *mdns.Msg // nil: drop
	delay time.Duration
}

// serveDNS answers a query that arrived over TCP (UDP queries are read in
// batches by serveUDP).
func (s *Server) serveDNS(w mdns.ResponseWriter, req *mdns.Msg) {
	r, idx, at := s.begin(req, w.LocalAddr().Network())
	if r.delay > 0 {
		if !s.wait(r.delay) {
			r.msg = nil
		}
		// Logged before the answer leaves, so that a client reading the
		// log after receiving the answer finds it complete.
		s.finish(idx, at, r)
	}
	if r.msg != nil && w.WriteMsg(r.msg) != nil {
		r.msg = nil
		s.finish(idx, at, r)
	}
}

// begin logs the arrival of req and decides the reply. The outcome of a
// reply without delay is logged at once.
func (s *Server) begin(req *mdns.Msg, transport string) (r reply, idx int, arrival time.Time) {
	q := Query{Transport: transport, Time: time.Now()}
	if len(req.Question) > 0 {
		q.Name = strings.TrimSuffix(canonical(req.Question[0].Name), ".")
		if q.Name == "" {
			q.Name = "."
		}
		q.Type = mdns.Type(req.Question[0].Qtype).String()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r = s.respond(req, transport == "udp")
	if r.delay == 0 {
		outcome(&q, r)
	}
	s.log = append(s.log, q)
	return r, len(s.log) - 1, q.Time
}

// wait holds a reply back for d; false if the server was closed meanwhile.
func (s *Server) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

// finish records the outcome of the query logged at index idx.
func (s *Server) finish(idx int, arrival time.Time, r reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if idx >= len(s.log) || !s.log[idx].Time.Equal(arrival) { // log reset meanwhile
		return
	}
	outcome(&s.log[idx], r)
}

// outcome fills in what was done with a query.
func outcome(e *Query, r reply) {
	e.Delay = r.delay
	if r.msg == nil {
		e.Dropped, e.Rcode, e.Answers, e.Truncated = true, "", 0, false
		return
	}
	e.Dropped = false
	e.Rcode = mdns.RcodeToString[r.msg.Rcode]
	e.Answers = len(r.msg.Answer)
	e.Truncated = r.msg.Truncated
}

// respond computes the answer to req; s.mu must be held. It never panics on
// any message the DNS library could decode (see FuzzRespond).
func (s *Server) respond(req *mdns.Msg, udp bool) reply {
	resp := new(mdns.Msg)
	if req.Opcode != mdns.OpcodeQuery {
		return reply{msg: resp.SetRcode(req, mdns.RcodeNotImplemented)}
	}
	if len(req.Question) != 1 {
		return reply{msg: resp.SetRcodeFormatError(req)}
	}
	resp.SetReply(req)
	resp.Authoritative = true
	resp.RecursionAvailable = true
	qu := req.Question[0]
	name := canonical(qu.Name)

	f, faulty := s.faultFor(name, mdns.Type(qu.Qtype).String())
	var r reply
	if faulty {
		r.delay = f.Delay
	}
	switch {
	case faulty && f.Mode == Drop:
		return r
	case faulty && f.Mode == ServFail:
		resp.Rcode = mdns.RcodeServerFailure
	case faulty && f.Mode == Refused:
		resp.Rcode = mdns.RcodeRefused
	case faulty && f.Mode == NXDomain:
		resp.Rcode = mdns.RcodeNameError
		resp.Ns = []mdns.RR{s.soaFor(name)}
	default:
		s.answer(resp, name, qu.Qtype)
	}

	size := mdns.MinMsgSize
	if opt := req.IsEdns0(); opt != nil {
		size = max(int(opt.UDPSize()), mdns.MinMsgSize)
		resp.SetEdns0(uint16(min(size, mdns.MaxMsgSize)), false)
	}
	if udp {
		if faulty && f.Truncate {
			resp.Truncated = true
			resp.Answer, resp.Ns = nil, nil // Extra holds only the OPT record
		} else {
			resp.Truncate(size)
		}
	}
	r.msg = resp
	return r
}

// answer fills resp with the records of name and type qtype, following
// CNAMEs, or with a negative answer.
func (s *Server) answer(resp *mdns.Msg, name string, qtype uint16) {
	seen := map[string]bool{name: true}
	cur := name
	for range maxChase {
		rrs, ok := s.lookup(cur)
		if !ok {
			resp.Rcode = mdns.RcodeNameError
			resp.Ns = []mdns.RR{s.soaFor(cur)}
			return
		}
		var cname *mdns.CNAME
		n := len(resp.Answer)
		for _, rr := range rrs {
			t := rr.Header().Rrtype
			if t == qtype || qtype == mdns.TypeANY {
				resp.Answer = append(resp.Answer, rr)
			} else if c, ok := rr.(*mdns.CNAME); ok {
				cname = c
			}
		}
		if len(resp.Answer) > n {
			return
		}
		if cname == nil {
			resp.Ns = []mdns.RR{s.soaFor(cur)} // NODATA
			return
		}
		resp.Answer = append(resp.Answer, cname)
		cur = cname.Target
		if s.cfg.NoCNAMEChase || seen[cur] {
			return
		}
		seen[cur] = true
	}
}

// lookup returns copies of the records owned by name, or of the wildcard
// records that cover it, renamed to name.
func (s *Server) lookup(name string) ([]mdns.RR, bool) {
	if rrs, ok := s.names[name]; ok && len(rrs) > 0 {
		return copyRRs(rrs, name), true
	}
	for suffix := range parents(name) {
		if rrs := s.names[wildcard(suffix)]; len(rrs) > 0 {
			return copyRRs(rrs, name), true
		}
	}
	return nil, false
}

func copyRRs(rrs []mdns.RR, owner string) []mdns.RR {
	out := make([]mdns.RR, len(rrs))
	for i, rr := range rrs {
		out[i] = mdns.Copy(rr)
		out[i].Header().Name = owner
	}
	return out
}

// soaFor returns the SOA for a negative answer about name: the SOA of the
// closest enclosing zone that has one, else one synthesized for the zone of
// the closest wildcard covering name, else for name's parent.
func (s *Server) soaFor(name string) mdns.RR {
	if soa := s.ownSOA(name); soa != nil {
		return soa
	}
	for suffix := range parents(name) {
		if soa := s.ownSOA(suffix); soa != nil {
			return soa
		}
	}
	zone := "."
	for suffix := range parents(name) {
		if len(s.names[wildcard(suffix)]) > 0 {
			zone = suffix
			break
		}
	}
	if zone == "." {
		for suffix := range parents(name) {
			zone = suffix
			break
		}
	}
	ttl := s.cfg.NegativeTTL
	return &mdns.SOA{
		Hdr:     hdr(zone, mdns.TypeSOA, ttl),
		Ns:      joinName("ns", zone),
		Mbox:    joinName("hostmaster", zone),
		Serial:  1,
		Refresh: 3600,
		Retry:   600,
		Expire:  86400,
		Minttl:  ttl,
	}
}

func (s *Server) ownSOA(name string) mdns.RR {
	for _, rr := range s.names[name] {
		if rr.Header().Rrtype == mdns.TypeSOA {
			return mdns.Copy(rr)
		}
	}
	return nil
}

func joinName(label, zone string) string {
	if zone == "." {
		return label + "."
	}
	return label + "." + zone
}

// wildcard returns the owner name of the wildcard records of zone.
func wildcard(zone string) string {
	return joinName("*", zone)
}

// parents yields the proper suffixes of the FQDN name, longest first,
// ending with the root ".".
func parents(name string) iter.Seq[string] {
	return func(yield func(string) bool) {
		if name == "." || name == "" {
			return
		}
		off := 0
		for {
			next, end := mdns.NextLabel(name, off)
			if end || next >= len(name) {
				yield(".")
				return
			}
			if !yield(name[next:]) {
				return
			}
			off = next
		}
	}
}
