package opencode

import (
	"sync"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
)

// This file is what the stream shows of each session's state, for
// Adapter.Liveness.

// liveTracking is the hub's view of session states.
type liveTracking struct {
	liveMu sync.Mutex // guards the fields below
	live   map[string]*liveState
	down   *serverDown // the server was found gone and not reached since
}

// liveState is what the stream last showed of one session.
type liveState struct {
	state providers.LivenessState
	at    time.Time
	perms map[string]bool // permission requests asked and not replied
}

// serverDown records that the server went away with prompts in flight.
type serverDown struct {
	at     time.Time
	reason string
}

// liveness answers Adapter.Liveness from what the stream showed.
func (h *hub) liveness(sid string) providers.Liveness {
	running := h.promptRunning(sid)
	h.liveMu.Lock()
	defer h.liveMu.Unlock()
	l := h.live[sid]
	if d := h.down; d != nil && (l == nil || !l.at.After(d.at)) {
		at := d.at
		return providers.Liveness{State: providers.LiveDead, ObservedAt: &at, Reason: d.reason}
	}
	if l == nil {
		if running {
			return providers.Liveness{State: providers.LiveWorking, Reason: "a prompt sent by this runtime is running"}
		}
		return providers.Liveness{State: providers.LiveUnknown}
	}
	since := l.at
	switch {
	case len(l.perms) > 0:
		return providers.Liveness{State: providers.LiveWaitingOnApproval, ObservedAt: &since, Reason: "a permission request is waiting for respond_to_permission"}
	case running && l.state != providers.LiveWorking:
		return providers.Liveness{State: providers.LiveWorking, ObservedAt: &since}
	}
	return providers.Liveness{State: l.state, ObservedAt: &since}
}

// markWorking notes that a prompt was sent to session sid.
func (h *hub) markWorking(sid string) {
	h.liveMu.Lock()
	defer h.liveMu.Unlock()
	if l := h.live[sid]; l != nil {
		l.state = providers.LiveWorking
	}
}

// serverReached forgets a loss: the stream reached the server again.
func (h *hub) serverReached() {
	h.liveMu.Lock()
	defer h.liveMu.Unlock()
	h.down = nil
}

// serverLost records at now that the server went away for reason; an
// earlier loss is kept unless prompts were lost with this one.
func (h *hub) serverLost(now time.Time, reason string, promptsLost bool) {
	h.liveMu.Lock()
	defer h.liveMu.Unlock()
	if promptsLost || h.down == nil {
		h.down = &serverDown{at: now, reason: reason}
	}
}

// observeLive updates what the stream shows of a session's state.
func (h *hub) observeLive(sid string, p *eventPayload, now time.Time) {
	h.liveMu.Lock()
	defer h.liveMu.Unlock()
	l := h.live[sid]
	if l == nil {
		if len(h.live) > 10000 {
			h.live = map[string]*liveState{}
		}
		l = &liveState{state: providers.LiveUnknown, perms: map[string]bool{}}
		h.live[sid] = l
	}
	l.at = now
	props := &p.Properties
	switch p.Type {
	case "session.status":
		if props.Status != nil {
			if props.Status.Type == "idle" {
				l.state = providers.LiveIdle
			} else {
				l.state = providers.LiveWorking
			}
		}
	case "session.idle":
		l.state = providers.LiveIdle
	case "permission.asked", "permission.v2.asked":
		if props.ID != "" {
			l.perms[props.ID] = true
		}
	case "permission.replied", "permission.v2.replied":
		delete(l.perms, props.RequestID)
	case "message.updated", "message.part.updated", "message.part.delta":
		if l.state != providers.LiveIdle || p.Type != "message.updated" {
			l.state = providers.LiveWorking
		}
	}
}
