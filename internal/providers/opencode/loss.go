package opencode

import (
	"encoding/json"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/kit/pending"
)

// This file is what the hub's prompts in flight are to the adapter kit:
// operations of a pending.Tracker, one tracker per server, which settles
// them all delivery_unknown in one place when that server is lost.

// unsettledTurn is what a lost server leaves unknown of a followed prompt.
const unsettledTurn = "the turn had not finished and may have run in part; it is not resent"

// report is an outcome to pass to the host outside the hub's locks.
type report = pending.Outcome

func (h *hub) deliver(reports []report) {
	pending.Report(h.a.host, providers.OpenCode, reports)
}

// following reports whether a prompt's outcome is being followed: one is
// in flight on the current server.
func (h *hub) following() bool {
	return len(h.ops.Load().InFlight()) > 0
}

// promptRunning reports whether a prompt of session sid is in flight.
func (h *hub) promptRunning(sid string) bool {
	for _, op := range h.ops.Load().InFlight() {
		if op.NativeID == sid {
			return true
		}
	}
	return false
}

// addLocked follows ps, a prompt of session sid, on the current server's
// tracker. The caller holds turnMu.
func (h *hub) addLocked(sid string, ps *pendingSend) {
	ps.ops = h.ops.Load()
	if late := ps.ops.Add(pending.Op{NativeID: sid, Ref: ps.ref, Unsettled: unsettledTurn}); len(late) > 0 {
		ps.lost, ps.lostReason = true, late[0].Reason // not reached: a lost tracker is replaced at once
	}
	h.pending[sid] = append(h.pending[sid], ps)
}

// lateReason is the reason of a result observed after its prompt was
// settled delivery_unknown for lostReason.
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
// later is still reported (resolveLocked). The caller holds turnMu.
func (h *hub) loseLocked(reason string) []report {
	outs := h.ops.Swap(new(pending.Tracker)).Lost(reason)
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
	h.serverLost(now, reason, len(outs) > 0)
	if rep, ok := h.a.host.(providers.EventReporter); ok {
		for _, sid := range pending.Sessions(out) {
			data, _ := json.Marshal(map[string]any{"reason": reason, "resent": false})
			go rep.ReportEvent(providers.OpenCode, providers.NativeEvent{NativeID: sid, Timestamp: now, Type: providers.EventProviderRestarted, Data: data})
		}
	}
	return out
}

// lost is loseLocked for callers without turnMu; they report what it
// returns outside their locks.
func (h *hub) lost(reason string) []report {
	h.turnMu.Lock()
	defer h.turnMu.Unlock()
	return h.loseLocked(reason)
}

// lose settles the prompts in flight after the server was lost for reason
// and reports them.
func (h *hub) lose(reason string) {
	h.deliver(h.lost(reason))
}
