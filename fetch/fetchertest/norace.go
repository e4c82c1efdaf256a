//go:build !race

package fetchertest

const raceEnabled = false
