//go:build !unix

package webgraph

import "time"

func cpuTime() time.Duration { return 0 }
