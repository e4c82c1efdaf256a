//go:build !race

package graphtest

const raceEnabled = false
