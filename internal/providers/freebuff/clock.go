package freebuff

import (
	"time"

	"github.com/coder/quartz"
)

// Timer tags: tests trap these (quartz.Mock.Trap) to wait until a timer is
// armed.
const (
	tagBackoff = "freebuff-backoff" // the event stream's reconnect back-off
	tagWait    = "freebuff-wait"    // a bounded wait for progress
)

// sleep waits for d on clock c or until done is closed; it reports whether
// the full duration elapsed. tags name the timer (see tagBackoff).
func sleep(c quartz.Clock, d time.Duration, done <-chan struct{}, tags ...string) bool {
	t := c.NewTimer(d, tags...)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
