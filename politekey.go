package crawlkit

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/crawlkit/crawlkit/frontier"
)

// PolitenessKey says which requests share one politeness gap
// (Config.PolitenessKey): at most one request per key is in flight, and
// successive requests to a key are spaced by its gap (IIR §20.2.3).
type PolitenessKey uint8

const (
	// KeyHost, the default: each host (name and port) is a key.
	KeyHost PolitenessKey = iota
	// KeyDomain: the hosts of one registrable domain (urlnorm.Domain,
	// and Config.PrivateSuffixes) share a key, so a site of many
	// subdomains on one server is asked one page at a time.
	KeyDomain
	// KeyIP: the hosts whose names resolve to one address (the first the
	// Resolver answers) share a key, so a server hosting many names is
	// asked one page at a time. A host is resolved when its first URL is
	// queued, so a commit that queues a new host waits for its DNS answer
	// (cached after that); a host that does not resolve is its own key
	// (its fetch fails anyway). In a cluster the hosts of one address may
	// belong to different nodes, each keeping the gap on its own.
	KeyIP
)

// String returns "host", "domain" or "ip".
func (k PolitenessKey) String() string {
	switch k {
	case KeyHost:
		return "host"
	case KeyDomain:
		return "domain"
	case KeyIP:
		return "ip"
	}
	return fmt.Sprintf("PolitenessKey(%d)", uint8(k))
}

// ParsePolitenessKey parses what String returns.
func ParsePolitenessKey(s string) (PolitenessKey, error) {
	for k := KeyHost; k <= KeyIP; k++ {
		if s == k.String() {
			return k, nil
		}
	}
	return 0, fmt.Errorf("crawlkit: politeness key %q: want host, domain or ip", s)
}

// keys maps hosts to their politeness keys when they are not the host;
// it remembers each host's key for the run.
type keys struct {
	mu sync.Mutex
	of map[string]string
}

// keyOf returns the frontier key of host (a frontier.HostKey).
func (c *Crawler) keyOf(ctx context.Context, host string) string {
	switch c.cfg.PolitenessKey {
	case KeyDomain:
		return c.domainOf(host)
	case KeyIP:
	default:
		return host
	}
	c.keys.mu.Lock()
	k, ok := c.keys.of[host]
	c.keys.mu.Unlock()
	if ok {
		return k
	}
	k = host
	name := host
	if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.HasSuffix(name, "]") {
		name = name[:i]
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if addrs, err := c.resolver.LookupNetIP(ctx, name); err == nil && len(addrs) > 0 {
		k = "ip:" + addrs[0].String()
	}
	c.keys.mu.Lock()
	if c.keys.of == nil {
		c.keys.of = make(map[string]string)
	}
	c.keys.of[host] = k
	c.keys.mu.Unlock()
	return k
}

// setKeys gives each URL of us its politeness key, unless keys are
// hosts (the frontier's default, an empty Key).
func (c *Crawler) setKeys(ctx context.Context, us []frontier.URL) {
	if c.cfg.PolitenessKey == KeyHost {
		return
	}
	for i := range us {
		us[i].Key = c.keyOf(ctx, frontier.HostKey(us[i].URL))
	}
}
