package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/coder/quartz"
)

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
func withDeadline(parent context.Context, clock quartz.Clock, d time.Duration, scope string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	timer := clock.AfterFunc(d, func() { cancel(&DeadlineError{Scope: scope, After: d}) })
	return ctx, func() {
		timer.Stop()
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
