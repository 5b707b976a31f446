package opencode

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/kit/pending"
)

// This file is the turn tracking: the prompts whose outcome the hub
// follows and their settlement from the stream's events. What they are
// settled from when events were missed is in catchup.go, what a lost
// server settles in loss.go, and which turn an event belongs to in
// turnids.go.

// Turn tracking bounds.
const (
	maxPendingPerSess  = 256 // queued receipts followed per session
	maxAssistantMemory = 64  // assistant message ids remembered per session
	// adoptedPoll is how often the stored messages of a session are read
	// again while a reply another process sent is followed (adopt): its
	// end may have been shown only before this process's stream opened.
	adoptedPoll = 5 * time.Second
)

// turnTracking is the hub's state of followed prompts.
type turnTracking struct {
	turnMu  sync.Mutex // guards the fields below and every pendingSend
	pending map[string][]*pendingSend
	assist  map[string][]string // session → recent assistant message ids
	turnOf  map[string]string   // assistant message id → the user message (turn) it answers

	catchingUp map[string]bool // sessions being reconciled
	// catchUpAgain marks sessions asked to reconcile while a catch-up was
	// already reading: that read may predate what prompted the request (a
	// reply that finished meanwhile), so one more runs after it.
	catchUpAgain map[string]bool
	polling      map[string]bool // sessions with a poll of their adopted replies scheduled

	// ops is the kit's tracker of the prompts in flight on the current
	// server: added when followed, settled when their outcome was observed
	// (or they stopped being followed); a lost server settles the rest as
	// delivery_unknown (loss.go) and a new tracker follows the next ones.
	// Replaced holding turnMu; read without it (following, running).
	ops atomic.Pointer[pending.Tracker]
}

func (t *turnTracking) init() {
	t.pending = map[string][]*pendingSend{}
	t.assist = map[string][]string{}
	t.turnOf = map[string]string{}
	t.catchingUp = map[string]bool{}
	t.catchUpAgain = map[string]bool{}
	t.polling = map[string]bool{}
	t.ops.Store(new(pending.Tracker))
}

// pendingSend is a queued prompt whose outcome is being followed.
type pendingSend struct {
	ref      string
	text     string
	msgID    string // the user message of the turn (chosen by Send)
	ready    bool   // Send has returned the receipt
	resolved bool
	status   providers.ReceiptStatus
	reason   string
	// ops is the tracker the prompt was added to (the server it was sent to).
	ops *pending.Tracker
	// lost says the server went away while the turn ran: ops settled it
	// delivery_unknown; it is reported so (once ready) and no longer keeps
	// the stream open, but a result observed later is still reported: the
	// ledger takes it as evidence (delivery_unknown → completed/rejected,
	// never a resend), its reason naming the loss (lateReason).
	lost       bool
	lostReason string
	reported   bool // the lost report went out
	adopted    bool // sent by another process; followed since a restart
	turn       *providers.TurnResult
	facts      turnFacts // what the turn's assistant messages showed (turnfacts.go)
}

// track starts following a prompt about to be sent; false when the hub is
// closing.
func (h *hub) track(sid, ref, text, msgID string) bool {
	h.streamMu.Lock()
	defer h.streamMu.Unlock()
	if h.closing {
		return false
	}
	h.ensureRunningLocked()
	h.turnMu.Lock()
	var dropped []report
	if list := h.pending[sid]; len(list) >= maxPendingPerSess {
		old := list[0]
		h.pending[sid] = list[1:]
		if old.ops.Settle(old.ref) && old.ready { // in flight, its receipt out: not followed any more
			dropped = append(dropped, report{NativeID: sid, Ref: old.ref, Status: providers.StatusDeliveryUnknown,
				Reason: fmt.Sprintf("more than %d prompts of this session were in flight; this runtime stopped following the oldest, whose result was not observed", maxPendingPerSess)})
		}
	}
	h.addLocked(sid, &pendingSend{ref: ref, text: text, msgID: msgID})
	h.turnMu.Unlock()
	h.markWorking(sid)
	if len(dropped) > 0 {
		go h.deliver(dropped)
	}
	return true
}

// untrack forgets a prompt that was not accepted.
func (h *hub) untrack(sid, ref string) {
	h.turnMu.Lock()
	if ps := h.findLocked(sid, ref); ps != nil {
		ps.ops.Settle(ref) // never accepted: nothing to settle
		h.removePendingLocked(sid, ps)
	}
	h.turnMu.Unlock()
	h.maybeStop()
}

// ready marks the receipt as returned; an outcome seen meanwhile is
// reported now.
func (h *hub) ready(sid, ref string) {
	h.turnMu.Lock()
	var out []report
	if ps := h.findLocked(sid, ref); ps != nil {
		ps.ready = true
		switch {
		case ps.resolved:
			h.removePendingLocked(sid, ps)
			out = append(out, report{NativeID: sid, Ref: ref, Status: ps.status, Reason: ps.reason, Turn: ps.turn})
		case ps.lost && !ps.reported:
			ps.reported = true
			out = append(out, report{NativeID: sid, Ref: ref, Status: providers.StatusDeliveryUnknown, Reason: ps.lostReason})
		}
	}
	h.turnMu.Unlock()
	h.maybeStop()
	if len(out) > 0 {
		// Reported from another goroutine so the caller of Send holds the
		// receipt before its outcome arrives.
		go h.deliver(out)
	}
}

// adopt follows a turn a previous runtime process started (settlement of
// an operation whose owner is gone): its outcome is reported with ref.
func (h *hub) adopt(sid, ref, msgID string) bool {
	h.streamMu.Lock()
	defer h.streamMu.Unlock()
	if h.closing {
		return false
	}
	h.turnMu.Lock()
	defer h.turnMu.Unlock()
	for _, ps := range h.pending[sid] {
		if ps.msgID == msgID {
			return true // followed already
		}
	}
	h.ensureRunningLocked()
	h.addLocked(sid, &pendingSend{ref: ref, msgID: msgID, ready: true, adopted: true})
	h.reconcileLocked(sid)
	return true
}

// observeLocked follows queued prompts of session sid through the event.
// The caller holds turnMu.
func (h *hub) observeLocked(sid string, p *eventPayload) []report {
	list := h.pending[sid]
	if len(list) == 0 {
		return nil
	}
	var out []report
	props := &p.Properties
	switch p.Type {
	case "message.updated":
		info := props.Info
		if info == nil || info.Role != "assistant" {
			return nil
		}
		h.rememberAssistantLocked(sid, info.ID, info.ParentID)
		for _, ps := range list {
			if ps.resolved || ps.msgID == "" || ps.msgID != info.ParentID {
				continue
			}
			ps.facts.noteMessage(info.ID, info.Tokens, info.Cost)
			switch {
			case len(info.Error) > 0 && string(info.Error) != "null":
				ps.turn = ps.facts.result(info.Finish, info.Error)
				out = h.resolveLocked(sid, ps, providers.StatusRejected, errorReason(info.Error), out)
			case info.Time.Completed > 0 && info.Finish != "" && info.Finish != "tool-calls":
				ps.turn = ps.facts.result(info.Finish, nil)
				out = h.resolveLocked(sid, ps, providers.StatusCompleted, "", out)
			}
		}
	case "message.part.updated":
		part := props.Part
		if part != nil && part.MessageID != "" && h.isAssistantLocked(sid, part.MessageID) {
			for _, ps := range list {
				if !ps.resolved && ps.msgID != "" && h.turnOf[part.MessageID] == ps.msgID {
					ps.facts.notePart(ocPart{Type: part.Type, Text: part.Text, Files: part.Files})
				}
			}
			return nil
		}
		if part == nil || part.Type != "text" || part.MessageID == "" {
			return nil
		}
		for _, ps := range list {
			if ps.msgID == part.MessageID {
				return nil // already attached
			}
		}
		for _, ps := range list { // a prompt sent without its own message id
			if !ps.resolved && ps.msgID == "" && ps.text == part.Text {
				ps.msgID = part.MessageID
				break
			}
		}
	case "session.error", "session.idle", "session.status":
		if p.Type == "session.status" && (props.Status == nil || props.Status.Type != "idle") {
			return nil
		}
		// Neither event names the prompt it concerns: an idle or an error
		// of the previous turn can arrive after the next prompt's user
		// message. So nothing is settled from them directly; the session's
		// stored messages are read instead, and a prompt is completed only
		// when an assistant message answering it finished (or rejected when
		// that answer failed). A prompt OpenCode stored but never ran stays
		// queued: accepted is never reported as completed.
		for _, ps := range list {
			if !ps.resolved {
				h.reconcileLocked(sid)
				break
			}
		}
	}
	return out
}

// errorReason renders an OpenCode error object as "<name>: <message>".
func errorReason(raw json.RawMessage) string {
	name, msg, ok := describeError(raw)
	if !ok {
		return "OpenCode reported an error"
	}
	msg = redact(msg, nil)
	if name == "" {
		return msg
	}
	if msg == "" {
		return name
	}
	return name + ": " + msg
}

// resolveLocked settles a queued prompt with its observed outcome; the
// report waits until Send has returned the receipt. The caller holds
// turnMu.
func (h *hub) resolveLocked(sid string, ps *pendingSend, status providers.ReceiptStatus, reason string, out []report) []report {
	if !ps.ops.Settle(ps.ref) && ps.lost {
		// Settled delivery_unknown by a loss already: the result observed
		// since is evidence the ledger records (never a resend); the
		// reason says it came after the loss, so the change is not silent.
		reason = lateReason(reason, ps.lostReason)
	}
	ps.resolved, ps.status, ps.reason = true, status, reason
	if !ps.ready {
		return out
	}
	h.removePendingLocked(sid, ps)
	return append(out, report{NativeID: sid, Ref: ps.ref, Status: status, Reason: reason, Turn: ps.turn})
}

// findLocked returns the followed prompt of session sid with ref, or nil.
func (h *hub) findLocked(sid, ref string) *pendingSend {
	for _, ps := range h.pending[sid] {
		if ps.ref == ref {
			return ps
		}
	}
	return nil
}

func (h *hub) removePendingLocked(sid string, ps *pendingSend) {
	list := h.pending[sid]
	for i, x := range list {
		if x == ps {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(h.pending, sid)
		delete(h.assist, sid)
		return
	}
	h.pending[sid] = list
}
