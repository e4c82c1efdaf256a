package fetchtest_test

import (
	"context"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/crawlkit/crawlkit/fetch/fetchtest"
	"github.com/crawlkit/crawlkit/urlnorm"
)

const trapDomain = "explode.test"

// trapChildren returns the host names a page of host x<id> must link.
func trapChildren(id string) []string {
	n, ok := new(big.Int).SetString(id, 36)
	if !ok {
		panic("bad id " + id)
	}
	n.Mul(n, big.NewInt(30))
	var out []string
	for k := int64(1); k <= 30; k++ {
		out = append(out, "x"+new(big.Int).Add(n, big.NewInt(k)).Text(36)+"."+trapDomain)
	}
	return out
}

// trapLinks splits the links of a trap page into the other hosts it links
// (in order) and the paths it links on its own host.
func trapLinks(t *testing.T, w *fetchtest.Web, u string, body []byte) (hosts, same []string) {
	t.Helper()
	pu, _ := url.Parse(u)
	for _, l := range extractLinks(t, u, body) {
		lu, err := url.Parse(l)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case lu.Port() != w.Port() || lu.Scheme != "http":
			t.Errorf("%s links %s, off the web", u, l)
		case strings.EqualFold(lu.Hostname(), pu.Hostname()):
			same = append(same, lu.Path)
		default:
			hosts = append(hosts, lu.Hostname())
			if lu.Path != "/" {
				t.Errorf("%s links %s, not a home page", u, l)
			}
		}
	}
	return hosts, same
}

func TestSubdomainTrapPages(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 3, SubdomainTrap: trapDomain})
	defer w.Close()
	huge := strings.Repeat("z", 20) // beyond 64 bits
	for _, tc := range []struct {
		host string
		id   string // "" for names that hash to an id
	}{
		{"x0." + trapDomain, "0"},
		{"x1." + trapDomain, "1"},
		{"xu." + trapDomain, "u"},
		{"xabc123." + trapDomain, "abc123"},
		{"x" + huge + "." + trapDomain, huge},
		{"X5.Explode.Test", "5"},
		{trapDomain, ""},
		{"x007." + trapDomain, ""},
		{"www.a.b." + trapDomain, ""},
	} {
		t.Run(tc.host, func(t *testing.T) {
			var firstHosts []string
			for _, path := range []string{"/", "/p/1", "/p/2"} {
				u := w.URL(tc.host, path)
				resp, body := get(t, w, u)
				if resp.StatusCode != 200 || w.Status(u) != 200 {
					t.Fatalf("%s: %d (Status %d)", u, resp.StatusCode, w.Status(u))
				}
				if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
					t.Errorf("%s: Content-Type %q", u, ct)
				}
				if !w.IsTrap(u) || w.Links(u) != nil || w.Title(u) != "" {
					t.Errorf("%s: IsTrap %v, Links %v, Title %q", u, w.IsTrap(u), w.Links(u), w.Title(u))
				}
				hosts, same := trapLinks(t, w, u, body)
				if len(hosts) != 30 {
					t.Fatalf("%s links %d hosts, want 30: %v", u, len(hosts), hosts)
				}
				self := strings.ToLower(tc.host)
				for _, h := range hosts {
					if h == self || urlnorm.Domain(h) != trapDomain {
						t.Errorf("%s links host %s", u, h)
					}
				}
				if len(slices.Compact(slices.Sorted(slices.Values(hosts)))) != 30 {
					t.Errorf("%s: links repeat a host: %v", u, hosts)
				}
				if tc.id != "" && !slices.Equal(hosts, trapChildren(tc.id)) {
					t.Errorf("%s links %v, want the children %v", u, hosts, trapChildren(tc.id))
				}
				if firstHosts == nil {
					firstHosts = hosts
				} else if !slices.Equal(hosts, firstHosts) {
					t.Errorf("%s links other hosts than the host's home page", u)
				}
				var wantSame []string
				for _, p := range []string{"/", "/p/1", "/p/2"} {
					if p != path {
						wantSame = append(wantSame, p)
					}
				}
				if !slices.Equal(same, wantSame) {
					t.Errorf("%s: same-host links %v, want %v", u, same, wantSame)
				}
			}
			for _, tc2 := range []struct {
				path   string
				status int
			}{
				{"/robots.txt", 404},
				{"/p/3", 404},
				{"/p/0", 404},
				{"/p/01", 404},
				{"/x", 404},
			} {
				u := w.URL(tc.host, tc2.path)
				if resp, _ := raw(t, w, u); resp.StatusCode != tc2.status || w.Status(u) != tc2.status {
					t.Errorf("%s: %d (Status %d), want %d", u, resp.StatusCode, w.Status(u), tc2.status)
				}
			}
			if v := w.RobotsVariant(tc.host); v != "none" {
				t.Errorf("RobotsVariant = %q, want none", v)
			}
			if st, body := w.Robots(tc.host); st != 404 || body != "" {
				t.Errorf("Robots = %d %q, want 404", st, body)
			}
			if !w.Allowed("crawlkit", w.URL(tc.host, "/p/1")) || w.PagesOf(tc.host) != nil {
				t.Error("trap page not allowed, or PagesOf not nil")
			}
		})
	}
}

// TestSubdomainTrapFresh walks two generations from the entry: no host is
// linked twice, so the trap never runs out of new hosts.
func TestSubdomainTrapFresh(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 3, Hosts: 3, SubdomainTrap: trapDomain})
	defer w.Close()
	seen := map[string]bool{"x0." + trapDomain: true}
	level := []string{"x0." + trapDomain}
	for gen := range 2 {
		var next []string
		for _, h := range level {
			u := w.URL(h, "/")
			_, body := get(t, w, u)
			hosts, _ := trapLinks(t, w, u, body)
			for _, c := range hosts {
				if seen[c] {
					t.Fatalf("generation %d: %s linked twice", gen, c)
				}
				seen[c] = true
				next = append(next, c)
			}
		}
		level = next
	}
	if len(seen) != 1+30+900 {
		t.Errorf("%d hosts in two generations, want 931", len(seen))
	}
}

// TestSubdomainTrapDeterministic: the same URL gives the same page on every
// request and in every web of the same seed; pages differ from each other.
func TestSubdomainTrapDeterministic(t *testing.T) {
	cfg := fetchtest.Config{Seed: 9, Hosts: 2, SubdomainTrap: trapDomain}
	a, b := fetchtest.NewWeb(cfg), fetchtest.NewWeb(cfg)
	defer a.Close()
	defer b.Close()
	cfg.Seed = 10
	c := fetchtest.NewWeb(cfg)
	defer c.Close()
	body := func(w *fetchtest.Web, host, path string) string {
		_, b := get(t, w, w.URL(host, path))
		return strings.ReplaceAll(string(b), ":"+w.Port(), ":PORT")
	}
	titles := map[string]bool{}
	for _, tc := range []struct{ host, path string }{
		{"x0." + trapDomain, "/"},
		{"x0." + trapDomain, "/p/1"},
		{"x1." + trapDomain, "/"},
		{"x2." + trapDomain, "/"},
		{"xzz." + trapDomain, "/p/2"},
		{trapDomain, "/"},
	} {
		ba := body(a, tc.host, tc.path)
		if again := body(a, tc.host, tc.path); again != ba {
			t.Errorf("%s%s changed between requests", tc.host, tc.path)
		}
		if bb := body(b, tc.host, tc.path); bb != ba {
			t.Errorf("%s%s differs between webs of one seed", tc.host, tc.path)
		}
		if bc := body(c, tc.host, tc.path); bc == ba {
			t.Errorf("%s%s is the same under another seed", tc.host, tc.path)
		}
		doc, err := html.Parse(strings.NewReader(ba))
		if err != nil {
			t.Fatal(err)
		}
		for n := range doc.Descendants() {
			if n.Type == html.ElementNode && n.Data == "title" && n.FirstChild != nil {
				titles[n.FirstChild.Data] = true
			}
		}
	}
	if len(titles) < 5 {
		t.Errorf("6 pages have %d distinct titles: %v", len(titles), titles)
	}
}

func TestSubdomainTrapGroundTruth(t *testing.T) {
	off := fetchtest.NewWeb(fetchtest.Config{Seed: 4, Hosts: 6})
	defer off.Close()
	on := fetchtest.NewWeb(fetchtest.Config{Seed: 4, Hosts: 6, SubdomainTrap: trapDomain})
	defer on.Close()
	norm := func(w *fetchtest.Web, ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = strings.ReplaceAll(s, ":"+w.Port(), ":PORT")
		}
		return out
	}
	entry := on.URL("x0."+trapDomain, "/")

	for _, tc := range []struct {
		name      string
		w         *fetchtest.Web
		traps     int
		linked    bool // h000's home page links the entry
		trapHosts bool // trap hosts dial and answer
	}{
		{"off", off, 3, false, false},
		{"on", on, 4, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.w
			if got := w.Traps(); len(got) != tc.traps {
				t.Fatalf("Traps() = %v", got)
			}
			if tc.trapHosts && w.Traps()[3] != w.URL(trapDomain, "/") {
				t.Errorf("Traps()[3] = %s", w.Traps()[3])
			}
			u := w.URL("x1."+trapDomain, "/")
			if w.IsTrap(u) != tc.trapHosts {
				t.Errorf("IsTrap(%s) = %v", u, w.IsTrap(u))
			}
			if w.IsTrap(w.Seeds()[0]) {
				t.Errorf("IsTrap(%s)", w.Seeds()[0])
			}

			home := w.URL(w.OrdinaryHosts()[0], "/")
			_, body := get(t, w, home)
			var links []string
			for _, l := range extractLinks(t, home, body) {
				if strings.Contains(l, trapDomain) {
					links = append(links, l)
				}
			}
			want := []string(nil)
			if tc.linked {
				want = []string{w.URL("x0."+trapDomain, "/")}
			}
			if !slices.Equal(links, want) {
				t.Errorf("h000 links %v into the trap, want %v", links, want)
			}
			if slices.Contains(w.Links(home), w.URL("x0."+trapDomain, "/")) != tc.linked {
				t.Errorf("Links(h000) and the trap entry disagree with the page")
			}

			conn, err := w.DialContext(context.Background(), "tcp", "x1."+trapDomain+":80")
			if tc.trapHosts {
				if err != nil {
					t.Fatalf("dial a trap host: %v", err)
				}
				conn.Close()
			} else {
				var dnsErr *net.DNSError
				if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
					t.Errorf("dial a trap host without the trap: %v, want not found", err)
				}
			}
			for _, host := range []string{"x1." + trapDomain, "nowhere.example", "x1.not" + trapDomain, trapDomain + ".evil"} {
				want := http.StatusMisdirectedRequest
				if tc.trapHosts && host == "x1."+trapDomain {
					want = 200
				}
				req, _ := http.NewRequest("GET", "http://"+w.Addr()+"/", nil)
				req.Host = host
				resp, err := w.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
				}
			}
		})
	}

	// The trap adds nothing to the finite web.
	if !slices.Equal(norm(on, on.Pages()), norm(off, off.Pages())) {
		t.Error("Pages differ with the trap")
	}
	if !slices.Equal(norm(on, on.Reachable("crawlkit")), norm(off, off.Reachable("crawlkit"))) {
		t.Error("Reachable differs with the trap")
	}
	for _, p := range append(on.Pages(), on.Reachable("crawlkit")...) {
		if on.IsTrap(p) || strings.Contains(p, trapDomain) {
			t.Fatalf("trap URL %s in the ground truth", p)
		}
	}

	// Requests into the trap are logged and change nothing Missed reports.
	on.ResetLog()
	before := on.Missed("crawlkit", nil)
	get(t, on, entry)
	get(t, on, on.URL("x1."+trapDomain, "/p/2"))
	raw(t, on, on.URL("x1."+trapDomain, "/robots.txt"))
	log := on.Log()
	if len(log) != 3 || log[0].Host != "x0."+trapDomain || log[1].Path != "/p/2" || log[2].Status != 404 {
		t.Errorf("log %+v", log)
	}
	if after := on.Missed("crawlkit", nil); !slices.Equal(after, before) {
		t.Errorf("Missed changed after requests into the trap: %d → %d pages", len(before), len(after))
	}
	if v := on.RobotsViolations("crawlkit"); len(v) != 0 {
		t.Errorf("violations %v", v)
	}
}

// TestSubdomainTrapRegistrableDomain: the trap and the ordinary hosts fall in
// different registrable domains, as per-domain budgets count them.
func TestSubdomainTrapRegistrableDomain(t *testing.T) {
	w := fetchtest.NewWeb(fetchtest.Config{Seed: 1, Hosts: 2, SubdomainTrap: "Explode.Test."})
	defer w.Close()
	for _, tc := range []struct{ host, want string }{
		{w.OrdinaryHosts()[1], "sim.test"},
		{w.Host(fetchtest.CalendarTrap), "sim.test"},
		{"x0." + trapDomain, trapDomain},
		{"x1." + trapDomain, trapDomain},
		{trapDomain, trapDomain},
	} {
		if got := urlnorm.Domain(tc.host); got != tc.want {
			t.Errorf("Domain(%s) = %s, want %s", tc.host, got, tc.want)
		}
	}
	if got := w.Traps()[3]; got != w.URL(trapDomain, "/") {
		t.Errorf("a SubdomainTrap in another case gives trap %s", got)
	}
}

func TestSubdomainTrapConfigRejected(t *testing.T) {
	for _, tc := range []struct {
		domain, trap string
	}{
		{"", "sim.test"},
		{"", "SIM.TEST."},
		{"", "x.sim.test"},
		{"a.explode.test", "explode.test"},
		{"", "a.explode.test"}, // not registrable: its domain is explode.test
		{"", "co.uk"},          // a public suffix
		{"", "test"},
	} {
		t.Run(tc.trap, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.HasPrefix(s, "fetchtest: Config.SubdomainTrap") {
					t.Errorf("NewWeb(Domain %q, SubdomainTrap %q) panicked with %v", tc.domain, tc.trap, r)
				}
			}()
			w := fetchtest.NewWeb(fetchtest.Config{Hosts: 1, Domain: tc.domain, SubdomainTrap: tc.trap})
			w.Close()
		})
	}
}

// TestConfigValidate: Validate returns the error NewWeb would panic with,
// so that a command can report a bad flag instead.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		trap string
		want string // "" for nil
	}{
		{"", ""},
		{"explode.test", ""},
		{"sim.test", "overlaps"},
		{"a.sim.test", "overlaps"},
		{"a.explode.test", "is not a registrable domain"},
	} {
		err := fetchtest.Config{SubdomainTrap: tc.trap}.Validate()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SubdomainTrap %q: %v, want %q", tc.trap, err, tc.want)
		}
	}
}
