package freebuff

import (
	"sync"
	"time"
)

// fakeClock is a manual clock. Timers fire only on Advance; Armed lets a
// test wait until code under test has created a timer.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	armed  chan time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 9, 24, 14, 27, 3, 0, time.UTC), armed: make(chan time.Duration, 1024)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	t := &fakeTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.fired = true
		t.ch <- c.now
	} else {
		c.timers = append(c.timers, t)
	}
	c.mu.Unlock()
	select {
	case c.armed <- d:
	default:
	}
	return t
}

// Advance moves time forward and fires due timers.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	keep := c.timers[:0]
	for _, t := range c.timers {
		if !t.stopped && !t.fired && !t.at.After(c.now) {
			t.fired = true
			t.ch <- c.now
			continue
		}
		if !t.stopped && !t.fired {
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
}

// Armed waits for the next timer creation and returns its duration.
func (c *fakeClock) Armed() time.Duration { return <-c.armed }

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	ch      chan time.Time
	fired   bool
	stopped bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.fired && !t.stopped
	t.stopped = true
	return was
}
