package desk

import (
	"context"
	"fmt"
	"strings"

	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqljson"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/ent/providersession"
	"github.com/agent-interop/runtime/ent/sessionevent"
	"github.com/agent-interop/runtime/ent/sessionstream"
	"github.com/agent-interop/runtime/internal/providers"
)

// Counts of the sessions page per liveness, computed in the store.
//
// A session's liveness is inferred from its newest events and its open
// operations (deriveLiveness). The sessions with an open (queued)
// operation are few at any time (the status index finds them), and only
// they need their owners judged: each of those the filter selects is
// read as its row is. Every other session's liveness follows from its
// newest significant event among its last livenessEvents (the one
// deriveLiveness stops at) and whether it has any operation, which the
// store answers with a correlated subquery on the (provider, native_id,
// sequence) index: a handful of COUNTs, never a row per session.
//
// The runtime's own liveness (Options.Liveness, the desk of serve --http)
// is shown for the sessions that runtime drives, a bounded set
// (runtimeSessions). Those with an open operation are counted row by row
// already; each of the others that the filter selects is read as its row
// is and moved from the bucket of the store's inference to the state its
// row shows. So every count is the number of rows showing that state.

// SessionCounts are the counts per liveness of the sessions a filter
// selects.
type SessionCounts struct {
	Tally // Counts in livenessStates order
	OOB   string
}

// livenessStates are the liveness states in the order the counts show them.
var livenessStates = []string{LiveWorking, LiveWaitingOnApproval, LiveIdle, LiveDead, LiveUnknown}

// maxCountedOpen bounds the sessions with an open operation whose
// liveness a count derives one by one.
const maxCountedOpen = 200

// sessionWhere is the filter as SQL predicates.
func sessionWhere(f SessionFilter) []predicate.ProviderSession {
	var ps []predicate.ProviderSession
	if f.Provider != "" {
		ps = append(ps, providersession.Provider(f.Provider))
	}
	if ws := strings.TrimRight(f.Workspace, "/"); ws != "" {
		ps = append(ps, providersession.Or(providersession.Cwd(ws), providersession.CwdHasPrefix(ws+"/")))
	}
	return ps
}

// openOperationOf is the condition "the session has a queued operation".
func openOperationOf(s *entsql.Selector) *entsql.Predicate {
	o := entsql.Table(operation.Table).As("open_op")
	return entsql.Exists(entsql.Select(o.C(operation.FieldID)).From(o).Where(entsql.And(
		entsql.ColumnsEQ(o.C(operation.FieldProvider), s.C(providersession.FieldProvider)),
		entsql.ColumnsEQ(o.C(operation.FieldNativeID), s.C(providersession.FieldNativeID)),
		entsql.EQ(o.C(operation.FieldStatus), operation.StatusQueued),
	)))
}

// anyOperationOf is the condition "the session has an operation".
func anyOperationOf(s *entsql.Selector) *entsql.Predicate {
	o := entsql.Table(operation.Table).As("any_op")
	return entsql.Exists(entsql.Select(o.C(operation.FieldID)).From(o).Where(entsql.And(
		entsql.ColumnsEQ(o.C(operation.FieldProvider), s.C(providersession.FieldProvider)),
		entsql.ColumnsEQ(o.C(operation.FieldNativeID), s.C(providersession.FieldNativeID)),
	)))
}

// bookkeepingTypes are the event types isBookkeepingEvent names but the
// runtime's own operation event (which is significant once settled).
var bookkeepingTypes = []any{"thread/status/changed", "thread/tokenUsage/updated", "warning", "session.status", "session.updated"}

// newestSignificant is the type of the session's newest event among its
// last livenessEvents that deriveLiveness does not step over: not
// bookkeeping, not an operation event without an outcome ("" when there
// is none), as an expression of the outer sessions query.
func newestSignificant(s *entsql.Selector) entsql.Querier {
	e := entsql.Table(sessionevent.Table).As("sig_ev")
	h := entsql.Table(sessionstream.Table).As("sig_head")
	status := sqljson.Path("status")
	head := entsql.Select(h.C(sessionstream.FieldLastSequence)).From(h).Where(entsql.And(
		entsql.ColumnsEQ(h.C(sessionstream.FieldProvider), s.C(providersession.FieldProvider)),
		entsql.ColumnsEQ(h.C(sessionstream.FieldNativeID), s.C(providersession.FieldNativeID)),
	))
	sub := entsql.Select(e.C(sessionevent.FieldType)).From(e).Where(entsql.And(
		entsql.ColumnsEQ(e.C(sessionevent.FieldProvider), s.C(providersession.FieldProvider)),
		entsql.ColumnsEQ(e.C(sessionevent.FieldNativeID), s.C(providersession.FieldNativeID)),
		entsql.P(func(b *entsql.Builder) {
			b.Ident(e.C(sessionevent.FieldSequence)).WriteString(" > ")
			b.Wrap(func(b *entsql.Builder) { b.Join(head) })
			b.WriteString(" - ").Arg(livenessEvents)
		}),
		entsql.NotIn(e.C(sessionevent.FieldType), bookkeepingTypes...),
		entsql.Not(entsql.And(
			entsql.EQ(e.C(sessionevent.FieldType), eventOperation),
			entsql.Or(
				entsql.Not(sqljson.HasKey(e.C(sessionevent.FieldData), status)),
				sqljson.ValueIn(e.C(sessionevent.FieldData), []any{"queued", ""}, status),
			),
		)),
	)).OrderBy(entsql.Desc(e.C(sessionevent.FieldSequence))).Limit(1)
	return entsql.ExprFunc(func(b *entsql.Builder) {
		b.WriteString("COALESCE(")
		b.Wrap(func(b *entsql.Builder) { b.Join(sub) })
		b.WriteString(", ").Arg("").WriteString(")")
	})
}

// significantIn is the condition "the newest significant event is one of
// types".
func significantIn(s *entsql.Selector, types ...string) *entsql.Predicate {
	args := make([]any, len(types))
	for i, t := range types {
		args[i] = t
	}
	return entsql.P(func(b *entsql.Builder) {
		b.Join(newestSignificant(s)).WriteString(" IN ")
		b.Wrap(func(b *entsql.Builder) { b.Args(args...) })
	})
}

// approvalTypes are the event types isApprovalEvent names.
var approvalTypes = []string{"item/commandExecution/requestApproval", "item/fileChange/requestApproval", "item/permissions/requestApproval",
	"execCommandApproval", "applyPatchApproval", "session/request_permission", "permission.asked", "permission.updated"}

func (r *reader) sessionCounts(ctx context.Context, f SessionFilter) (SessionCounts, error) {
	var out SessionCounts
	by := map[string]int{}
	base := func() *ent.ProviderSessionQuery { return r.client.ProviderSession.Query().Where(sessionWhere(f)...) }
	var err error
	if out.Total, err = base().Count(ctx); err != nil {
		return out, fmt.Errorf("count sessions: %w", err)
	}
	// The sessions with an open operation, one by one.
	open, err := base().Where(func(s *entsql.Selector) { s.Where(openOperationOf(s)) }).
		Order(ent.Desc(providersession.FieldID)).Limit(maxCountedOpen + 1).All(ctx)
	if err != nil {
		return out, fmt.Errorf("read the sessions with an open operation: %w", err)
	}
	if len(open) > maxCountedOpen {
		return out, fmt.Errorf("count sessions by liveness: more than %d sessions have an open operation", maxCountedOpen)
	}
	rows, err := r.sessionRows(ctx, open)
	if err != nil {
		return out, err
	}
	for _, row := range rows {
		by[row.Liveness.State]++
	}
	// The others, from their newest significant event.
	settled := func() *ent.ProviderSessionQuery {
		return base().Where(func(s *entsql.Selector) { s.Where(entsql.Not(openOperationOf(s))) })
	}
	rest := out.Total - len(open)
	waitingN, err := settled().Where(func(s *entsql.Selector) { s.Where(significantIn(s, approvalTypes...)) }).Count(ctx)
	if err != nil {
		return out, fmt.Errorf("count the sessions waiting on an approval: %w", err)
	}
	idleN, err := settled().Where(func(s *entsql.Selector) {
		s.Where(entsql.And(
			entsql.Not(significantIn(s, append([]string{providers.EventProviderRestarted}, approvalTypes...)...)),
			entsql.Or(significantIn(s, "turn/completed", "session.idle", eventOperation), anyOperationOf(s)),
		))
	}).Count(ctx)
	if err != nil {
		return out, fmt.Errorf("count the idle sessions: %w", err)
	}
	by[LiveWaitingOnApproval] += waitingN
	by[LiveIdle] += idleN
	by[LiveUnknown] += max(0, rest-waitingN-idleN)
	// The sessions with no open operation whose rows show the runtime's
	// own liveness: from the store's bucket to the runtime's.
	mine, err := r.runtimeSessions(ctx)
	if err != nil {
		return out, err
	}
	if len(mine) > 0 {
		keys := make([]predicate.ProviderSession, 0, len(mine))
		for k := range mine {
			keys = append(keys, providersession.And(providersession.Provider(k[0]), providersession.NativeID(k[1])))
		}
		driven, err := settled().Where(providersession.Or(keys...)).All(ctx)
		if err != nil {
			return out, fmt.Errorf("read the sessions this runtime drives: %w", err)
		}
		rows, err := r.sessionRows(ctx, driven)
		if err != nil {
			return out, err
		}
		for _, row := range rows {
			by[row.stored.State]--
			by[row.Liveness.State]++
		}
	}
	for _, st := range livenessStates {
		out.Counts = append(out.Counts, StatusCount{Status: st, N: by[st]})
	}
	return out, nil
}
