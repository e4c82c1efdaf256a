package diskq

import "github.com/crawlkit/crawlkit/frontier"

// NewMercator opens (or creates) the store in dir and returns a Mercator
// frontier over it; closing the frontier closes the store. o and do may be
// nil: every field takes its default. o.Store is ignored: the frontier's
// store is the one in dir. The options are copied, so the caller may change
// or reuse them afterwards.
func NewMercator(dir string, o *frontier.Options, do *Options) (*frontier.Mercator, error) {
	s, err := Open(dir, do)
	if err != nil {
		return nil, err
	}
	m, err := frontier.NewMercator(withStore(o, s))
	if err != nil {
		s.Close()
		return nil, err
	}
	return m, nil
}

// NewFIFO is NewMercator for the FIFO baseline.
func NewFIFO(dir string, o *frontier.Options, do *Options) (*frontier.FIFO, error) {
	s, err := Open(dir, do)
	if err != nil {
		return nil, err
	}
	f, err := frontier.NewFIFO(withStore(o, s))
	if err != nil {
		s.Close()
		return nil, err
	}
	return f, nil
}

// withStore returns a copy of o (nil: the zero Options) whose Store is s.
func withStore(o *frontier.Options, s *Store) *frontier.Options {
	var c frontier.Options
	if o != nil {
		c = *o
	}
	c.Store = s
	return &c
}
