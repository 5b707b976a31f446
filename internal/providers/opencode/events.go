package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
)

// subscriberBuffer is how many events are buffered per subscriber before
// it is closed.
const subscriberBuffer = 512

// This file is the hub: its lifetime, the fan-out of each event to the
// session's subscribers, and the subscriptions. The stream it reads is in
// stream.go, the prompts it follows in tracking.go, and what it shows of
// each session's state in liveness.go.

// hub owns the adapter's single GET /global/event connection and fans its
// events out to subscribers per session. It also follows queued prompts to
// report their outcome. It runs only while something needs it: a
// subscriber, a prompt being sent, or a queued receipt.
type hub struct {
	a    *Adapter
	base context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	// mu guards everything below; the state is grouped by job, one
	// embedded struct per file (stream.go, tracking.go, liveness.go), and
	// events.go holds the subscribers and the fan-out.
	mu   sync.Mutex
	subs map[string]map[*subscriber]struct{}
	streamState
	turnTracking
	liveTracking
}

type subscriber struct {
	ch     chan providers.NativeEvent
	gone   chan struct{}
	closed bool
}

func newHub(a *Adapter) *hub {
	ctx, cancel := context.WithCancel(context.Background())
	return &hub{
		a: a, base: ctx, stop: cancel,
		subs:         map[string]map[*subscriber]struct{}{},
		turnTracking: newTurnTracking(),
		liveTracking: liveTracking{live: map[string]*liveState{}},
	}
}

func (h *hub) neededLocked() bool {
	return h.holds > 0 || len(h.subs) > 0 || h.following()
}

func (h *hub) ensureRunningLocked() {
	if h.running || h.closing {
		return
	}
	h.running = true
	h.att = newAttempt()
	h.wg.Add(1)
	go h.run()
}

// maybeStopLocked ends the connection when nothing needs it any more.
func (h *hub) maybeStopLocked() {
	if h.running && !h.neededLocked() && h.att != nil {
		h.att.idleStop = true
		h.att.cancel()
	}
}

// globalEvent is one /global/event message.
type globalEvent struct {
	Directory string          `json:"directory"`
	Payload   json.RawMessage `json:"payload"`
}

// eventPayload holds the fields used to attribute and follow an event.
type eventPayload struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Info      *struct {
		SessionID string `json:"sessionID"`
	} `json:"info"`
	Properties struct {
		SessionID string `json:"sessionID"`
		Info      *struct {
			ID        string          `json:"id"`
			SessionID string          `json:"sessionID"`
			Role      string          `json:"role"`
			ParentID  string          `json:"parentID"`
			Finish    string          `json:"finish"`
			Directory string          `json:"directory"`
			Error     json.RawMessage `json:"error"`
			Time      struct {
				Completed int64 `json:"completed"`
			} `json:"time"`
			Tokens *ocTokens `json:"tokens"`
			Cost   *float64  `json:"cost"`
		} `json:"info"`
		Part *struct {
			SessionID string   `json:"sessionID"`
			MessageID string   `json:"messageID"`
			Type      string   `json:"type"`
			Text      string   `json:"text"`
			Files     []string `json:"files"`
		} `json:"part"`
		Status *struct {
			Type string `json:"type"`
		} `json:"status"`
		Error     json.RawMessage `json:"error"`
		ID        string          `json:"id"`        // permission.asked
		RequestID string          `json:"requestID"` // permission.replied
	} `json:"properties"`
}

// sessionOf attributes an event to a session (upstream AI-06): sessionID,
// then properties.sessionID, info.sessionID, properties.info.sessionID,
// properties.part.sessionID.
func (p *eventPayload) sessionOf() string {
	switch {
	case p.SessionID != "":
		return p.SessionID
	case p.Properties.SessionID != "":
		return p.Properties.SessionID
	case p.Info != nil && p.Info.SessionID != "":
		return p.Info.SessionID
	case p.Properties.Info != nil && p.Properties.Info.SessionID != "":
		return p.Properties.Info.SessionID
	case p.Properties.Part != nil && p.Properties.Part.SessionID != "":
		return p.Properties.Part.SessionID
	}
	return ""
}

// dispatch handles one event: connection markers, outcome tracking, fan-out.
func (h *hub) dispatch(att *attempt, raw []byte) {
	var ge globalEvent
	if json.Unmarshal(raw, &ge) != nil || len(ge.Payload) == 0 {
		return
	}
	var p eventPayload
	if json.Unmarshal(ge.Payload, &p) != nil {
		return
	}
	switch p.Type {
	case "server.connected":
		att.markConnected()
		h.mu.Lock()
		h.down = nil
		// Events may have been missed while disconnected: read the followed
		// sessions' messages once.
		h.reconcileLocked(h.followedLocked()...)
		h.mu.Unlock()
		return
	case "server.heartbeat", "sync":
		// Heartbeats only keep the idle timer alive; "sync" events replicate
		// the typed events already delivered.
		return
	}
	sid := p.sessionOf()
	if sid == "" {
		return // not about a session: dropped
	}
	if p.Properties.Info != nil && p.Properties.Info.Directory != "" && p.Properties.Info.ID == sid {
		h.a.rememberDir(sid, p.Properties.Info.Directory)
	} else if ge.Directory != "" && ge.Directory != "global" {
		h.a.rememberDir(sid, ge.Directory)
	}

	h.mu.Lock()
	now := h.a.clock.Now().UTC()
	h.observeLiveLocked(sid, &p, now)
	reports := h.observeLocked(sid, &p)
	if subs := h.subs[sid]; len(subs) > 0 {
		ev := providers.NativeEvent{
			NativeID:  sid,
			Timestamp: now,
			Type:      p.Type,
			Data:      append(json.RawMessage(nil), ge.Payload...),
			TurnID:    h.turnOfLocked(&p),
		}
		for s := range subs {
			select {
			case s.ch <- ev:
			default:
				// A reader that falls this far behind gets its channel
				// closed; the registry reopens it as a new epoch.
				h.removeSubLocked(sid, s)
			}
		}
	}
	h.maybeStopLocked()
	h.mu.Unlock()
	h.deliver(reports)
}

// hold keeps the stream running while a prompt is sent and reports whether
// it is connected. It waits at most the request timeout for the connection.
func (h *hub) hold(ctx context.Context) (bool, func()) {
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return false, func() {}
	}
	h.holds++
	h.ensureRunningLocked()
	att := h.att
	h.mu.Unlock()
	release := func() {
		h.mu.Lock()
		h.holds--
		h.maybeStopLocked()
		h.mu.Unlock()
	}
	return h.waitConnected(ctx, att, h.a.cfg.RequestTimeout), release
}

// subscribe adds a subscriber for sid and waits until the stream is
// connected.
func (h *hub) subscribe(ctx context.Context, sid string) (<-chan providers.NativeEvent, error) {
	for try := 0; try < 3; try++ {
		h.mu.Lock()
		if h.closing {
			h.mu.Unlock()
			return nil, errClosed
		}
		s := &subscriber{ch: make(chan providers.NativeEvent, subscriberBuffer), gone: make(chan struct{})}
		if h.subs[sid] == nil {
			h.subs[sid] = map[*subscriber]struct{}{}
		}
		h.subs[sid][s] = struct{}{}
		h.ensureRunningLocked()
		att := h.att
		h.mu.Unlock()

		if h.waitConnected(ctx, att, h.a.cfg.RequestTimeout) {
			go h.watch(ctx, sid, s)
			return s.ch, nil
		}
		h.mu.Lock()
		h.removeSubLocked(sid, s)
		h.maybeStopLocked()
		retry := att != nil && att.idleStop && ctx.Err() == nil
		var err error
		select {
		case <-att.done:
			err = att.err
		default:
			err = errors.New("event stream did not connect in time")
		}
		h.mu.Unlock()
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
		h.mu.Lock()
		h.removeSubLocked(sid, s)
		h.maybeStopLocked()
		h.mu.Unlock()
	case <-s.gone:
	}
}

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

// closeSubsLocked ends every subscription (the stream ended).
func (h *hub) closeSubsLocked() {
	for sid, set := range h.subs {
		for s := range set {
			h.removeSubLocked(sid, s)
		}
	}
}

// close stops the stream and ends every subscription.
func (h *hub) close() {
	h.mu.Lock()
	h.closing = true
	h.stop()
	if h.att != nil {
		h.att.cancel()
	}
	h.mu.Unlock()
	h.wg.Wait()
	h.mu.Lock()
	h.closeSubsLocked()
	h.mu.Unlock()
}
