//go:build !race

package e2etest

// raceEnabled is false without -race.
const raceEnabled = false
