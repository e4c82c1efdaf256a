package crawlkit

import (
	"sync"
	"time"
)

// maxWorkers bounds Config.Workers: a crawl runs up to twice as many
// goroutines (see workerPool), and the index of each is a ContactRecorder
// slot.
const maxWorkers = 1 << 14

// workerPool keeps Config.Workers goroutines fetching. A worker that waits
// on something other than the fetch (the content-seen test's answer from
// another node, a remote commit) lends its place for the wait: a new
// worker starts, so the crawl keeps Workers fetches going and a slow
// answer costs each page its latency, not the crawl its rate. A worker
// that finishes a page while more than Workers are fetching leaves. At
// most Workers more goroutines run than Workers, so the pages in flight
// stay bounded (2 × Workers).
//
// The indices of the workers that left are given to the next ones, so a
// ContactRecorder sees at most 2 × Workers slots.
type workerPool struct {
	mu      sync.Mutex
	n       int // Config.Workers
	active  int // running and not waiting
	running int
	free    []int
	next    int
	start   func(i int) // starts worker i; nil outside Run
	lent    uint64      // places lent: workers started for a wait
}

// init sets the pool up for a run of n workers, each started by start.
func (p *workerPool) init(n int, start func(i int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n, p.active, p.running, p.free, p.next, p.start = n, 0, 0, nil, 0, start
}

// spawnLocked starts a worker. Called with p.mu held.
func (p *workerPool) spawnLocked() {
	i := p.next
	if k := len(p.free); k > 0 {
		i = p.free[k-1]
		p.free = p.free[:k-1]
	} else {
		p.next++
	}
	p.active++
	p.running++
	p.start(i)
}

// startAll starts the run's Workers workers.
func (p *workerPool) startAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.n {
		p.spawnLocked()
	}
}

// surplus reports whether more than Workers are fetching, in which case
// worker i leaves (it must return at once: its place is given up).
func (p *workerPool) surplus(i int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active <= p.n {
		return false
	}
	p.leaveLocked(i)
	return true
}

// leave records that worker i returned.
func (p *workerPool) leave(i int) {
	p.mu.Lock()
	p.leaveLocked(i)
	p.mu.Unlock()
}

func (p *workerPool) leaveLocked(i int) {
	p.active--
	p.running--
	p.free = append(p.free, i)
}

// lendAfter is how long a worker waits before it lends its place: a
// content test or State answering from memory never does.
const lendAfter = time.Millisecond

// wait runs f; if f has not returned after lendAfter, it lends the
// calling worker's place to a new worker for the rest of the wait, when
// fewer than Workers would fetch without it.
func (p *workerPool) wait(f func()) {
	l := &loan{p: p}
	t := time.AfterFunc(lendAfter, l.lend)
	f()
	t.Stop()
	p.mu.Lock()
	l.done = true
	if l.lent {
		p.active++
	}
	p.mu.Unlock()
}

// loan is one wait of a worker.
type loan struct {
	p    *workerPool
	done bool // the wait is over (under p.mu)
	lent bool // the worker's place was lent (under p.mu)
}

func (l *loan) lend() {
	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.done {
		return
	}
	l.lent = true
	p.active--
	if p.start != nil && p.active < p.n && p.running < 2*p.n {
		p.lent++
		p.spawnLocked()
	}
}

// waitErr is wait for a function with an error.
func (p *workerPool) waitErr(f func() error) (err error) {
	p.wait(func() { err = f() })
	return err
}
