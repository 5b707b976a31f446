package opencode

import "time"

// Clock is the adapter's source of time. Tests inject a fake to drive the
// event stream's heartbeat timeout and reconnect back-off deterministically.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d, unless stopped.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a stoppable, resettable timer made by a Clock.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
