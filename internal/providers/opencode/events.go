package opencode

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/kit/fanout"
)

// This file is the hub: its state, lifetime and the handling of each
// event. Its parts are in files of their own, one per job, each part with
// its own lock: the stream it reads (stream.go), the subscribers it fans
// events out to (subscribers.go), the prompts it follows (tracking.go,
// catchup.go, turnids.go, and loss.go for what a lost server settles), and
// what it shows of each session's state (liveness.go).

// hub owns the adapter's single GET /global/event connection and fans its
// events out to subscribers per session. It also follows queued prompts to
// report their outcome. It runs only while something needs it: a
// subscriber, a prompt being sent, or a queued receipt.
//
// Locks: each part guards its state with its own mutex, so that reading
// a session's liveness, fanning out an event or catching a session up does
// not wait for the others. When more than one is held they are taken in
// this order: streamMu, then turnMu, then liveMu; the kit's pending
// tracker and fan-out hub lock themselves, innermost.
type hub struct {
	a    *Adapter
	base context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	streamState              // stream.go (streamMu)
	turnTracking             // tracking.go (turnMu)
	liveTracking             // liveness.go (liveMu)
	subs         *fanout.Hub // subscribers.go
}

func newHub(a *Adapter) *hub {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hub{a: a, base: ctx, stop: cancel}
	h.turnTracking.init()
	h.live = map[string]*liveState{}
	h.subs = fanout.New(subscriberBuffer)
	return h
}

// dispatch handles one event: connection markers, outcome tracking, fan-out.
// Only the stream's goroutine calls it, one event at a time.
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
		h.serverReached()
		// Events may have been missed while disconnected: read the followed
		// sessions' messages once.
		h.turnMu.Lock()
		h.reconcileLocked(h.followedLocked()...)
		h.turnMu.Unlock()
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

	now := h.a.clock.Now().UTC()
	h.observeLive(sid, &p, now)
	h.turnMu.Lock()
	reports := h.observeLocked(sid, &p)
	turn := h.turnOfLocked(&p)
	h.turnMu.Unlock()
	h.subs.Publish(providers.NativeEvent{NativeID: sid, Timestamp: now, Type: p.Type, Data: ge.Payload, TurnID: turn})
	h.maybeStop()
	h.deliver(reports)
}

// close stops the stream and ends every subscription.
func (h *hub) close() {
	h.streamMu.Lock()
	h.turnMu.Lock()
	h.closing = true // written under both locks: either may read it
	h.turnMu.Unlock()
	h.stop()
	if h.att != nil {
		h.att.cancel()
	}
	h.streamMu.Unlock()
	h.wg.Wait()
	h.subs.EndAll()
}
