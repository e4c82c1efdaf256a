//go:build !linux

package fetch

import "time"

// threadCPU is not measured on this platform.
func threadCPU() time.Duration { return 0 }
