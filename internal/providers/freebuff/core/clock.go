package core

import (
	"time"

	"github.com/coder/quartz"
)

// Sleep waits for d on clock c or until done is closed; it reports whether
// the full duration elapsed. tags name the timer, so that a test can trap
// it (quartz.Mock.Trap).
func Sleep(c quartz.Clock, d time.Duration, done <-chan struct{}, tags ...string) bool {
	t := c.NewTimer(d, tags...)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
