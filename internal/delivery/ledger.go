package delivery

import (
	"context"
	"fmt"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/runtimeowner"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
)

// This file is the ledger as other records use it: a conversation message
// is written in the same transaction as the operation that carries it, and
// shows that operation's state.

// Target is a session a send will go to, resolved before anything is
// recorded.
type Target struct{ route registry.Route }

// Prepare resolves the session a send will go to; nothing is recorded.
func (s *Service) Prepare(ctx context.Context, provider, nativeID string) (Target, error) {
	rt, err := s.reg.Resolve(ctx, provider, nativeID)
	if err != nil {
		return Target{}, err
	}
	return Target{route: rt}, nil
}

// Pending is a send recorded inside a caller's transaction; Dispatch sends
// it once that transaction committed.
type Pending struct {
	Operation Operation
	route     registry.Route
	sp        spec
}

// RecordSend records a send to t inside tx, queued and owned by this
// process, refusing a reused key with a *DuplicateKeyError.
func (s *Service) RecordSend(ctx context.Context, tx *ent.Tx, t Target, req SendRequest) (*Pending, error) {
	sp, err := sendSpec(req)
	if err != nil {
		return nil, err
	}
	key, err := s.checkKey(req.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	op, err := s.recordTx(ctx, tx, t.route.Provider, t.route.NativeID, key, sp)
	if err != nil {
		return nil, err
	}
	return &Pending{Operation: op, route: t.route, sp: sp}, nil
}

// RecordRefused records, inside tx, a send that is rejected before it is
// dispatched (its session cannot be reached), with why as the reason.
func (s *Service) RecordRefused(ctx context.Context, tx *ent.Tx, provider, nativeID string, req SendRequest, why error) (Operation, error) {
	sp, err := sendSpec(req)
	if err != nil {
		return Operation{}, err
	}
	key, err := s.checkKey(req.IdempotencyKey)
	if err != nil {
		return Operation{}, err
	}
	op, err := s.recordTx(ctx, tx, providers.ID(provider), nativeID, key, sp)
	if err != nil {
		return Operation{}, err
	}
	d := decodeDetail(op.Detail)
	d.Reason, d.Classification = why.Error(), "not_sent"
	u, err := tx.Operation.UpdateOneID(op.ID).SetStatus(operation.StatusRejected).SetProviderState("not_sent").
		SetDetail(d.raw()).Save(ctx)
	if err != nil {
		return Operation{}, err
	}
	return fromEnt(u), nil
}

// Committed tells the service that a transaction holding RecordSend or
// RecordRefused committed.
func (s *Service) Committed() { s.registeredNow() }

// Dispatch sends a recorded operation (after its transaction committed) and
// stores the outcome, like Send.
func (s *Service) Dispatch(ctx context.Context, p *Pending) (Result, error) {
	s.registeredNow()
	return s.dispatch(ctx, p.Operation, p.route, p.sp)
}

// OperationsTx reads operations by id inside a transaction (a read snapshot
// or a write transaction).
func OperationsTx(ctx context.Context, tx *ent.Tx, ids []string) (map[string]Operation, error) {
	out := make(map[string]Operation, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := tx.Operation.Query().Where(operation.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read operations: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = fromEnt(r)
	}
	return out, nil
}

// Followed reports whether an open operation is not for reconciliation to
// settle: a live process (this one or another) owns it and will record its
// outcome, or it was imported (ImportedOwner) as transport-accepted, which
// is its final record.
func (s *Service) Followed(ctx context.Context, op Operation) (bool, error) {
	if op.Status != providers.StatusQueued {
		return false, nil
	}
	if op.Owner == s.self().ID || op.Owner == ImportedOwner {
		return true, nil
	}
	o, err := s.st.Client().RuntimeOwner.Query().Where(runtimeowner.ID(op.Owner)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return false, fmt.Errorf("read owner of %s: %w", op.ID, err)
	}
	gone, _ := s.gone(op.Owner, o)
	return !gone, nil
}

// ApplyObserved records a receipt the caller observed for an operation
// (reconcile_conversation's observedReceipts): accepted ? (completed ?
// completed : queued) : rejected. A queued or delivery_unknown operation
// takes it; completed and rejected ones never change. It reports whether
// the operation changed.
func (s *Service) ApplyObserved(ctx context.Context, id string, r providers.Receipt) (Operation, bool, error) {
	target := operation.StatusQueued
	switch {
	case !r.Accepted:
		target = operation.StatusRejected
	case r.Status == providers.StatusCompleted:
		target = operation.StatusCompleted
	}
	var out Operation
	changed := false
	err := s.st.Tx(ctx, func(tx *ent.Tx) error {
		if err := s.ensureOwnerTx(ctx, tx); err != nil {
			return err
		}
		o, err := tx.Operation.Get(ctx, id)
		if err != nil {
			return fmt.Errorf("read operation %s: %w", id, err)
		}
		out = fromEnt(o)
		if o.Status != operation.StatusQueued && o.Status != operation.StatusDeliveryUnknown {
			return nil
		}
		d := decodeDetail(o.Detail)
		d.Receipt = r.Detail
		d.Outcome = &outcomeDetail{Status: providers.ReceiptStatus(target), Reason: "observed by the caller", At: s.opts.Clock.Now().UTC()}
		d.Reason, d.Classification = "", ""
		if target == operation.StatusRejected {
			d.Reason = "the caller observed a refusal"
		}
		u, err := tx.Operation.UpdateOneID(id).Where(operation.StatusEQ(o.Status)).
			SetStatus(target).SetProviderState("caller_observed").SetOwner(s.self().ID).SetDetail(d.raw()).
			SetUpdatedAt(s.opts.Clock.Now().UTC()).Save(ctx)
		if err != nil {
			return fmt.Errorf("record observed receipt of %s: %w", id, err)
		}
		out, changed = fromEnt(u), true
		return nil
	})
	if err == nil {
		s.registeredNow()
		if changed {
			s.notify(out)
		}
	}
	return out, changed, err
}
