package desktop

import (
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/testutil/testclock"
)

// newFakeClock is the package's fake clock: timers fire only when a test
// advances it; a trap (clock.Trap().NewTimer(tag)) lets a test wait until
// code under test has armed a timer.
func newFakeClock(t quartz.TestingT) *quartz.Mock {
	return testclock.At(t, time.Date(2026, 9, 24, 14, 27, 3, 0, time.UTC))
}
