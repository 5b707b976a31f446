//go:build race

package e2etest

// raceEnabled is set when the test binary is built with -race.
const raceEnabled = true
