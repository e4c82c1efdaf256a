package dnstest

import (
	"strconv"
	"strings"
	"time"
)

// Mode is what a fault does with a query.
type Mode uint8

const (
	// Answer answers normally (possibly late or truncated, see Fault).
	Answer Mode = iota
	// NXDomain answers "no such name" (RCODE 3) with an SOA record.
	NXDomain
	// ServFail answers "server failure" (RCODE 2).
	ServFail
	// Refused answers "refused" (RCODE 5).
	Refused
	// Drop sends no answer at all: the client times out.
	Drop
)

var modeNames = [...]string{"answer", "nxdomain", "servfail", "refused", "drop"}

// String returns the mode's name in lower case, e.g. "servfail".
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// Fault describes how the server misbehaves for a name. The zero Fault is
// "answer normally" and clears a fault set before.
type Fault struct {
	// Mode is what happens to a query the fault applies to.
	Mode Mode

	// Delay holds the answer (or, for Drop, nothing) back this long.
	Delay time.Duration

	// Truncate answers UDP queries with the TC bit set and no records, so
	// that the client must ask again over TCP; TCP queries are answered
	// normally. It combines with Mode and Delay.
	Truncate bool

	// Flap applies the fault only to every other query of a name and type
	// (the 1st, 3rd, 5th, ...); the others are answered normally.
	Flap bool

	// First, if positive, applies the fault only to the first First
	// queries of a name and type (counted after Flap's selection); later
	// queries are answered normally. Zero means always.
	First int

	// Type, if not empty, limits the fault to queries of that type, e.g.
	// "AAAA" (as in Query.Type); other types are answered normally.
	Type string
}

type faultState struct {
	Fault
	seen    map[string]int // name/type → queries seen
	applied map[string]int // name/type → queries the fault applied to
}

// SetFault makes queries for name misbehave as f describes; a name "*.zone"
// applies f to every name strictly under zone that has no fault of its own
// ("*." to every name), the closest such zone winning.
// SetFault(name, Fault{}) removes the fault. Setting a fault resets its
// query counters (Flap, First).
func (s *Server) SetFault(name string, f Fault) {
	key := canonical(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == (Fault{}) {
		delete(s.faults, key)
		return
	}
	s.faults[key] = &faultState{Fault: f, seen: map[string]int{}, applied: map[string]int{}}
}

// faultFor counts a query for name/type against the fault that covers name
// and reports whether the fault applies to it. s.mu must be held.
func (s *Server) faultFor(name, qtype string) (Fault, bool) {
	fs := s.faults[name]
	if fs == nil {
		for suffix := range parents(name) {
			if fs = s.faults[wildcard(suffix)]; fs != nil {
				break
			}
		}
	}
	if fs == nil {
		return Fault{}, false
	}
	if fs.Type != "" && !strings.EqualFold(fs.Type, qtype) {
		return Fault{}, false
	}
	key := name + "/" + qtype
	n := fs.seen[key]
	fs.seen[key] = n + 1
	if fs.Flap && n%2 == 1 {
		return Fault{}, false
	}
	if fs.First > 0 && fs.applied[key] >= fs.First {
		return Fault{}, false
	}
	fs.applied[key]++
	return fs.Fault, true
}
