package opencode

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/kit/pending"
)

// This file is the turn tracking: the prompts whose outcome the hub
// follows, settled from the stream's events or, when those were missed,
// from the session's stored messages; and which turn an event belongs to.

// Turn tracking bounds.
const (
	maxPendingPerSess  = 256 // queued receipts followed per session
	maxAssistantMemory = 64  // assistant message ids remembered per session
	// adoptedPoll is how often the stored messages of a session are read
	// again while a reply another process sent is followed (adopt): its
	// end may have been shown only before this process's stream opened.
	adoptedPoll = 5 * time.Second
)

// turnTracking is the hub's state of followed prompts (guarded by hub.mu).
type turnTracking struct {
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
	// delivery_unknown (loseLocked) and a new tracker follows the next ones.
	ops *pending.Tracker
}

func newTurnTracking() turnTracking {
	return turnTracking{
		pending:      map[string][]*pendingSend{},
		assist:       map[string][]string{},
		turnOf:       map[string]string{},
		catchingUp:   map[string]bool{},
		catchUpAgain: map[string]bool{},
		polling:      map[string]bool{},
		ops:          new(pending.Tracker),
	}
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
	// never a resend), with lateReason saying it came after the loss.
	lost       bool
	lostReason string
	reported   bool // the lost report went out
	adopted    bool // sent by another process; followed since a restart
	turn       *providers.TurnResult
	facts      turnFacts // what the turn's assistant messages showed (turnfacts.go)
}

// following reports whether a prompt's outcome is being followed: one is
// in flight on the current server.
func (h *hub) following() bool {
	return len(h.ops.InFlight()) > 0
}

// runningLocked reports whether a prompt of session sid is in flight.
func (h *hub) runningLocked(sid string) bool {
	for _, op := range h.ops.InFlight() {
		if op.NativeID == sid {
			return true
		}
	}
	return false
}

// unsettledTurn is what a lost server leaves unknown of a followed prompt.
const unsettledTurn = "the turn had not finished and may have run in part; it is not resent"

// addLocked follows ps, a prompt of session sid, on the current server's
// tracker.
func (h *hub) addLocked(sid string, ps *pendingSend) {
	ps.ops = h.ops
	if late := ps.ops.Add(pending.Op{NativeID: sid, Ref: ps.ref, Unsettled: unsettledTurn}); len(late) > 0 {
		ps.lost, ps.lostReason = true, late[0].Reason // not reached: a lost tracker is replaced at once
	}
	h.pending[sid] = append(h.pending[sid], ps)
}

// report is an outcome to pass to the host outside the hub's lock.
type report = pending.Outcome

func (h *hub) deliver(reports []report) {
	pending.Report(h.a.host, providers.OpenCode, reports)
}

// observeLocked follows queued prompts of session sid through the event.
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

// resolveLocked settles a queued prompt; the report waits until Send has
// returned the receipt.
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

// lateReason is the reason of a result observed after its prompt was
// reported delivery_unknown for lostReason.
func lateReason(reason, lostReason string) string {
	late := "the result was observed after the loss (" + lostReason + ")"
	if reason == "" {
		return late
	}
	return reason + "; " + late
}

// loseLocked gives up every prompt still running: the server that ran them
// is gone, so the kit's tracker settles each delivery_unknown with reason
// (reported once its receipt is out) and it no longer holds the stream
// open; the next prompts are followed on a new tracker. A result observed
// later is still reported (resolveLocked).
func (h *hub) loseLocked(reason string) []report {
	gone := h.ops
	h.ops = new(pending.Tracker)
	outs := gone.Lost(reason)
	now := h.a.clock.Now().UTC()
	var out []report
	for _, o := range outs {
		ps := h.findLocked(o.NativeID, o.Ref)
		if ps == nil {
			continue
		}
		ps.lost, ps.lostReason = true, o.Reason
		if ps.ready {
			ps.reported = true
			out = append(out, o)
		}
	}
	if len(outs) > 0 || h.down == nil {
		h.down = &serverDown{at: now, reason: reason}
	}
	if rep, ok := h.a.host.(providers.EventReporter); ok {
		for _, sid := range pending.Sessions(out) {
			data, _ := json.Marshal(map[string]any{"reason": reason, "resent": false})
			go rep.ReportEvent(providers.OpenCode, providers.NativeEvent{NativeID: sid, Timestamp: now, Type: providers.EventProviderRestarted, Data: data})
		}
	}
	return out
}

// lose is loseLocked for callers outside the hub's lock.
func (h *hub) lose(reason string) {
	h.mu.Lock()
	reports := h.loseLocked(reason)
	h.mu.Unlock()
	h.deliver(reports)
}

// adopt follows a turn a previous runtime process started (settlement of
// an operation whose owner is gone): its outcome is reported with ref.
func (h *hub) adopt(sid, ref, msgID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
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

// pollAdoptedLocked reads sid's stored messages again after adoptedPoll
// while a reply it adopted has no outcome, so that outcome is settled even
// if none of its events reached this process.
func (h *hub) pollAdoptedLocked(sid string) {
	adopted := false
	for _, ps := range h.pending[sid] {
		adopted = adopted || (ps.adopted && !ps.resolved && !ps.lost)
	}
	if !adopted || h.closing || h.polling[sid] {
		return
	}
	h.polling[sid] = true
	h.a.clock.AfterFunc(adoptedPoll, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.polling, sid)
		h.reconcileLocked(sid)
	}, "adopted-poll")
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

func (h *hub) rememberAssistantLocked(sid, id, parent string) {
	if id == "" {
		return
	}
	if parent != "" {
		if len(h.turnOf) > 4*maxAssistantMemory*maxPendingPerSess {
			h.turnOf = map[string]string{}
		}
		h.turnOf[id] = parent
	}
	if h.isAssistantLocked(sid, id) {
		return
	}
	ids := append(h.assist[sid], id)
	if len(ids) > maxAssistantMemory {
		ids = ids[len(ids)-maxAssistantMemory:]
	}
	h.assist[sid] = ids
}

// turnOfLocked names the turn (the user message id) an event belongs to,
// when the event says: a user message, an assistant message (its parent),
// or a part of either.
func (h *hub) turnOfLocked(p *eventPayload) string {
	props := &p.Properties
	if info := props.Info; info != nil && strings.HasPrefix(info.ID, "msg") {
		if info.Role == "user" {
			return info.ID
		}
		if info.ParentID != "" {
			return info.ParentID
		}
	}
	if part := props.Part; part != nil && part.MessageID != "" {
		if t, ok := h.turnOf[part.MessageID]; ok {
			return t
		}
		if !h.isAssistantLocked(p.sessionOf(), part.MessageID) {
			return part.MessageID // a part of the user message itself
		}
	}
	return ""
}

func (h *hub) isAssistantLocked(sid, id string) bool {
	for _, x := range h.assist[sid] {
		if x == id {
			return true
		}
	}
	return false
}

// track starts following a prompt about to be sent; false when the hub is
// closing.
func (h *hub) track(sid, ref, text, msgID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	h.ensureRunningLocked()
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
	if l := h.live[sid]; l != nil {
		l.state = providers.LiveWorking
	}
	if len(dropped) > 0 {
		go h.deliver(dropped)
	}
	return true
}

// untrack forgets a prompt that was not accepted.
func (h *hub) untrack(sid, ref string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ps := h.findLocked(sid, ref); ps != nil {
		ps.ops.Settle(ref) // never accepted: nothing to settle
		h.removePendingLocked(sid, ps)
	}
	h.maybeStopLocked()
}

// ready marks the receipt as returned; an outcome seen meanwhile is
// reported now.
func (h *hub) ready(sid, ref string) {
	h.mu.Lock()
	var out []report
	for _, ps := range h.pending[sid] {
		if ps.ref == ref {
			ps.ready = true
			switch {
			case ps.resolved:
				h.removePendingLocked(sid, ps)
				out = append(out, report{NativeID: sid, Ref: ref, Status: ps.status, Reason: ps.reason, Turn: ps.turn})
			case ps.lost && !ps.reported:
				ps.reported = true
				out = append(out, report{NativeID: sid, Ref: ref, Status: providers.StatusDeliveryUnknown, Reason: ps.lostReason})
			}
			break
		}
	}
	h.maybeStopLocked()
	h.mu.Unlock()
	if len(out) > 0 {
		// Reported from another goroutine so the caller of Send holds the
		// receipt before its outcome arrives.
		go h.deliver(out)
	}
}

// ocTurnMessage is one entry of GET /session/:id/message, as reconcile
// reads it.
type ocTurnMessage struct {
	Info struct {
		ID       string          `json:"id"`
		Role     string          `json:"role"`
		ParentID string          `json:"parentID"`
		Finish   string          `json:"finish"`
		Error    json.RawMessage `json:"error"`
		Time     struct {
			Created   int64 `json:"created"`
			Completed int64 `json:"completed"`
		} `json:"time"`
		Tokens *ocTokens `json:"tokens"`
		Cost   *float64  `json:"cost"`
	} `json:"info"`
	Parts []struct {
		Type  string   `json:"type"`
		Text  string   `json:"text"`
		Files []string `json:"files"`
	} `json:"parts"`
}

// followedLocked lists the sessions with unsettled prompts.
func (h *hub) followedLocked() []string {
	var sids []string
	for sid, list := range h.pending {
		for _, ps := range list {
			if !ps.resolved {
				sids = append(sids, sid)
				break
			}
		}
	}
	return sids
}

// unresolvedLocked reports whether a followed prompt of sid has no outcome
// yet.
func (h *hub) unresolvedLocked(sid string) bool {
	for _, ps := range h.pending[sid] {
		if !ps.resolved {
			return true
		}
	}
	return false
}

// reconcileLocked starts catching up the given sessions from their stored
// messages, at most one catch-up per session at a time; a request made
// while one runs makes one more run after it.
func (h *hub) reconcileLocked(sids ...string) {
	for _, sid := range sids {
		if h.closing {
			continue
		}
		if h.catchingUp[sid] {
			h.catchUpAgain[sid] = true
			continue
		}
		h.catchingUp[sid] = true
		h.wg.Add(1)
		go h.reconcile(sid)
	}
}

// reconcile settles the session's followed prompts from its stored
// messages: for outcomes whose events were missed (stream down, or the
// prompt's own events seen before it was attached).
func (h *hub) reconcile(sid string) {
	defer h.wg.Done()
	ctx, cancel := clockctx.WithTimeout(h.base, h.a.clock, h.a.cfg.RequestTimeout, "opencode", "reconcile")
	defer cancel()
	var msgs []ocTurnMessage
	dir, err := h.a.sessionDir(ctx, sid)
	if err == nil {
		_, err = h.a.read(ctx, request{method: http.MethodGet, path: sessionPath(sid, "/message"), query: dirQuery(dir), out: &msgs})
	}
	h.mu.Lock()
	delete(h.catchingUp, sid)
	var reports []report
	if err == nil { // on error the events will tell, or the receipt stays queued
		reports = h.settleFromMessagesLocked(sid, msgs)
	}
	if h.catchUpAgain[sid] {
		delete(h.catchUpAgain, sid)
		if h.unresolvedLocked(sid) {
			h.reconcileLocked(sid)
		}
	}
	h.pollAdoptedLocked(sid)
	h.maybeStopLocked()
	h.mu.Unlock()
	h.deliver(reports)
}

func (h *hub) settleFromMessagesLocked(sid string, msgs []ocTurnMessage) []report {
	var out []report
	attached := map[string]bool{}
	for _, ps := range h.pending[sid] {
		if ps.msgID != "" {
			attached[ps.msgID] = true
		}
	}
	for _, ps := range append([]*pendingSend(nil), h.pending[sid]...) {
		if ps.resolved {
			continue
		}
		if ps.msgID == "" {
			for _, m := range msgs {
				if m.Info.Role != "user" || attached[m.Info.ID] {
					continue
				}
				for _, p := range m.Parts {
					if p.Type == "text" && p.Text == ps.text {
						ps.msgID = m.Info.ID
						attached[m.Info.ID] = true
						break
					}
				}
				if ps.msgID != "" {
					break
				}
			}
			if ps.msgID == "" {
				continue
			}
		}
		var last *ocTurnMessage
		for i := range msgs {
			m := &msgs[i]
			if m.Info.Role != "assistant" || m.Info.ParentID != ps.msgID {
				continue
			}
			if len(m.Info.Error) > 0 && string(m.Info.Error) != "null" {
				ps.turn = factsFromMessages(msgs, ps.msgID).result(m.Info.Finish, m.Info.Error)
				out = h.resolveLocked(sid, ps, providers.StatusRejected, errorReason(m.Info.Error), out)
				last = nil
				break
			}
			last = m
		}
		if !ps.resolved && last != nil && last.Info.Time.Completed > 0 && last.Info.Finish != "" && last.Info.Finish != "tool-calls" {
			ps.turn = factsFromMessages(msgs, ps.msgID).result(last.Info.Finish, nil)
			out = h.resolveLocked(sid, ps, providers.StatusCompleted, "", out)
		}
	}
	return out
}
