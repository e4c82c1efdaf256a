//go:build race

package dns

import "time"

// fastLimit is the time within which lookups not stuck behind a slow name
// must finish. The race detector slows the code path about tenfold.
const fastLimit = 400 * time.Millisecond
