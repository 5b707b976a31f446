package conversations

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/internal/providers"
)

// ReconcileInput is the input of Reconcile.
type ReconcileInput struct {
	// ConversationID limits the pass to one conversation; empty means all.
	ConversationID string
	// ObservedReceipts resolve messages by idempotency key.
	ObservedReceipts []ObservedReceipt
}

// Reconcile settles interrupted sends through the delivery ledger and never
// resends anything (0.3.x reconcileInterruptedSends, on one ledger):
//
//   - Candidates are messages whose operation is delivery_unknown, or
//     queued with an owner that is gone (the runtime process that
//     dispatched it stopped). A queued message whose owner is alive (this
//     process or another one) is followed there: skipped, not reported.
//   - A candidate with an observed receipt (matched by idempotency key)
//     takes it: accepted ? (completed ? completed : queued) : rejected;
//     resolved is true.
//   - Otherwise a queued candidate is settled from the provider's native
//     history (completed or rejected only on an observed result, resolved
//     true; else delivery_unknown, resolved false); a delivery_unknown one
//     stays so.
//   - Completed and rejected messages are never touched. Repeating a pass
//     changes nothing more.
func (s *Service) Reconcile(ctx context.Context, in ReconcileInput) ([]ReconcileResult, error) {
	convID := strings.TrimSpace(in.ConversationID)
	observed := make(map[string]ObservedReceipt, len(in.ObservedReceipts))
	for _, o := range in.ObservedReceipts {
		k := strings.TrimSpace(o.IdempotencyKey)
		if k == "" {
			return nil, invalidf("observedReceipts: idempotencyKey must not be blank")
		}
		observed[k] = o
	}
	var rows []*ent.Message
	err := s.read(ctx, func(tx *ent.Tx) error {
		where := []predicate.Message{message.HasOperationWith(
			operation.StatusIn(operation.StatusQueued, operation.StatusDeliveryUnknown))}
		if convID != "" {
			if _, err := getConversation(ctx, tx.Client(), convID); err != nil {
				return err
			}
			where = append(where, message.ConversationID(convID))
		}
		var err error
		rows, err = tx.Message.Query().Where(where...).WithOperation().
			Order(ent.Asc(message.FieldConversationID), ent.Asc(message.FieldSequence)).All(ctx)
		if err != nil {
			return fmt.Errorf("read interrupted sends: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := []ReconcileResult{}
	for _, row := range rows {
		res, report, err := s.reconcileOne(ctx, row, observed)
		if err != nil {
			return out, err
		}
		if report {
			out = append(out, res)
		}
	}
	return out, nil
}

// reconcileOne settles one candidate; report is false for a message that
// is not a candidate (followed by a live owner).
func (s *Service) reconcileOne(ctx context.Context, row *ent.Message, observed map[string]ObservedReceipt) (ReconcileResult, bool, error) {
	if row.Edges.Operation == nil {
		return ReconcileResult{}, false, nil
	}
	op, err := s.ledger.Get(ctx, row.OperationID)
	if err != nil {
		return ReconcileResult{}, false, err
	}
	prev := Delivery(op.Status)
	followed, err := s.ledger.Followed(ctx, op)
	if err != nil || followed {
		return ReconcileResult{}, false, err
	}
	res := ReconcileResult{PreviousDelivery: prev}
	if o, ok := observed[row.IdempotencyKey]; ok {
		r := o.Receipt
		if r.Operation == "" {
			r.Operation = "send"
		}
		updated, changed, err := s.ledger.ApplyObserved(ctx, op.ID, r)
		if err != nil {
			return ReconcileResult{}, false, err
		}
		res.Message, res.Resolved = messageView(row, &updated), changed
		return res, true, nil
	}
	if op.Status == providers.StatusQueued {
		settled, err := s.ledger.SettleOperations(ctx, []string{op.ID})
		if err != nil {
			return ReconcileResult{}, false, err
		}
		for _, x := range settled {
			if x.ID == op.ID {
				op = x
			}
		}
		res.Resolved = op.Status == providers.StatusCompleted || op.Status == providers.StatusRejected
	}
	res.Message = messageView(row, &op)
	return res, true, nil
}
