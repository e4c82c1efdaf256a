package frontier

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// URLFilter decides whether a link may enter the frontier (the "URL
// filter" box of IIR Figure 20.1). Filter returns nil to accept and a
// *Rejection to refuse. Implementations must be safe for concurrent use.
type URLFilter interface {
	Filter(u *url.URL) error
}

// FilterFunc adapts a function to URLFilter.
type FilterFunc func(u *url.URL) error

// Filter calls f(u).
func (f FilterFunc) Filter(u *url.URL) error { return f(u) }

// Chain applies filters in order and returns the first rejection. Put
// stateful filters such as HostBudget last, so they only count URLs the
// others accept. The zero Chain accepts everything.
type Chain []URLFilter

// Filter implements URLFilter.
func (c Chain) Filter(u *url.URL) error {
	for _, f := range c {
		if err := f.Filter(u); err != nil {
			return err
		}
	}
	return nil
}

// Reason classifies a rejection so the crawler can count them.
type Reason uint8

// Rejection reasons.
const (
	ReasonOther Reason = iota
	ReasonScheme
	ReasonDomain
	ReasonPattern
	ReasonLength
	ReasonPathDepth
	ReasonRepeatedSegment
	ReasonQueryParams
	ReasonHostBudget
	ReasonExtension
	numReasons
)

var reasonNames = [numReasons]string{"other", "scheme", "domain", "pattern", "length", "path-depth", "repeated-segment", "query-params", "host-budget", "extension"}

// String returns a short lowercase name such as "repeated-segment".
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// ErrRejected is the sentinel every Rejection unwraps to.
var ErrRejected = errors.New("frontier: url rejected")

// Rejection is the error a URLFilter returns: why URL was refused.
type Rejection struct {
	Reason Reason
	URL    string
	Detail string
}

// Error describes the rejection; the URL is quoted.
func (e *Rejection) Error() string {
	return fmt.Sprintf("frontier: url %q rejected (%s): %s", e.URL, e.Reason, e.Detail)
}

// Unwrap returns ErrRejected.
func (e *Rejection) Unwrap() error { return ErrRejected }

// ReasonOf returns the reason of a rejection error, and false when err is
// not a *Rejection.
func ReasonOf(err error) (Reason, bool) {
	var r *Rejection
	if errors.As(err, &r) {
		return r.Reason, true
	}
	return 0, false
}

func reject(r Reason, u *url.URL, format string, args ...any) error {
	return &Rejection{Reason: r, URL: u.String(), Detail: fmt.Sprintf(format, args...)}
}

// Defaults of the filters built by DefaultFilters.
const (
	DefaultMaxLength        = 2048
	DefaultMaxPathDepth     = 16
	DefaultRepeatedSegments = 3
	DefaultMaxQueryParams   = 8
)

// DefaultFilters returns the chain a crawler starts from: http and https
// only, URLs of at most 2,048 bytes, path depth ≤ 16, no path segment
// seen 3 times, ≤ 8 query parameters, no non-page file extension.
func DefaultFilters() Chain {
	return Chain{
		Schemes("http", "https"),
		MaxLength(DefaultMaxLength),
		MaxPathDepth(DefaultMaxPathDepth),
		RepeatedSegments(DefaultRepeatedSegments),
		MaxQueryParams(DefaultMaxQueryParams),
		Extensions(nil),
	}
}

// Schemes accepts only URLs whose scheme is one of schemes (case
// insensitive).
func Schemes(schemes ...string) URLFilter {
	return FilterFunc(func(u *url.URL) error {
		for _, s := range schemes {
			if strings.EqualFold(u.Scheme, s) {
				return nil
			}
		}
		return reject(ReasonScheme, u, "scheme %q", u.Scheme)
	})
}

// Domains accepts a URL whose host is one of include or a subdomain of one
// (when include is not empty) and neither one of exclude nor a subdomain
// of one. O(len(include) + len(exclude)).
func Domains(include, exclude []string) URLFilter {
	return FilterFunc(func(u *url.URL) error {
		h := u.Hostname()
		for _, s := range exclude {
			if hasDomainSuffix(h, s) {
				return reject(ReasonDomain, u, "host %q under excluded %q", h, s)
			}
		}
		if len(include) == 0 {
			return nil
		}
		for _, s := range include {
			if hasDomainSuffix(h, s) {
				return nil
			}
		}
		return reject(ReasonDomain, u, "host %q outside the included domains", h)
	})
}

// Patterns accepts a URL matching at least one of include (when not
// empty) and none of exclude.
func Patterns(include, exclude []*regexp.Regexp) URLFilter {
	return FilterFunc(func(u *url.URL) error {
		s := u.String()
		for _, re := range exclude {
			if re.MatchString(s) {
				return reject(ReasonPattern, u, "matches excluded %s", re)
			}
		}
		if len(include) == 0 {
			return nil
		}
		for _, re := range include {
			if re.MatchString(s) {
				return nil
			}
		}
		return reject(ReasonPattern, u, "matches no included pattern")
	})
}

// MaxLength refuses URLs longer than n bytes in their String form (n < 0
// counts as 0: every URL is refused). A URL whose parts cannot add up to
// more than n is accepted without building that form (every link of a
// crawl passes here).
func MaxLength(n int) URLFilter {
	n = max(n, 0)
	return FilterFunc(func(u *url.URL) error {
		if maxStringLen(u) <= n {
			return nil
		}
		if l := len(u.String()); l > n {
			return &Rejection{Reason: ReasonLength, URL: u.String()[:n] + "...", Detail: fmt.Sprintf("%d bytes > %d", l, n)}
		}
		return nil
	})
}

// maxStringLen bounds len(u.String()) from above without allocating: each
// part at its length, escaped parts at three bytes a byte (%XX), plus the
// delimiters String may add.
func maxStringLen(u *url.URL) int {
	n := len(u.Scheme) + len(u.Opaque) + len(u.RawPath) + len(u.RawQuery) + len(u.RawFragment) +
		3*(len(u.Host)+len(u.Path)+len(u.Fragment)) + len("://") + len("/./") + len("?") + len("#")
	if u.User != nil {
		p, _ := u.User.Password()
		n += 3*(len(u.User.Username())+len(p)) + len(":@")
	}
	return n
}

// MaxPathDepth refuses URLs with more than n non-empty path segments.
func MaxPathDepth(n int) URLFilter {
	return FilterFunc(func(u *url.URL) error {
		d := 0
		for s, p := nextSegment(u.EscapedPath()); s != ""; s, p = nextSegment(p) {
			d++
		}
		if d > n {
			return reject(ReasonPathDepth, u, "path depth %d > %d", d, n)
		}
		return nil
	})
}

// RepeatedSegments refuses URLs in which one path segment occurs n times
// or more (/a/b/a/b/a/...): the signature of relative-link spider traps.
//
// Up to 16 distinct segments (MaxPathDepth's default) are counted in place
// without allocating; a longer path falls back to a map, so the cost stays
// linear in the path however many segments a trap's URL has.
func RepeatedSegments(n int) URLFilter {
	return FilterFunc(func(u *url.URL) error {
		var seenBuf [16]string
		var countBuf [16]int
		seen, counts := seenBuf[:0], countBuf[:0]
		var many map[string]int
		bad := ""
		for s, p := nextSegment(u.EscapedPath()); s != ""; s, p = nextSegment(p) {
			c := 1
			if many != nil {
				c = many[s] + 1
				many[s] = c
			} else if i := slices.Index(seen, s); i >= 0 {
				counts[i]++
				c = counts[i]
			} else if len(seen) < len(seenBuf) {
				seen, counts = append(seen, s), append(counts, 1)
			} else {
				many = make(map[string]int, 2*len(seen))
				for i, t := range seen {
					many[t] = counts[i]
				}
				many[s] = 1
			}
			if c >= n {
				bad = s
				break
			}
		}
		if bad != "" {
			return reject(ReasonRepeatedSegment, u, "segment %q seen %d times", bad, n)
		}
		return nil
	})
}

// nextSegment returns the first non-empty segment of the path p and what
// follows it; seg is "" when there is none.
func nextSegment(p string) (seg, rest string) {
	for p != "" {
		i := strings.IndexByte(p, '/')
		switch {
		case i < 0:
			return p, ""
		case i > 0:
			return p[:i], p[i+1:]
		}
		p = p[1:]
	}
	return "", ""
}

// MaxQueryParams refuses URLs with more than n query parameters.
func MaxQueryParams(n int) URLFilter {
	return FilterFunc(func(u *url.URL) error {
		if u.RawQuery == "" {
			return nil
		}
		c := 0
		for q := u.RawQuery; q != ""; {
			var p string
			p, q, _ = strings.Cut(q, "&")
			if p != "" {
				c++
			}
		}
		if c > n {
			return reject(ReasonQueryParams, u, "%d query parameters > %d", c, n)
		}
		return nil
	})
}

// NonPageExtensions returns (a fresh copy of) the file extensions
// Extensions(nil) refuses: images, media, archives, binaries, style sheets
// and scripts.
func NonPageExtensions() []string { return slices.Clone(nonPageExtensions) }

var nonPageExtensions = []string{
	".7z", ".apk", ".avi", ".bin", ".bmp", ".bz2", ".css", ".dmg", ".doc", ".docx",
	".eot", ".exe", ".flac", ".flv", ".gif", ".gz", ".ico", ".iso", ".jar", ".jpeg",
	".jpg", ".js", ".m4a", ".m4v", ".mkv", ".mov", ".mp3", ".mp4", ".mpeg", ".mpg",
	".msi", ".ogg", ".otf", ".png", ".ppt", ".pptx", ".rar", ".svg", ".tar", ".tgz",
	".tif", ".tiff", ".ttf", ".wav", ".webm", ".webp", ".wmv", ".woff", ".woff2",
	".xls", ".xlsx", ".xz", ".zip",
}

// Extensions refuses URLs whose last path segment ends with one of exts
// (case insensitive, with the dot); nil means NonPageExtensions().
func Extensions(exts []string) URLFilter {
	if exts == nil {
		exts = nonPageExtensions
	}
	set := make(map[string]bool, len(exts))
	for _, e := range exts {
		set[strings.ToLower(e)] = true
	}
	return FilterFunc(func(u *url.URL) error {
		e := strings.ToLower(path.Ext(u.Path))
		if e != "" && set[e] {
			return reject(ReasonExtension, u, "extension %q", e)
		}
		return nil
	})
}

// HostBudget accepts at most Max URLs per host (u.Hostname(), lower
// case) and refuses the rest: it bounds what one host, trap or not, can
// cost a crawl loop built on the frontier alone. It counts every URL it
// accepts, duplicates included, so put it last in a Chain, and it keeps
// its counts in memory. crawlkit.Crawler does not use it: its budgets
// (Config.MaxPagesPerHost, MaxPagesPerDomain, MaxHostsPerDomain) count
// the URLs it admits after the URL-seen test, in the crawl's State, so
// that they hold across restarts. Safe for concurrent use; 1 map entry
// per host.
type HostBudget struct {
	Max int

	mu     sync.Mutex
	counts map[string]int
}

// NewHostBudget returns a HostBudget of max URLs per host.
func NewHostBudget(max int) *HostBudget { return &HostBudget{Max: max} }

// Filter implements URLFilter.
func (b *HostBudget) Filter(u *url.URL) error {
	h := strings.ToLower(u.Hostname())
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.counts == nil {
		b.counts = make(map[string]int)
	}
	if b.counts[h] >= b.Max {
		return reject(ReasonHostBudget, u, "host %q spent its %d URLs", h, b.Max)
	}
	b.counts[h]++
	return nil
}

// Count returns the number of URLs accepted for host.
func (b *HostBudget) Count(host string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts[strings.ToLower(host)]
}
