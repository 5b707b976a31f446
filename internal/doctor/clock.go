package doctor

import (
	"context"
	"fmt"
	"time"
)

// Clock is doctor's time source: it stamps durations and fires the
// deadlines. Tests pass a fake to make timeouts deterministic.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed; stop
	// prevents that if it has not happened yet.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// DeadlineError is the cause of a context doctor ended because a deadline
// passed.
type DeadlineError struct {
	// Scope is what the deadline bounds: "doctor" (the whole run) or a
	// provider's name.
	Scope string
	After time.Duration
}

func (e *DeadlineError) Error() string {
	if e.Scope == "doctor" {
		return fmt.Sprintf("doctor's overall deadline (%s) passed", e.After)
	}
	return fmt.Sprintf("the %s deadline (%s) passed", e.Scope, e.After)
}

// withDeadline returns a context that clock cancels after d with cause
// &DeadlineError{scope, d}, and its cancel function.
func withDeadline(parent context.Context, clock Clock, d time.Duration, scope string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := clock.AfterFunc(d, func() { cancel(&DeadlineError{Scope: scope, After: d}) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// deadlineOf returns the DeadlineError that ended ctx, if that is what
// ended it.
func deadlineOf(ctx context.Context) *DeadlineError {
	if ctx.Err() == nil {
		return nil
	}
	de, _ := context.Cause(ctx).(*DeadlineError)
	return de
}

func millis(d time.Duration) int64 { return d.Milliseconds() }
