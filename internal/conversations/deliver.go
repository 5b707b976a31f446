package conversations

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/internal/providers"
)

// outcomeWriteTimeout bounds the write that records a dispatch outcome. It
// runs even when the caller's context was cancelled: an outcome is never
// dropped because the caller went away.
const outcomeWriteTimeout = 30 * time.Second

// envelope is the text a recipient session receives.
func envelope(messageID, sender, text string) string {
	return fmt.Sprintf("[agent-interop message %s from %s]\n%s", messageID, sender, text)
}

// deliver dispatches a recorded message and records the outcome.
func (s *Service) deliver(ctx context.Context, rec recorded, in SendInput, text string) (SendResult, error) {
	id := rec.msg.ID
	s.markInflight(id)
	defer s.clearInflight(id)

	opts := DispatchOptions{
		Mode:           "send",
		Model:          in.Model,
		Reasoning:      strings.TrimSpace(in.Reasoning),
		MessageID:      id,
		IdempotencyKey: rec.msg.IdempotencyKey,
	}
	stop := s.renewWhileInFlight(ctx, id, rec.leaseID)
	got, derr := s.dispatch(ctx, rec.provider, rec.nativeID, envelope(id, rec.msg.Sender, text), opts)
	stop()

	base := providers.Receipt{Provider: providers.ID(rec.provider), NativeID: rec.nativeID, Operation: "send"}
	receipt, delivery, reason := classify(base, got, derr)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), outcomeWriteTimeout)
	defer cancel()
	msg, err := s.recordOutcome(wctx, id, delivery, receipt)
	if err != nil {
		return SendResult{}, fmt.Errorf("record %s delivery of message %s: %w (its dispatch lease will expire and reconcile_conversation will mark it delivery_unknown)",
			delivery, id, err)
	}
	if delivery == DeliveryUnknown {
		return SendResult{}, &DeliveryUnknownError{Message: msg, Reason: reason}
	}
	return SendResult{Message: msg, Receipt: receipt}, nil
}

// dispatch calls the Dispatcher; a panic is an uncertain outcome.
func (s *Service) dispatch(ctx context.Context, provider, nativeID, text string, opts DispatchOptions) (r providers.Receipt, err error) {
	if s.dispatcher == nil {
		return r, &providers.NotSentError{Err: errors.New("no provider dispatcher is configured")}
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("dispatcher panicked: %v", p)
		}
	}()
	return s.dispatcher.Dispatch(ctx, provider, nativeID, text, opts)
}

// classify turns a dispatch result into the receipt to store, the delivery
// state and, for an uncertain outcome, the reason.
//
//   - A returned receipt: delivery = accepted ? (completed ? completed :
//     queued) : rejected. A receipt whose status says delivery_unknown is
//     treated as an uncertain outcome.
//   - NotSent, Rejected and Unsupported errors: rejected, with the reason.
//   - Any other error: delivery_unknown, with the 0.3.x receipt
//     {accepted:false, status:"rejected", detail:{reason, classification:"delivery_unknown"}}.
func classify(base, got providers.Receipt, err error) (providers.Receipt, Delivery, string) {
	if err == nil && got.Status == providers.StatusDeliveryUnknown {
		err = errors.New("provider reported delivery_unknown")
		if got.ProviderState != "" {
			err = fmt.Errorf("provider reported delivery_unknown (%s)", got.ProviderState)
		}
	}
	if err == nil {
		r := fill(got, base)
		return r, deliveryFor(r), ""
	}
	r := base
	r.Accepted = false
	r.Status = providers.StatusRejected
	if providers.IsUncertain(err) {
		reason := err.Error()
		r.Detail = map[string]any{"reason": reason, "classification": "delivery_unknown"}
		return r, DeliveryUnknown, reason
	}
	detail := map[string]any{"reason": err.Error()}
	var rj *providers.RejectedError
	var ns *providers.NotSentError
	switch {
	case errors.As(err, &rj):
		detail["reason"] = rj.Reason
		detail["classification"] = "rejected"
		if rj.Detail != nil {
			detail["detail"] = rj.Detail
		}
	case errors.As(err, &ns):
		detail["classification"] = "not_sent"
	default:
		detail["classification"] = "unsupported"
	}
	r.Detail = detail
	return r, DeliveryRejected, ""
}

// fill completes a receipt's identity fields from base.
func fill(r, base providers.Receipt) providers.Receipt {
	if r.Provider == "" {
		r.Provider = base.Provider
	}
	if r.NativeID == "" {
		r.NativeID = base.NativeID
	}
	if r.Operation == "" {
		r.Operation = base.Operation
	}
	return r
}

// recordOutcome stores a dispatch outcome and removes the lease. A record
// that reached a terminal state meanwhile (reconciled with an observed
// receipt) is left as it is.
func (s *Service) recordOutcome(ctx context.Context, id string, d Delivery, r providers.Receipt) (Message, error) {
	var out Message
	err := s.tx(ctx, func(tx *ent.Tx) error {
		row, err := tx.Message.Get(ctx, id)
		if err != nil {
			return fmt.Errorf("read message: %w", err)
		}
		if row.Delivery == message.DeliveryCompleted || row.Delivery == message.DeliveryRejected {
			out = messageView(row)
			return nil
		}
		upd := row.Update().
			SetDelivery(message.Delivery(d)).
			SetReceipt(&r).
			ClearDispatchLeaseID().
			ClearDispatchStartedAt().
			ClearDispatchExpiresAt()
		if d == DeliveryUnknown {
			upd.SetDeliveryUnknownAt(s.now())
		}
		if row, err = upd.Save(ctx); err != nil {
			return fmt.Errorf("update message: %w", err)
		}
		out = messageView(row)
		return nil
	})
	return out, err
}

// renewWhileInFlight extends the message's lease every renewEvery until
// the returned stop function is called (stop waits for a renewal in
// progress). Renewal is best effort: if it fails, the lease expires and
// reconcile marks the message delivery_unknown, which is the safe side.
func (s *Service) renewWhileInFlight(ctx context.Context, id, leaseID string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	wctx := context.WithoutCancel(ctx)
	go func() {
		defer close(finished)
		t := time.NewTicker(s.renewEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = s.renew(wctx, id, leaseID)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// renew moves the lease's expiry to now + leaseTTL while the message is
// still queued under this lease without a receipt.
func (s *Service) renew(ctx context.Context, id, leaseID string) error {
	ctx, cancel := context.WithTimeout(ctx, outcomeWriteTimeout)
	defer cancel()
	return s.tx(ctx, func(tx *ent.Tx) error {
		return tx.Message.Update().
			Where(message.ID(id), message.DispatchLeaseID(leaseID),
				message.DeliveryEQ(message.DeliveryQueued), message.ReceiptIsNil()).
			SetDispatchExpiresAt(s.now().Add(s.leaseTTL)).
			Exec(ctx)
	})
}
