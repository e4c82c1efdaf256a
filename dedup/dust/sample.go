package dust

import (
	"container/list"
	"hash/maphash"
	"iter"
	"strings"
)

// hostSample is the recent sample of one host: its last fetches (URL and
// content fingerprint) in a ring, indexed by URL hash, and the images of
// its URLs under the DropParam and DropQuery candidates.
type hostSample struct {
	name  string
	ring  []entry
	next  int // the slot the next fetch replaces, once the ring is full
	index map[uint64]int32
	// img maps (rule, URL without the parameter or query) to the first
	// sampled URL with that image: two generations, the older dropped
	// when the newer fills.
	img  [2]map[uint64]image
	elem *list.Element
}

type entry struct {
	h, fp uint64
	url   string
}

type image struct{ h, fp, val uint64 }

// entries yields the sample, oldest first.
func (s *hostSample) entries() iter.Seq[*entry] {
	return func(yield func(*entry) bool) {
		n := len(s.ring)
		for i := range n {
			if !yield(&s.ring[(s.next+i)%n]) {
				return
			}
		}
	}
}

// hostSample returns host's sample, created if new, and marks it most
// recently observed.
func (l *Learner) hostSample(host string) *hostSample {
	s := l.hosts[host]
	if s == nil {
		s = &hostSample{name: host, index: make(map[uint64]int32)}
		s.elem = l.lru.PushFront(s)
		l.hosts[host] = s
		return s
	}
	l.lru.MoveToFront(s.elem)
	return s
}

// sampleAdd adds a fetch to s, replacing its oldest when s is full and
// dropping the least recently observed hosts when the whole sample is.
func (l *Learner) sampleAdd(s *hostSample, h, fp uint64, url string) {
	if i, ok := s.index[h]; ok && s.ring[i].url == url {
		s.ring[i].fp = fp // fetched again
		return
	}
	e := entry{h, fp, url}
	if len(s.ring) < l.opts.HostSample {
		s.index[h] = int32(len(s.ring))
		s.ring = append(s.ring, e)
		l.sampled++
		for l.sampled > l.opts.SampleSize {
			old := l.lru.Back().Value.(*hostSample)
			if old == s {
				break
			}
			l.lru.Remove(old.elem)
			delete(l.hosts, old.name)
			l.sampled -= len(old.ring)
		}
		return
	}
	old := &s.ring[s.next]
	if j, ok := s.index[old.h]; ok && int(j) == s.next {
		delete(s.index, old.h)
	}
	*old = e
	s.index[h] = int32(s.next)
	s.next = (s.next + 1) % len(s.ring)
}

// lookup returns the hash and fingerprint of url if it is in host's
// sample.
func (l *Learner) lookup(host string, url []byte) (h, fp uint64, ok bool) {
	s := l.hosts[host]
	if s == nil {
		return 0, 0, false
	}
	h = maphash.Bytes(l.seed, url)
	i, ok := s.index[h]
	if !ok || s.ring[i].url != string(url) {
		return 0, 0, false
	}
	return h, s.ring[i].fp, true
}

func (s *hostSample) image(k uint64) (image, bool) {
	for _, m := range s.img {
		if v, ok := m[k]; ok {
			return v, true
		}
	}
	return image{}, false
}

func (s *hostSample) putImage(k uint64, v image, limit int) {
	if s.img[0] == nil || len(s.img[0]) >= max(limit/2, 1) {
		s.img[1], s.img[0] = s.img[0], make(map[uint64]image)
	}
	s.img[0][k] = v
}

func (l *Learner) imageKey(id RuleID, url []byte) uint64 {
	return maphash.Bytes(l.seed, url) ^ mix(uint64(id)+1)
}

// checkAll checks the fetch of u against the rules naming its host or
// another host of its alias group.
func (l *Learner) checkAll(u string, p parts, h, fp uint64) {
	l.gen++
	hosts := []string{p.host}
	if s := l.snap.Load(); s != nil {
		if g := s.groups[p.host]; g != nil {
			hosts = g
		}
	}
	for _, hh := range hosts {
		for _, c := range l.byHost[hh] {
			if c.mark == l.gen || c.state == Withdrawn {
				continue
			}
			c.mark = l.gen
			l.check(c, u, p, h, fp)
		}
	}
}

// check compares the fetch of u (hash h, fingerprint fp) with the
// sampled fetches that c maps it to or from: equal content is a
// supporting pair, different content a counterexample.
func (l *Learner) check(c *cand, u string, p parts, h, fp uint64) {
	b := l.buf[:0]
	defer func() { l.buf = b }()
	switch c.kind {
	case HostAlias:
		other := c.to
		switch p.host {
		case c.to:
			other = c.from
		case c.from:
		default:
			return
		}
		b = appendURL(b, p.scheme, other, p.path, p.hasQuery, p.query)
		if oh, ofp, ok := l.lookup(other, b); ok {
			l.compare(c, p, h, fp, oh, ofp, 0)
		}
	case PathPrefix:
		var path string
		switch {
		case strings.HasPrefix(p.path, c.from):
			path = c.to + p.path[len(c.from):]
		case strings.HasPrefix(p.path, c.to):
			path = c.from + p.path[len(c.to):]
		default:
			return
		}
		b = appendURL(b, p.scheme, p.host, path, p.hasQuery, p.query)
		if oh, ofp, ok := l.lookup(p.host, b); ok {
			l.compare(c, p, h, fp, oh, ofp, 0)
		}
	case DefaultDoc:
		b = appendURL(b, p.scheme, p.host, p.path, false, "")
		switch n := len(p.path) - len(c.from); {
		case n > 0 && p.path[n-1] == '/' && p.path[n:] == c.from:
			b = b[:len(b)-len(c.from)]
		case strings.HasSuffix(p.path, "/"):
			b = append(b, c.from...)
		default:
			return
		}
		if p.hasQuery {
			b = append(b, '?')
			b = append(b, p.query...)
		}
		if oh, ofp, ok := l.lookup(p.host, b); ok {
			l.compare(c, p, h, fp, oh, ofp, 0)
		}
	case DropParam, DropQuery:
		applies := false
		if c.kind == DropParam {
			applies = p.hasQuery && hasParam(p.query, c.from)
		} else if p.path != c.from {
			return
		} else {
			applies = p.hasQuery
		}
		hs := l.hosts[p.host]
		if hs == nil {
			return
		}
		if !applies {
			// u may be the image of URLs sampled before it.
			b = append(b, u...)
			if im, ok := hs.image(l.imageKey(c.id, b)); ok {
				l.compare(c, p, h, fp, im.h, im.fp, im.val)
			}
			return
		}
		c.see(p)
		b = appendURL(b, p.scheme, p.host, p.path, false, "")
		if c.kind == DropParam {
			n := len(b)
			b = append(b, '?')
			var left bool
			if b, left = appendWithout(b, p.query, c.from); !left {
				b = b[:n]
			}
		}
		if oh, ofp, ok := l.lookup(p.host, b); ok {
			l.compare(c, p, h, fp, oh, ofp, 0)
		}
		// Siblings, another URL with the same image: a different content
		// is a counterexample; the same, a pair of two values of a
		// DropParam's parameters (see Probation in the package
		// documentation), no support for a DropQuery, whose canonical
		// form only the URL without the query can show.
		k := l.imageKey(c.id, b)
		if im, ok := hs.image(k); ok {
			switch {
			case im.h == h:
			case im.fp != fp:
				l.counter(c)
			case c.kind == DropParam:
				l.addSupport(c, h, c.value(p), im.val, true)
			}
		} else {
			hs.putImage(k, image{h, fp, c.value(p)}, l.opts.HostSample)
		}
	}
}

// compare takes the fetch of p (hash h, fingerprint fp) and the sampled
// fetch oh (fingerprint ofp, parameter value oval) as evidence for or
// against c.
func (l *Learner) compare(c *cand, p parts, h, fp, oh, ofp, oval uint64) {
	switch {
	case h == oh:
	case fp != ofp:
		l.counter(c)
	case c.rewrites(p):
		l.addSupport(c, h, c.value(p), 0, false)
	default:
		l.addSupport(c, oh, oval, 0, false)
	}
}
