package pebblecontent

import "errors"

var (
	// ErrInvalidOptions is returned (wrapped in a *dedup.Error) by Open and
	// New for out-of-range or inapplicable options.
	ErrInvalidOptions = errors.New("pebblecontent: invalid options")
	// ErrMismatch is returned (wrapped in a *dedup.Error) by Open and New
	// when the store was created with other options: another mode
	// (ExactOnly), or another K, W, seed, method, banding or Bits, which
	// would make its signatures and band keys meaningless.
	ErrMismatch = errors.New("pebblecontent: store created with other options")
	// ErrCorrupt is wrapped by the *dedup.Error of an operation that read
	// a damaged value; its Subject names the key.
	ErrCorrupt = errors.New("pebblecontent: corrupt value")
)
