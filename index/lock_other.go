//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package index

import "os"

// lockFile opens the lock file without locking: on systems without flock
// the caller must make sure that one process at a time opens a directory.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}
