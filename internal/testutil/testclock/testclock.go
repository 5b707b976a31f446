// Package testclock is how a test gets the runtime's one fake clock: a
// github.com/coder/quartz Mock standing at a given instant. Its timers fire
// only when the test advances it (Advance(d).MustWait(ctx)), and a trap
// (Trap().NewTimer(tags...)) lets a test wait until the code under test has
// armed a timer, so timing is tested without sleeping.
package testclock

import (
	"context"
	"time"

	"github.com/coder/quartz"
)

// At returns a fake clock standing at at.
func At(t quartz.TestingT, at time.Time) *quartz.Mock {
	c := quartz.NewMock(t)
	c.Set(at)
	return c
}

// Pass moves c forward by d, firing every timer and ticker due on the way
// and waiting for each to run. Unlike c.Advance(d), which refuses to jump
// past the next event, it suits a test that only needs time to have passed
// while background work (a heartbeat, a lease) still has timers armed.
func Pass(ctx context.Context, c *quartz.Mock, d time.Duration) {
	for d > 0 {
		step := d
		if next, ok := c.Peek(); ok && next < step {
			step = next
		}
		c.Advance(step).MustWait(ctx)
		d -= step
	}
}
