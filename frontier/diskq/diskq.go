package diskq

import "github.com/crawlkit/crawlkit/frontier"

// NewMercator opens (or creates) the store in dir and returns a Mercator
// frontier over it; closing the frontier closes the store. do may be nil.
func NewMercator(dir string, o frontier.Options, do *Options) (*frontier.Mercator, error) {
	s, err := Open(dir, do)
	if err != nil {
		return nil, err
	}
	o.Store = s
	m, err := frontier.NewMercator(o)
	if err != nil {
		s.Close()
		return nil, err
	}
	return m, nil
}

// NewFIFO is NewMercator for the FIFO baseline.
func NewFIFO(dir string, o frontier.Options, do *Options) (*frontier.FIFO, error) {
	s, err := Open(dir, do)
	if err != nil {
		return nil, err
	}
	o.Store = s
	f, err := frontier.NewFIFO(o)
	if err != nil {
		s.Close()
		return nil, err
	}
	return f, nil
}
