package conversations

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/message"
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

// Reconcile settles interrupted sends, in one write transaction, and never
// resends anything (0.3.x reconcileInterruptedSends):
//
//   - Candidates are messages with delivery delivery_unknown, and queued
//     messages without a receipt. A queued candidate that this process is
//     dispatching, or whose dispatch lease has not expired, is skipped and
//     not reported.
//   - A candidate with an observed receipt (matched by idempotency key)
//     takes it: delivery = accepted ? (completed ? completed : queued) :
//     rejected; resolved is true.
//   - Otherwise a queued candidate becomes delivery_unknown; a
//     delivery_unknown one stays so. Resolved is false.
//   - Completed and rejected messages, and queued ones with a receipt, are
//     never touched. Repeating a pass changes nothing more.
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
	out := []ReconcileResult{}
	err := s.tx(ctx, func(tx *ent.Tx) error {
		out = out[:0] // a team store may run the transaction again
		where := []predicate.Message{message.Or(
			message.DeliveryEQ(message.DeliveryDeliveryUnknown),
			message.And(message.DeliveryEQ(message.DeliveryQueued), message.ReceiptIsNil()),
		)}
		if convID != "" {
			if _, err := getConversation(ctx, tx.Client(), convID); err != nil {
				return err
			}
			where = append(where, message.ConversationID(convID))
		}
		rows, err := tx.Message.Query().Where(where...).
			Order(ent.Asc(message.FieldConversationID), ent.Asc(message.FieldSequence)).
			All(ctx)
		if err != nil {
			return fmt.Errorf("read interrupted sends: %w", err)
		}
		now := s.now()
		for _, row := range rows {
			prev := Delivery(row.Delivery)
			if prev == DeliveryQueued && (s.isInflight(row.ID) ||
				(row.DispatchExpiresAt != nil && row.DispatchExpiresAt.After(now))) {
				continue
			}
			res := ReconcileResult{PreviousDelivery: prev}
			upd := row.Update().ClearDispatchLeaseID().ClearDispatchStartedAt().ClearDispatchExpiresAt()
			if o, ok := observed[row.IdempotencyKey]; ok {
				r := fill(o.Receipt, providers.Receipt{Operation: "send"})
				upd.SetReceipt(&r).SetDelivery(message.Delivery(deliveryFor(r)))
				res.Resolved = true
			} else if prev == DeliveryQueued {
				upd.SetDelivery(message.DeliveryDeliveryUnknown).SetDeliveryUnknownAt(now)
			} else {
				res.Message = messageView(row)
				out = append(out, res)
				continue
			}
			saved, err := upd.Save(ctx)
			if err != nil {
				return fmt.Errorf("update message %s: %w", row.ID, err)
			}
			res.Message = messageView(saved)
			out = append(out, res)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReconcileExpiredAtStartup runs one reconcile pass over every
// conversation with no observed receipts: sends left in flight by a
// runtime that stopped (their leases expired) become delivery_unknown.
// Sends another live process is dispatching keep their unexpired leases and
// are skipped. The server calls it after answering initialize, never
// before.
func (s *Service) ReconcileExpiredAtStartup(ctx context.Context) ([]ReconcileResult, error) {
	return s.Reconcile(ctx, ReconcileInput{})
}
