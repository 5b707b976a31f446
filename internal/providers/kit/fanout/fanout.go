// Package fanout hands a provider's events to the subscriptions of each
// session (providers.Messenger's Subscribe) without ever blocking the
// reader that produced them.
//
// A [Hub] keeps the open subscriptions per session. [Hub.Publish] passes
// an event to every subscription of its session; one whose buffer is full
// is ended (its channel closed) rather than dropping an event, so the
// registry reopens it and counts a new epoch. A subscription also ends
// when its owner removes it ([Hub.Remove], [Hub.RemoveOnDone]) or when
// the provider's stream ended ([Hub.EndAll]).
//
// The Hub's lock is a leaf: it calls nothing outside the package while
// holding it, so an adapter may publish under a lock of its own.
package fanout

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
)

// Hub is the subscriptions per session of one event source. The zero
// value is not usable; call [New].
type Hub struct {
	buffer int

	mu   sync.Mutex
	subs map[string]map[*Sub]struct{}
}

// Sub is one subscription.
type Sub struct {
	key    string
	ch     chan providers.NativeEvent
	done   chan struct{}
	closed bool // guarded by the Hub's mu
}

// C is the subscription's events; it is closed when the subscription
// ends.
func (s *Sub) C() <-chan providers.NativeEvent { return s.ch }

// Done is closed when the subscription ended (its channel is closed).
func (s *Sub) Done() <-chan struct{} { return s.done }

// New returns a Hub whose subscriptions buffer up to buffer events each.
func New(buffer int) *Hub {
	return &Hub{buffer: buffer, subs: map[string]map[*Sub]struct{}{}}
}

// Add opens a subscription to the events of session key.
func (h *Hub) Add(key string) *Sub {
	s := &Sub{key: key, ch: make(chan providers.NativeEvent, h.buffer), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[key] == nil {
		h.subs[key] = map[*Sub]struct{}{}
	}
	h.subs[key][s] = struct{}{}
	return s
}

// Remove ends s; it reports whether s was still open.
func (h *Hub) Remove(s *Sub) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.endLocked(s)
}

// RemoveOnDone ends s when ctx ends, then calls after (when not nil);
// when s ended otherwise first, after is not called. It returns at once.
func (h *Hub) RemoveOnDone(ctx context.Context, s *Sub, after func()) {
	go func() {
		select {
		case <-ctx.Done():
			h.Remove(s)
			if after != nil {
				after()
			}
		case <-s.done:
		}
	}()
}

// Has reports whether session key has a subscription (an adapter skips
// the work of building an event nobody receives).
func (h *Hub) Has(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[key]) > 0
}

// Len is the number of sessions with a subscription.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Keys are the sessions with a subscription, in no order.
func (h *Hub) Keys() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]string, 0, len(h.subs))
	for k := range h.subs {
		keys = append(keys, k)
	}
	return keys
}

// Publish passes ev to every subscription of ev.NativeID (ev.Data is
// copied for them, so the caller may reuse its buffer). A subscription
// whose buffer is full is ended; Publish returns how many were.
func (h *Hub) Publish(ev providers.NativeEvent) (ended int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.subs[ev.NativeID]
	if len(set) == 0 {
		return 0
	}
	ev.Data = append(json.RawMessage(nil), ev.Data...)
	for s := range set {
		select {
		case s.ch <- ev:
		default:
			h.endLocked(s)
			ended++
		}
	}
	return ended
}

// EndAll ends every subscription (the provider's stream ended); the Hub
// takes new ones afterwards.
func (h *Hub) EndAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range h.subs {
		for s := range set {
			h.endLocked(s)
		}
	}
}

// endLocked ends s unless it ended already; the caller holds mu.
func (h *Hub) endLocked(s *Sub) bool {
	if s.closed {
		return false
	}
	s.closed = true
	close(s.ch)
	close(s.done)
	delete(h.subs[s.key], s)
	if len(h.subs[s.key]) == 0 {
		delete(h.subs, s.key)
	}
	return true
}
