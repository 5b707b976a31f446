package desk

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Liveness states (the names of the truth issue's providers.Liveness).
const (
	LiveWorking           = "working"
	LiveWaitingOnApproval = "waiting_on_approval"
	LiveIdle              = "idle"
	LiveDead              = "dead"
	LiveUnknown           = "unknown"
)

// Liveness is what is known of a session now: its state, when that was
// last observed, and why. Derived is true when the desk inferred it from
// the store rather than asked the runtime that holds the session.
type Liveness struct {
	State      string
	ObservedAt *time.Time
	Reason     string
	Derived    bool
}

// LivenessFunc answers a session's liveness from a runtime's memory (the
// registry of the process that serves the session). ok false, or the
// unknown state, leaves the desk's own inference from the store in place.
// It must not contact the provider.
type LivenessFunc func(provider, nativeID string) (l Liveness, ok bool)

// PendingRequest is an approval a provider asked for that, by the store's
// record, nobody has answered yet.
type PendingRequest struct {
	Sequence int64
	Type     string
	Title    string
	At       time.Time
}

// How much of a session's recent history the inference reads.
const (
	livenessEvents     = 30
	livenessOperations = 5 // open operations read per session
)

// Event types by what they say about a session. The approval requests are
// those the adapters log (Codex app-server requests, ACP
// session/request_permission, OpenCode permission events). Bookkeeping
// events (status changes, token counts, the runtime's own operation
// events) say nothing about a pending request; any other event after a
// request means the turn moved on, so the request was answered. A turn's
// end says the session is idle. (Switches, not maps: a package-level map
// would be built at every start of the binary.)
func isApprovalEvent(typ string) bool {
	switch typ {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval", "item/permissions/requestApproval",
		"execCommandApproval", "applyPatchApproval", "session/request_permission", "permission.asked", "permission.updated":
		return true
	}
	return false
}

func isBookkeepingEvent(typ string) bool {
	switch typ {
	case "thread/status/changed", "thread/tokenUsage/updated", "warning", "interop.operation", "session.status", "session.updated":
		return true
	}
	return false
}

func isTurnEndEvent(typ string) bool { return typ == "turn/completed" || typ == "session.idle" }

// eventFact and opFact are the parts of the store the inference reads.
type eventFact struct {
	seq  int64
	typ  string
	at   time.Time
	data json.RawMessage
}

type opFact struct {
	kind, status     string
	created, updated time.Time
}

// sessionFacts are what the inference reads of a session: its newest
// events (newest first), its open (queued) operations, and whether it has
// any operation at all.
type sessionFacts struct {
	events       []eventFact
	open         []opFact
	anyOperation bool
}

// deriveLiveness infers a session's liveness from what the store recorded,
// for a desk that is not the process serving the session:
//
//   - waiting_on_approval: the provider's newest events (bookkeeping
//     aside) are approval requests;
//   - working: a send is still queued (accepted, no result yet);
//   - idle: no send is open and the session has operations, or the
//     provider said its turn ended;
//   - unknown: nothing recorded says either.
//
// dead is never inferred from the store: only the runtime holding the
// session's process knows (see LivenessFunc).
func deriveLiveness(f sessionFacts) (Liveness, []PendingRequest) {
	l := Liveness{State: LiveUnknown, Derived: true, Reason: "nothing recorded yet says what the session is doing"}
	var observed time.Time
	if len(f.events) > 0 {
		observed = f.events[0].at
	}
	for _, o := range f.open {
		if o.updated.After(observed) {
			observed = o.updated
		}
	}
	if !observed.IsZero() {
		t := observed
		l.ObservedAt = &t
	}
	var pending []PendingRequest
	turnEnded := false
	for _, e := range f.events { // newest first
		if isApprovalEvent(e.typ) {
			pending = append(pending, PendingRequest{Sequence: e.seq, Type: e.typ, Title: approvalTitle(e.data), At: e.at})
			continue
		}
		if isBookkeepingEvent(e.typ) {
			continue
		}
		turnEnded = isTurnEndEvent(e.typ)
		break
	}
	var send *opFact
	for i := range f.open {
		if f.open[i].kind == "send" {
			send = &f.open[i]
			break
		}
	}
	switch {
	case len(pending) > 0:
		l.State = LiveWaitingOnApproval
		l.Reason = fmt.Sprintf("%s asked at %s and the turn has not moved on since", pending[0].Type, pending[0].At.UTC().Format(time.TimeOnly))
	case send != nil:
		l.State = LiveWorking
		l.Reason = "a send is queued since " + send.created.UTC().Format(time.TimeOnly) + " (accepted, no result observed yet)"
	case turnEnded:
		l.State = LiveIdle
		l.Reason = "the provider reported that its turn ended, and no send is open"
	case f.anyOperation && len(f.open) == 0:
		l.State = LiveIdle
		l.Reason = "no send is open: every one recorded has an outcome"
	}
	return l, pending
}

// approvalTitle picks a readable line out of an approval request's data.
func approvalTitle(data json.RawMessage) string {
	var v map[string]any
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	for _, path := range [][]string{{"title"}, {"toolCall", "title"}, {"command"}, {"reason"}, {"permission"}} {
		if s := stringAt(v, path); s != "" {
			if r := []rune(s); len(r) > 200 {
				s = string(r[:200]) + "…"
			}
			return s
		}
	}
	return ""
}

func stringAt(v map[string]any, path []string) string {
	var cur any = v
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[k]
	}
	switch x := cur.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, 0, len(x))
		for _, p := range x {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}
