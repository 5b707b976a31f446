package desk

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/runtimeowner"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
)

// Liveness states (the names of providers.Liveness).
const (
	LiveWorking           = "working"
	LiveWaitingOnApproval = "waiting_on_approval"
	LiveIdle              = "idle"
	LiveDead              = "dead"
	LiveUnknown           = "unknown"
)

// Where a liveness comes from.
const (
	// SourceRuntime: the memory of the runtime process that serves the
	// page (the desk of serve --http), which drives the session: its
	// adapter's own state of the provider process, the turn and the
	// approvals. Only it can say dead.
	SourceRuntime = "runtime"
	// SourceStore: inferred from what the store recorded (events,
	// operations, their owners), for a desk that does not drive the
	// session.
	SourceStore = "store"
)

// Liveness is what is known of a session now: its state, when that was
// last observed, why, and where that knowledge comes from. OwnerGone marks
// a session whose open operation belongs to a runtime process that is
// gone, so nobody follows its turn.
type Liveness struct {
	State      string
	ObservedAt *time.Time
	Reason     string
	Source     string
	OwnerGone  bool
}

// SourceText says where the state comes from, for the page.
func (l Liveness) SourceText() string {
	if l.Source == SourceRuntime {
		return "reported by this runtime process, which drives the session"
	}
	return "inferred from the store"
}

// LivenessFunc answers a session's liveness from a runtime's memory (the
// registry of the process that serves the session, such as
// registry.Liveness). ok false, or the unknown state, leaves the desk's
// own inference from the store in place. It must not contact the provider.
type LivenessFunc func(provider, nativeID string) (l Liveness, ok bool)

// RuntimeLiveness adapts a registry's liveness (registry.Liveness) to a
// LivenessFunc.
func RuntimeLiveness(f func(providers.ID, string) providers.Liveness) LivenessFunc {
	return func(provider, nativeID string) (Liveness, bool) {
		l := f(providers.ID(provider), nativeID)
		return Liveness{State: string(l.State), ObservedAt: l.ObservedAt, Reason: l.Reason, Source: SourceRuntime}, true
	}
}

// preferRuntime picks what the page shows: the runtime's own answer,
// unless it knows nothing of the session, or the store shows that another
// live runtime process drives the session now (its open operation), in
// which case this process's memory of it is out of date.
func preferRuntime(rt, st Liveness, drivenElsewhere bool) Liveness {
	if rt.State == "" || rt.State == LiveUnknown || drivenElsewhere {
		return st
	}
	rt.Source = SourceRuntime
	if rt.Reason == "" {
		rt.Reason = "the adapter's own state of the session"
	}
	return rt
}

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
	livenessEvents = 30
	// maxOpenOperations bounds the open (queued) operations read for a
	// page of sessions at once; past it, each session's are read alone.
	maxOpenOperations = 500
	openPerSession    = 5
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

// eventOperation is the type of the runtime's own event for an
// operation's later outcome (app.EventOperation).
const eventOperation = "interop.operation"

// operationSettled reports an interop.operation event that records an
// outcome (any status but queued).
func operationSettled(data json.RawMessage) bool {
	st := stringAt(jsonObject(data), []string{"status"})
	return st != "" && st != "queued"
}

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
	owner            string
	ownerGone        bool   // the owner cannot follow it any more
	ownerWhy         string // why, in the owner judge's words
	self             bool   // the owner is the process serving the desk
}

// sessionFacts are what the inference reads of a session: its newest
// events (newest first), its open (queued) operations, and whether it has
// any operation at all.
type sessionFacts struct {
	events       []eventFact
	open         []opFact
	anyOperation bool
}

// drivenElsewhere reports an open operation of another live runtime
// process.
func (f sessionFacts) drivenElsewhere() bool {
	for _, o := range f.open {
		if !o.ownerGone && !o.self {
			return true
		}
	}
	return false
}

// deriveLiveness infers a session's liveness from what the store recorded,
// for a desk that is not the process driving the session. In order:
//
//   - unknown, owner gone: an operation is still open but every runtime
//     process that owns one is gone (its row says it stopped, its pid is
//     not running on this host, its heartbeat is stale), so nobody follows
//     the turn; the next runtime settles it from the provider's history;
//   - waiting_on_approval: the provider's newest events (bookkeeping
//     aside) are approval requests;
//   - working: a send is queued (accepted, no result yet) and its owner
//     is alive;
//   - unknown: the newest event says the provider process was lost
//     (provider.restarted), and nothing was recorded since;
//   - idle: the provider said its turn ended, or no send is open and the
//     session has operations;
//   - unknown: nothing recorded says.
//
// dead is never inferred: the store records that the runtime process is
// gone, not the provider's session (see SourceRuntime).
func deriveLiveness(f sessionFacts) (Liveness, []PendingRequest) {
	l := Liveness{State: LiveUnknown, Source: SourceStore, Reason: "nothing recorded yet says what the session is doing"}
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
	var newest *eventFact
	for i, e := range f.events { // newest first
		if isApprovalEvent(e.typ) {
			pending = append(pending, PendingRequest{Sequence: e.seq, Type: e.typ, Title: approvalTitle(e.data), At: e.at})
			continue
		}
		// The runtime's record of an operation's outcome: a permission
		// answered, or the turn that asked has its outcome (settled after
		// its runtime died, say), so what was asked before is not pending.
		if e.typ == eventOperation && !operationSettled(e.data) {
			continue
		}
		if e.typ != eventOperation && isBookkeepingEvent(e.typ) {
			continue
		}
		newest = &f.events[i]
		break
	}
	var liveSend, orphan *opFact
	liveOps := 0
	for i := range f.open {
		o := &f.open[i]
		switch {
		case o.ownerGone:
			if orphan == nil {
				orphan = o
			}
		default:
			liveOps++
			if liveSend == nil && o.kind == "send" {
				liveSend = o
			}
		}
	}
	switch {
	case orphan != nil && liveOps == 0:
		l.State, l.OwnerGone = LiveUnknown, true
		l.Reason = fmt.Sprintf("its %s of %s is still open, but %s: nobody follows the turn now (the next runtime to start settles it from the provider's history)",
			orphan.kind, orphan.created.UTC().Format(time.TimeOnly), orphan.ownerWhy)
	case len(pending) > 0:
		l.State = LiveWaitingOnApproval
		l.Reason = fmt.Sprintf("%s asked at %s and the turn has not moved on since", pending[0].Type, pending[0].At.UTC().Format(time.TimeOnly))
	case liveSend != nil:
		l.State = LiveWorking
		l.Reason = "a send is queued since " + liveSend.created.UTC().Format(time.TimeOnly) + " (accepted, no result observed yet)"
	case newest != nil && newest.typ == providers.EventProviderRestarted:
		l.State = LiveUnknown
		l.Reason = "the provider process serving it was lost at " + newest.at.UTC().Format(time.TimeOnly)
		if why := stringAt(jsonObject(newest.data), []string{"reason"}); why != "" {
			l.Reason += " (" + shorten(why, 200) + ")"
		}
		l.Reason += "; what was in flight was not resent, and nothing is recorded since"
	case newest != nil && isTurnEndEvent(newest.typ):
		l.State = LiveIdle
		l.Reason = "the provider reported that its turn ended, and no send is open"
	case f.anyOperation && len(f.open) == 0, newest != nil && newest.typ == eventOperation && len(f.open) == 0:
		l.State = LiveIdle
		l.Reason = "no send is open: every one recorded has an outcome"
	}
	return l, pending
}

// maxRuntimeSessions bounds the sessions whose liveness the desk asks the
// runtime serving it for, and maxRuntimeOperations the operations read to
// find them.
const (
	maxRuntimeSessions   = 200
	maxRuntimeOperations = 2000
)

// runtimeSessions are the sessions whose liveness the desk takes from the
// runtime serving it (Options.Liveness, the desk of serve --http): the
// sessions that process drives, i.e. those of its own operations (owner
// Options.Owner), the most recent maxRuntimeSessions among its newest
// maxRuntimeOperations. Any other session shows the store's inference.
// The rows and the counts per liveness both follow this one rule, so they
// always agree. nil when the desk has no runtime's liveness.
func (r *reader) runtimeSessions(ctx context.Context) (map[[2]string]bool, error) {
	if r.live == nil || r.owners.self == "" {
		return nil, nil
	}
	list, err := r.client.Operation.Query().
		Where(operation.StatusIn(operation.StatusQueued, operation.StatusCompleted, operation.StatusRejected, operation.StatusDeliveryUnknown),
			operation.Owner(r.owners.self)).
		Order(ent.Desc(operation.FieldCreatedAt), ent.Desc(operation.FieldID)).Limit(maxRuntimeOperations).
		Select(operation.FieldProvider, operation.FieldNativeID).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the sessions this runtime drives: %w", err)
	}
	out := map[[2]string]bool{}
	for _, o := range list {
		if len(out) == maxRuntimeSessions {
			break
		}
		out[[2]string{o.Provider, o.NativeID}] = true
	}
	return out, nil
}

// ownerJudge decides whether the runtime process owning an open operation
// is gone, as settlement does (delivery.OwnerGone), seen from the desk's
// process. self is the owner id of the process serving the desk, if it
// owns operations (serve --http).
type ownerJudge struct {
	observer delivery.Process
	self     string
	timeout  time.Duration
	alive    func(pid int) bool
	clock    quartz.Clock
}

func (j ownerJudge) gone(id string, o *ent.RuntimeOwner) (bool, string) {
	switch {
	case id != "" && id == j.self:
		return false, ""
	case id == delivery.ImportedOwner:
		return true, "it was imported from a 0.3.x state file and no runtime process follows it"
	}
	return delivery.OwnerGone(id, o, j.observer, j.clock.Now(), j.timeout, j.alive)
}

// openOps are the open operations of a page of sessions, by session. A
// session without any here reads its own (sessionRow): more may be open
// than were read at once.
type openOps struct {
	by map[[2]string][]opFact
}

func (o openOps) of(provider, nativeID string) []opFact { return o.by[[2]string{provider, nativeID}] }

// openOperations reads the open (queued) operations of the store, few at
// any time (through the status index), with their owners' rows.
func (r *reader) openOperations(ctx context.Context) (openOps, error) {
	list, err := r.client.Operation.Query().Where(operation.StatusEQ(operation.StatusQueued)).
		Order(ent.Desc(operation.FieldCreatedAt), ent.Desc(operation.FieldID)).Limit(maxOpenOperations).
		Select(operation.FieldProvider, operation.FieldNativeID, operation.FieldOperation, operation.FieldStatus,
			operation.FieldOwner, operation.FieldCreatedAt, operation.FieldUpdatedAt).All(ctx)
	if err != nil {
		return openOps{}, fmt.Errorf("read open operations: %w", err)
	}
	out := openOps{by: map[[2]string][]opFact{}}
	facts, err := r.opFacts(ctx, list)
	if err != nil {
		return out, err
	}
	for i, o := range list {
		k := [2]string{o.Provider, o.NativeID}
		if len(out.by[k]) < openPerSession {
			out.by[k] = append(out.by[k], facts[i])
		}
	}
	return out, nil
}

// openOf reads one session's open operations (when the store has more
// open than openOperations reads at once).
func (r *reader) openOf(ctx context.Context, provider, nativeID string) ([]opFact, error) {
	list, err := r.client.Operation.Query().
		Where(operation.Provider(provider), operation.NativeID(nativeID), operation.StatusEQ(operation.StatusQueued)).
		Order(ent.Desc(operation.FieldCreatedAt), ent.Desc(operation.FieldID)).Limit(openPerSession).
		Select(operation.FieldOperation, operation.FieldStatus, operation.FieldOwner, operation.FieldCreatedAt, operation.FieldUpdatedAt).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the open operations of %s:%s: %w", provider, nativeID, err)
	}
	return r.opFacts(ctx, list)
}

// opFacts judges the owners of operations (one read of their rows).
func (r *reader) opFacts(ctx context.Context, list []*ent.Operation) ([]opFact, error) {
	ids := map[string]bool{}
	for _, o := range list {
		if o.Owner != "" {
			ids[o.Owner] = true
		}
	}
	owners := map[string]*ent.RuntimeOwner{}
	if len(ids) > 0 {
		keys := make([]string, 0, len(ids))
		for id := range ids {
			keys = append(keys, id)
		}
		rows, err := r.client.RuntimeOwner.Query().Where(runtimeowner.IDIn(keys...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the owners of open operations: %w", err)
		}
		for _, o := range rows {
			owners[o.ID] = o
		}
	}
	out := make([]opFact, len(list))
	for i, o := range list {
		gone, why := r.owners.gone(o.Owner, owners[o.Owner])
		out[i] = opFact{kind: o.Operation, status: string(o.Status), created: o.CreatedAt, updated: o.UpdatedAt,
			owner: o.Owner, ownerGone: gone, ownerWhy: why, self: o.Owner != "" && o.Owner == r.owners.self}
	}
	return out, nil
}

// approvalTitle picks a readable line out of an approval request's data.
func approvalTitle(data json.RawMessage) string {
	v := jsonObject(data)
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

func jsonObject(data json.RawMessage) map[string]any {
	var v map[string]any
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	return v
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
