package render

import (
	"container/list"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/fetch"
)

// cache keeps the successful answers to a site's shared resources
// (scripts, styles, fonts, images) so that every page of the site does
// not ask for them again. Bounded in bytes, least recently used out
// first. Safe for concurrent use; get and put are O(1).
type cache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	ttl   time.Duration
	ll    *list.List // front: most recently used
	items map[string]*list.Element
}

type entry struct {
	key     string
	resp    *fetch.Response
	expires time.Time
	size    int64
}

func newCache(max int64, ttl time.Duration) *cache {
	return &cache{max: max, ttl: ttl, ll: list.New(), items: make(map[string]*list.Element)}
}

func (c *cache) get(key string, now time.Time) (*fetch.Response, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*entry)
	if !now.Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.ll.MoveToFront(el)
	return e.resp, true
}

// put stores resp under key if it may be reused (see cacheFor).
func (c *cache) put(key string, resp *fetch.Response, now time.Time) {
	ttl := cacheFor(resp, c.ttl, now)
	if ttl <= 0 {
		return
	}
	size := int64(len(key)+len(resp.Body)+len(resp.Wire)) + 512 // the header and the structs, roughly
	if size > c.max/8 {
		return // one big file must not flush a site's scripts
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	c.items[key] = c.ll.PushFront(&entry{key: key, resp: resp, expires: now.Add(ttl), size: size})
	c.size += size
	for c.size > c.max {
		c.remove(c.ll.Back())
	}
}

func (c *cache) remove(el *list.Element) {
	e := el.Value.(*entry)
	c.ll.Remove(el)
	delete(c.items, e.key)
	c.size -= e.size
}

// cacheFor returns how long resp may be reused: 0 for a status other
// than 200, a truncated body, Cache-Control no-store or no-cache, or
// max-age=0. Scripts, styles, fonts and images, which a site's pages
// share and seldom change during a crawl, are kept for max-age or else
// def; any other type (HTML, JSON data, which a page's scripts fetch
// because it changes) only when max-age or Expires says so.
func cacheFor(resp *fetch.Response, def time.Duration, now time.Time) time.Duration {
	if resp.Status != http.StatusOK || resp.Truncated {
		return 0
	}
	maxAge, hasMaxAge := time.Duration(0), false
	for _, v := range resp.Header.Values("Cache-Control") {
		for d := range strings.SplitSeq(strings.ToLower(v), ",") {
			d = strings.TrimSpace(d)
			switch {
			case d == "no-store", d == "no-cache":
				return 0
			case strings.HasPrefix(d, "max-age="):
				n, err := strconv.ParseInt(strings.Trim(d[len("max-age="):], `"`), 10, 64)
				if err != nil || n <= 0 {
					return 0
				}
				maxAge, hasMaxAge = time.Duration(min(n, 365*24*3600))*time.Second, true
			}
		}
	}
	if hasMaxAge {
		return maxAge
	}
	if asset(resp.ContentType) {
		return def
	}
	if exp := resp.Header.Get("Expires"); exp != "" {
		if t, err := http.ParseTime(exp); err == nil && t.After(now) {
			return t.Sub(now)
		}
	}
	return 0
}

// asset reports the media types of a site's shared resources.
func asset(mt string) bool {
	switch mt {
	case "text/css", "text/javascript", "application/javascript", "application/x-javascript",
		"text/ecmascript", "application/ecmascript", "application/wasm":
		return true
	}
	return strings.HasPrefix(mt, "image/") || strings.HasPrefix(mt, "font/") ||
		strings.HasPrefix(mt, "application/font-") || strings.HasPrefix(mt, "application/x-font")
}
