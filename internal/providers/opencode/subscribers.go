package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
)

// This file is the hub's subscribers: who receives a session's events, and
// the fan-out of each event to them.

// subscriberBuffer is how many events are buffered per subscriber before
// it is closed.
const subscriberBuffer = 512

// subscribers is the hub's subscriptions per session.
type subscribers struct {
	subsMu sync.Mutex // guards subs and each subscriber's closed
	subs   map[string]map[*subscriber]struct{}
}

type subscriber struct {
	ch     chan providers.NativeEvent
	gone   chan struct{}
	closed bool
}

// subscribe adds a subscriber for sid and waits until the stream is
// connected.
func (h *hub) subscribe(ctx context.Context, sid string) (<-chan providers.NativeEvent, error) {
	for try := 0; try < 3; try++ {
		h.streamMu.Lock()
		if h.closing {
			h.streamMu.Unlock()
			return nil, errClosed
		}
		s := &subscriber{ch: make(chan providers.NativeEvent, subscriberBuffer), gone: make(chan struct{})}
		h.subsMu.Lock()
		if h.subs[sid] == nil {
			h.subs[sid] = map[*subscriber]struct{}{}
		}
		h.subs[sid][s] = struct{}{}
		h.subsMu.Unlock()
		h.ensureRunningLocked()
		att := h.att
		h.streamMu.Unlock()

		if h.waitConnected(ctx, att, h.a.cfg.RequestTimeout) {
			go h.watch(ctx, sid, s)
			return s.ch, nil
		}
		h.streamMu.Lock()
		h.removeSub(sid, s)
		h.maybeStopLocked()
		retry := att != nil && att.idleStop && ctx.Err() == nil
		var err error
		select {
		case <-att.done:
			err = att.err
		default:
			err = errors.New("event stream did not connect in time")
		}
		h.streamMu.Unlock()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("subscribing to OpenCode session %s: %w", sid, ctx.Err())
		}
		if !retry {
			return nil, fmt.Errorf("subscribing to OpenCode session %s: %w", sid, err)
		}
	}
	return nil, fmt.Errorf("subscribing to OpenCode session %s: event stream kept stopping", sid)
}

// watch removes the subscriber when its context ends.
func (h *hub) watch(ctx context.Context, sid string, s *subscriber) {
	select {
	case <-ctx.Done():
		h.removeSub(sid, s)
		h.maybeStop()
	case <-s.gone:
	}
}

// subscribed reports whether a session has a subscriber.
func (h *hub) subscribed() bool {
	h.subsMu.Lock()
	defer h.subsMu.Unlock()
	return len(h.subs) > 0
}

// fanOut passes ev to the subscribers of its session; ev.Data is copied
// for them.
func (h *hub) fanOut(ev providers.NativeEvent) {
	h.subsMu.Lock()
	defer h.subsMu.Unlock()
	subs := h.subs[ev.NativeID]
	if len(subs) == 0 {
		return
	}
	ev.Data = append(json.RawMessage(nil), ev.Data...)
	for s := range subs {
		select {
		case s.ch <- ev:
		default:
			// A reader that falls this far behind gets its channel
			// closed; the registry reopens it as a new epoch.
			h.removeSubLocked(ev.NativeID, s)
		}
	}
}

func (h *hub) removeSub(sid string, s *subscriber) {
	h.subsMu.Lock()
	defer h.subsMu.Unlock()
	h.removeSubLocked(sid, s)
}

// removeSubLocked ends one subscription; the caller holds subsMu.
func (h *hub) removeSubLocked(sid string, s *subscriber) {
	if s.closed {
		return
	}
	s.closed = true
	close(s.ch)
	close(s.gone)
	delete(h.subs[sid], s)
	if len(h.subs[sid]) == 0 {
		delete(h.subs, sid)
	}
}

// closeSubs ends every subscription (the stream ended).
func (h *hub) closeSubs() {
	h.subsMu.Lock()
	defer h.subsMu.Unlock()
	for sid, set := range h.subs {
		for s := range set {
			h.removeSubLocked(sid, s)
		}
	}
}
