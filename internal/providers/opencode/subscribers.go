package opencode

import (
	"context"
	"errors"
	"fmt"

	"github.com/agent-interop/runtime/internal/providers"
)

// This file is the hub's subscribers: who receives a session's events
// (the kit's fan-out hub, h.subs, which the stream publishes to).

// subscriberBuffer is how many events are buffered per subscriber before
// it is closed.
const subscriberBuffer = 512

// subscribe adds a subscriber for sid and waits until the stream is
// connected.
func (h *hub) subscribe(ctx context.Context, sid string) (<-chan providers.NativeEvent, error) {
	for try := 0; try < 3; try++ {
		h.streamMu.Lock()
		if h.closing {
			h.streamMu.Unlock()
			return nil, errClosed
		}
		s := h.subs.Add(sid)
		h.ensureRunningLocked()
		att := h.att
		h.streamMu.Unlock()

		if h.waitConnected(ctx, att, h.a.cfg.RequestTimeout) {
			h.subs.RemoveOnDone(ctx, s, h.maybeStop)
			return s.C(), nil
		}
		h.streamMu.Lock()
		h.subs.Remove(s)
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
