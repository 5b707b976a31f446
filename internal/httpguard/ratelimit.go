package httpguard

import (
	"sync"
	"time"

	"github.com/coder/quartz"
)

// limiter counts requests per key in fixed windows, as 0.3.x did: the
// first request of a key opens a window; up to limit requests pass in it;
// later ones are refused until it ends.
type limiter struct {
	limit  int
	window time.Duration
	clock  quartz.Clock

	mu        sync.Mutex
	windows   map[string]*window
	nextPrune time.Time
}

type window struct {
	ends  time.Time
	count int
}

func newLimiter(limit int, every time.Duration, clock quartz.Clock) *limiter {
	return &limiter{limit: limit, window: every, clock: clock, windows: map[string]*window{}}
}

// allow counts one request of key; when it is over the limit it returns
// false and the time left until the key's window ends.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !now.Before(l.nextPrune) {
		for k, w := range l.windows {
			if !now.Before(w.ends) {
				delete(l.windows, k)
			}
		}
		l.nextPrune = now.Add(l.window)
	}
	w := l.windows[key]
	if w == nil || !now.Before(w.ends) {
		w = &window{ends: now.Add(l.window)}
		l.windows[key] = w
	}
	if w.count >= l.limit {
		return false, w.ends.Sub(now)
	}
	w.count++
	return true, 0
}
