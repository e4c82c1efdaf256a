//go:build !race

package pebbleseen_test

const raceEnabled = false
