package dns

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"time"

	mdns "github.com/miekg/dns"
)

// Options configures a Caching resolver. The zero value (or nil) asks for
// every default; New works on a copy.
type Options struct {
	// Nameservers are the servers asked, as "host" or "host:port" (port 53
	// if absent), in order of preference: attempts go round-robin over
	// them, starting with the first. Default: the nameserver lines of
	// ResolvConf; if it lists none, 127.0.0.1:53 (as the C library does).
	Nameservers []string

	// ResolvConf is the file read for nameservers when Nameservers is
	// empty. Default "/etc/resolv.conf".
	ResolvConf string

	// Network selects the address families looked up: "ip" (A and AAAA,
	// asked in parallel; once one family has answered with addresses the
	// other gets at most Timeout more), "ip4" (A only) or "ip6" (AAAA
	// only). Default "ip".
	Network string

	// Attempts is the number of queries sent for one name and type before
	// the lookup fails. Default 5 (Mercator, IIR §20.2.2).
	Attempts int

	// Timeout is how long the first attempt waits for an answer before the
	// query is sent again, at most; each further attempt waits Backoff
	// times longer, up to MaxTimeout. Default 1 s.
	//
	// The wait actually used starts from the nameserver's retransmission
	// timeout (RTO), measured as RFC 6298 says from the round-trip times
	// of its answers (SRTT + 4·RTTVAR) and clamped to [MinTimeout,
	// Timeout]: a server that answers in a millisecond has a lost query
	// asked again after MinTimeout, not after Timeout. Until a server
	// has answered once, its RTO is Timeout. An answer to an earlier
	// attempt is taken whenever it comes, and a lookup fails for lack of
	// answers only once the whole schedule Timeout·Backoff^i has run
	// out, however early the queries went out.
	Timeout time.Duration

	// MinTimeout is the least wait of an attempt, however fast the
	// nameserver answered so far. Default 100 ms; a value of at least
	// Timeout turns the adaptive timeout off.
	MinTimeout time.Duration

	// Backoff is the growth factor of the wait from one attempt to the
	// next; values below 1 mean 1. Default 3, so the five default waits
	// are 1, 3, 9, 27 and 81 s: Mercator started with one second and ended
	// with roughly 90.
	Backoff float64

	// MaxTimeout caps the wait of a single attempt. Default 90 s.
	MaxTimeout time.Duration

	// MaxInFlight bounds the UDP queries to one nameserver that are
	// awaiting an answer at once; further queries wait their turn. The
	// window starts at 32 and grows by one with each answer up to
	// MaxInFlight, as TCP's slow start does, so that a burst of new names
	// goes out at the pace answers come back instead of overflowing the
	// server's receive queue (a stock Linux kernel's holds about 512
	// small datagrams). A query counts until its answer comes, for at
	// most 100 ms (so that slow names hold no other back for longer);
	// retransmissions do not count. Default 256.
	MaxInFlight int

	// MinTTL and MaxTTL clamp the time an answer is cached, whatever the
	// records' TTL says. Defaults 1 min and 1 h.
	MinTTL, MaxTTL time.Duration

	// MaxNegativeTTL caps the time a "not found" answer is cached; its TTL
	// is the SOA's minimum (RFC 2308), at least MinTTL. Default 10 min.
	MaxNegativeTTL time.Duration

	// CacheSize bounds the number of names cached, positive and negative;
	// the least recently used are evicted first (the LRU order is kept per
	// shard of the cache, so eviction is approximately global LRU).
	// Each entry costs about 150 bytes plus the name and 24 bytes per
	// address. Default 65536.
	CacheSize int

	// MaxCNAME bounds the number of aliases followed for one name.
	// Default 8.
	MaxCNAME int

	// UDPSize is the EDNS0 payload size advertised; larger answers come
	// back truncated and are asked again over TCP. Default 1232 (the DNS
	// flag day 2020 value).
	UDPSize uint16

	// Now is the clock used for cache expiry (tests inject a fake one).
	// Default time.Now.
	Now func() time.Time
}

// withDefaults returns a copy of o (nil allowed) with defaults filled in.
func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
		c.Nameservers = append([]string(nil), o.Nameservers...)
	}
	if c.ResolvConf == "" {
		c.ResolvConf = "/etc/resolv.conf"
	}
	if len(c.Nameservers) == 0 {
		if cc, err := mdns.ClientConfigFromFile(c.ResolvConf); err == nil {
			for _, s := range cc.Servers {
				c.Nameservers = append(c.Nameservers, net.JoinHostPort(s, cc.Port))
			}
		}
		if len(c.Nameservers) == 0 {
			c.Nameservers = []string{"127.0.0.1:53"}
		}
	}
	for i, s := range c.Nameservers {
		if _, _, err := net.SplitHostPort(s); err != nil {
			c.Nameservers[i] = net.JoinHostPort(s, "53")
		}
	}
	if c.Network == "" {
		c.Network = "ip"
	}
	if c.Attempts <= 0 {
		c.Attempts = 5
	}
	if c.Timeout <= 0 {
		c.Timeout = time.Second
	}
	if c.MinTimeout <= 0 {
		c.MinTimeout = 100 * time.Millisecond
	}
	c.MinTimeout = min(c.MinTimeout, c.Timeout)
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 256
	}
	if c.Backoff == 0 {
		c.Backoff = 3
	}
	if c.Backoff < 1 {
		c.Backoff = 1
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = 90 * time.Second
	}
	if c.MinTTL <= 0 {
		c.MinTTL = time.Minute
	}
	if c.MaxTTL <= 0 {
		c.MaxTTL = time.Hour
	}
	if c.MaxNegativeTTL <= 0 {
		c.MaxNegativeTTL = 10 * time.Minute
	}
	if c.CacheSize <= 0 {
		c.CacheSize = 65536
	}
	if c.MaxCNAME <= 0 {
		c.MaxCNAME = 8
	}
	if c.UDPSize == 0 {
		c.UDPSize = 1232
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, c.validate()
}

func (c *Options) validate() error {
	switch c.Network {
	case "ip", "ip4", "ip6":
	default:
		return fmt.Errorf("dns: options: Network %q is not ip, ip4 or ip6", c.Network)
	}
	if c.MinTTL > c.MaxTTL {
		return fmt.Errorf("dns: options: MinTTL %v exceeds MaxTTL %v", c.MinTTL, c.MaxTTL)
	}
	for _, s := range c.Nameservers {
		host, _, err := net.SplitHostPort(s)
		if err != nil {
			return fmt.Errorf("dns: options: nameserver %q: %w", s, err)
		}
		if _, err := netip.ParseAddr(host); err != nil {
			return fmt.Errorf("dns: options: nameserver %q is not an IP address", s)
		}
	}
	return nil
}

// wait returns the longest wait of attempt i (0-based): Mercator's
// schedule.
func (c *Options) wait(i int) time.Duration {
	return c.waitFrom(c.Timeout, i)
}

// waitFrom returns the wait of attempt i when the first waits base:
// base·Backoff^i, capped at MaxTimeout.
func (c *Options) waitFrom(base time.Duration, i int) time.Duration {
	d := float64(base)
	for range i {
		d *= c.Backoff
		if d >= float64(c.MaxTimeout) {
			return c.MaxTimeout
		}
	}
	return min(time.Duration(d), c.MaxTimeout)
}

// schedule returns the sum of the waits of all attempts: how long a
// lookup that gets no answer lasts.
func (c *Options) schedule() time.Duration {
	var total time.Duration
	for i := range c.Attempts {
		w := c.wait(i)
		if total > math.MaxInt64-w {
			return math.MaxInt64
		}
		total += w
	}
	return total
}
