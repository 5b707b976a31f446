// Package wait is the tests' one way to wait for a condition: poll it with
// a growing interval until it holds or a deadline passes, then fail naming
// what was awaited. Deadlines are generous (a loaded machine is slow); a
// test never sleeps a fixed time instead of waiting for what it needs.
package wait

import (
	"testing"
	"time"
)

// Generous deadlines for conditions, by what the test waits on.
const (
	// InProcess: goroutines of the test's own process.
	InProcess = 30 * time.Second
	// Process: another process (a child, a real provider program, a
	// database server), which a loaded machine may start slowly.
	Process = 2 * time.Minute
)

// For polls cond until it returns true, starting every millisecond and
// backing off to every 100 ms; after timeout it fails tb with "timed out
// after <timeout> waiting for <what>".
func For(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	if !Until(timeout, cond) {
		tb.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// Until polls cond like For and reports whether it held before timeout,
// for a caller that fails in its own words (or outside a test's goroutine).
func Until(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	interval := time.Millisecond
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
		interval = min(2*interval, 100*time.Millisecond)
	}
}

// Recv waits for a value from ch for up to timeout and returns it; after
// timeout it fails tb with "timed out after <timeout> waiting for <what>".
// A closed channel counts as received (the zero value is returned).
func Recv[T any](tb testing.TB, what string, timeout time.Duration, ch <-chan T) T {
	tb.Helper()
	v, ok := RecvWithin(timeout, ch)
	if !ok {
		tb.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
	return v
}

// RecvWithin is Recv for a caller that fails in its own words (or outside
// a test's goroutine): ok is false when nothing arrived before timeout.
func RecvWithin[T any](timeout time.Duration, ch <-chan T) (v T, ok bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case v = <-ch:
		return v, true
	case <-timer.C:
		return v, false
	}
}
