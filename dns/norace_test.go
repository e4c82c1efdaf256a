//go:build !race

package dns

import "time"

// fastLimit is the time within which lookups not stuck behind a slow name
// must finish (IIR §20.2.2: one slow lookup must not block the others).
const fastLimit = 100 * time.Millisecond
