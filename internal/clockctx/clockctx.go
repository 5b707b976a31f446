// Package clockctx gives a context a deadline on the runtime's injected
// clock (github.com/coder/quartz) instead of the wall clock, so a test
// that drives the clock with quartz's mock drives the deadline too.
//
// The deadline is not reported by Deadline (which keeps the parent's):
// code below the context that reads Deadline, such as a network dial,
// compares it with the wall clock, on which a mock clock's instants mean
// nothing. When the clock's timer fires, Err reports
// context.DeadlineExceeded, as context.WithTimeout's would.
package clockctx

import (
	"context"
	"time"

	"github.com/coder/quartz"
)

// WithTimeout returns a copy of parent that ends d after now on clock, and
// the function that releases its timer (call it, as with
// context.WithTimeout). tags name the timer for quartz.Mock.Trap.
func WithTimeout(parent context.Context, clock quartz.Clock, d time.Duration, tags ...string) (context.Context, context.CancelFunc) {
	inner, cancel := context.WithCancelCause(parent)
	timer := clock.AfterFunc(d, func() { cancel(context.DeadlineExceeded) }, tags...)
	return &timeoutCtx{Context: inner}, func() {
		timer.Stop()
		cancel(context.Canceled)
	}
}

// timeoutCtx reports context.DeadlineExceeded when its timer ended it.
type timeoutCtx struct{ context.Context }

func (c *timeoutCtx) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}
