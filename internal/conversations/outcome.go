package conversations

import (
	"context"
	"fmt"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/internal/providers"
)

// RecordOutcome applies an outcome the provider reported after a message's
// dispatch returned: a queued (transport-accepted) or delivery_unknown
// message becomes completed or rejected, and its receipt says so. Completed
// and rejected messages are never changed, and nothing is ever resent. It
// reports whether a message changed.
func (s *Service) RecordOutcome(ctx context.Context, idempotencyKey string, status providers.ReceiptStatus, reason string) (bool, error) {
	if status != providers.StatusCompleted && status != providers.StatusRejected {
		return false, nil
	}
	changed := false
	err := s.tx(ctx, func(tx *ent.Tx) error {
		row, err := tx.Message.Query().Where(message.IdempotencyKey(idempotencyKey)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read message for outcome: %w", err)
		}
		if row.Delivery != message.DeliveryQueued && row.Delivery != message.DeliveryDeliveryUnknown {
			return nil
		}
		r := providers.Receipt{Operation: "send", Accepted: status == providers.StatusCompleted, Status: status, ProviderState: "outcome_observed"}
		if row.Receipt != nil {
			r.Provider, r.NativeID = row.Receipt.Provider, row.Receipt.NativeID
		}
		if reason != "" {
			r.Detail = map[string]any{"reason": reason}
		}
		changed = true
		return row.Update().SetReceipt(&r).SetDelivery(message.Delivery(deliveryFor(r))).
			ClearDispatchLeaseID().ClearDispatchStartedAt().ClearDispatchExpiresAt().Exec(ctx)
	})
	return changed, err
}
