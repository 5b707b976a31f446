// Package leakcheck is the goroutine-leak gate of the packages that start
// goroutines: their TestMain runs the tests through Main, which fails the
// test binary when a goroutine is still running after every test and every
// package-level cleanup has finished (go.uber.org/goleak finds them).
package leakcheck

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Main runs the package's tests, then cleanups in order (stopping what the
// package's tests share, such as a PostgreSQL cluster), then — when the
// tests passed — looks for leaked goroutines. It returns the exit code for
// os.Exit. It is goleak.VerifyTestMain with cleanups that run before the
// check rather than after it.
func Main(m *testing.M, cleanups ...func()) int {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	if code != 0 {
		return code
	}
	if err := goleak.Find(options()...); err != nil {
		fmt.Fprintf(os.Stderr, "leakcheck: goroutines still running after the tests passed (a test or the code under test does not stop what it started):\n%v\n", err)
		return 1
	}
	return 0
}

// options are the goroutines that outlive the tests by design of a library,
// each with why it is not a leak of this module.
func options() []goleak.Option {
	return nil
}
