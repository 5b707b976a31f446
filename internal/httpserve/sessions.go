package httpserve

import (
	"sync"
	"time"
)

// sessionTable tracks the HTTP sessions the SDK opened: when each was last
// seen and how many of its requests are in flight. Closed sessions are not
// remembered: a request naming any session that is not live is told it is
// gone (404), whether this process closed it, an earlier one did, or it
// never existed.
type sessionTable struct {
	mu   sync.Mutex
	live map[string]*session
}

type session struct {
	lastSeen time.Time
	active   int
}

func newSessionTable() *sessionTable {
	return &sessionTable{live: map[string]*session{}}
}

// open records a new session.
func (t *sessionTable) open(id string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live[id] = &session{lastSeen: now}
}

// acquire marks a request of session id in flight; false when the
// session is not live.
func (t *sessionTable) acquire(id string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.live[id]
	if s == nil {
		return false
	}
	s.active++
	s.lastSeen = now
	return true
}

// release ends a request acquire admitted.
func (t *sessionTable) release(id string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.live[id]; s != nil {
		s.active--
		s.lastSeen = now
	}
}

// isLive reports a live session.
func (t *sessionTable) isLive(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live[id] != nil
}

// remove forgets a live session; false when it was not live.
func (t *sessionTable) remove(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.removeLocked(id)
}

func (t *sessionTable) removeLocked(id string) bool {
	if _, ok := t.live[id]; !ok {
		return false
	}
	delete(t.live, id)
	return true
}

// removeIdle removes and returns the sessions with no request in flight
// that were last seen idle ago or earlier.
func (t *sessionTable) removeIdle(now time.Time, idle time.Duration) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []string
	for id, s := range t.live {
		if s.active == 0 && now.Sub(s.lastSeen) >= idle {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		t.removeLocked(id)
	}
	return ids
}

// removeAll removes and returns every live session.
func (t *sessionTable) removeAll() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]string, 0, len(t.live))
	for id := range t.live {
		ids = append(ids, id)
	}
	for _, id := range ids {
		t.removeLocked(id)
	}
	return ids
}

// count is the number of live sessions.
func (t *sessionTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live)
}
