package fetchtest

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"html"
	"math/big"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// The subdomain trap (Config.SubdomainTrap) is a tree of hosts without end:
// host x<id> links the home pages of its 30 children x<id*30+1> ..
// x<id*30+30>. Every id above 0 has one parent, (id-1)/30, so no link of the
// tree ever leads to a host met before, and a crawler that budgets per host
// alone admits a new host with every link. Ids are arbitrary-precision, so
// the tree has no last generation.
const (
	subdomainFanout = 30
	subdomainPages  = 3 // "/", "/p/1", "/p/2"
)

// subdomainEntry is the label of the trap's root host, linked from h000.
const subdomainEntry = "x0"

// validate reports a Config that NewWeb cannot serve; c has its defaults.
// Validate reports whether NewWeb can build the web c describes, with
// the defaults of its zero fields applied: the error NewWeb would panic
// with, or nil. Commands check their flags with it before NewWeb.
func (c Config) Validate() error {
	c.ensureDefaults()
	return c.validate()
}

func (c *Config) validate() error {
	if c.AliasScale < 0 || c.AliasScale > MaxAliasScale {
		return fmt.Errorf("fetchtest: Config.AliasScale %d is outside 0..%d", c.AliasScale, MaxAliasScale)
	}
	t := c.SubdomainTrap
	if t == "" {
		return nil
	}
	if t == c.Domain || strings.HasSuffix(t, "."+c.Domain) || strings.HasSuffix(c.Domain, "."+t) {
		return fmt.Errorf("fetchtest: Config.SubdomainTrap %q overlaps Config.Domain %q", t, c.Domain)
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(t); err != nil || d != t {
		return fmt.Errorf("fetchtest: Config.SubdomainTrap %q is not a registrable domain", t)
	}
	return nil
}

// lookupHost returns the host named name (lower case, no port, no final
// dot), or nil if the web has no such host. Hosts of the subdomain trap are
// made on demand, one small allocation each.
func (w *Web) lookupHost(name string) *hostInfo {
	if h := w.byName[name]; h != nil {
		return h
	}
	if t := w.cfg.SubdomainTrap; t != "" && (name == t || strings.HasSuffix(name, "."+t)) {
		return &hostInfo{name: name, kind: kindSubdomain}
	}
	return nil
}

// subdomainID returns the id of a host of the subdomain trap: the number a
// canonical x<id> label spells in base 36, or for any other name (the bare
// domain, x007, a.b.<domain>) a number hashed from the name.
func (w *Web) subdomainID(name string) *big.Int {
	label, _ := strings.CutSuffix(name, "."+w.cfg.SubdomainTrap)
	if id, ok := parseSubdomainLabel(label); ok {
		return id
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return new(big.Int).SetUint64(h.Sum64())
}

// parseSubdomainLabel parses x<id>, id in lower-case base 36 without
// leading zeros.
func parseSubdomainLabel(label string) (*big.Int, bool) {
	s, ok := strings.CutPrefix(label, "x")
	if !ok || s == "" || len(s) > 1 && s[0] == '0' {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		// SetString alone would also take upper case and a sign.
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return nil, false
		}
	}
	return new(big.Int).SetString(s, 36)
}

// subdomainPage returns the page number of path on a host of the subdomain
// trap (0 for "/"), or -1.
func subdomainPage(path string) int {
	if path == "/" {
		return 0
	}
	if s, ok := strings.CutPrefix(path, "/p/"); ok && len(s) == 1 && s[0] >= '1' && s[0] < '0'+subdomainPages {
		return int(s[0] - '0')
	}
	return -1
}

func subdomainPath(p int) string {
	if p == 0 {
		return "/"
	}
	return "/p/" + strconv.Itoa(p)
}

// renderSubdomain writes page path of host h of the subdomain trap: a pure
// function of the seed, the port, the host's id and the page.
func (w *Web) renderSubdomain(b *bytes.Buffer, h *hostInfo, path string) {
	p := subdomainPage(path)
	id := w.subdomainID(h.name)
	idText := id.Text(36)
	hf := fnv.New64a()
	_, _ = hf.Write([]byte(idText))
	r := newRNG(w.seed, tagSubdomain, int(hf.Sum64()), p)
	title := r.title(2 + r.intn(2))

	b.WriteString(htmlHead)
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title>\n</head>\n<body>\n<h1>")
	b.WriteString(html.EscapeString(title))
	b.WriteString("</h1>\n<p>")
	for s := range 1 + r.intn(2) {
		if s > 0 {
			b.WriteByte(' ')
		}
		r.sentence(b, 8, 16)
	}
	b.WriteString("</p>\n<ul>\n")
	for q := range subdomainPages {
		if q != p {
			b.WriteString("<li>")
			writeLink(b, link{subdomainPath(q), "page " + strconv.Itoa(q+1)})
			b.WriteString("</li>\n")
		}
	}
	base := new(big.Int).Mul(id, big.NewInt(subdomainFanout))
	var child, k big.Int
	for i := int64(1); i <= subdomainFanout; i++ {
		host := "x" + child.Add(base, k.SetInt64(i)).Text(36) + "." + w.cfg.SubdomainTrap
		href := w.base(host) + "/"
		if r.intn(5) == 0 {
			href = "//" + host + ":" + w.port + "/"
		}
		b.WriteString("<li>")
		writeLink(b, link{href, r.title(1)})
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n</body>\n</html>\n")
}
