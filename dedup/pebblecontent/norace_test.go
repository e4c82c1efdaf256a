//go:build !race

package pebblecontent_test

const raceEnabled = false
