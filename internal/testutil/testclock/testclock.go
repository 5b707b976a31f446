// Package testclock is how a test gets the runtime's one fake clock: a
// github.com/coder/quartz Mock standing at a given instant. Its timers fire
// only when the test advances it (Advance(d).MustWait(ctx)), and a trap
// (Trap().NewTimer(tags...)) lets a test wait until the code under test has
// armed a timer, so timing is tested without sleeping.
package testclock

import (
	"time"

	"github.com/coder/quartz"
)

// At returns a fake clock standing at at.
func At(t quartz.TestingT, at time.Time) *quartz.Mock {
	c := quartz.NewMock(t)
	c.Set(at)
	return c
}
