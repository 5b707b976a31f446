package delivery

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/growstack"
	"github.com/agent-interop/runtime/internal/providers"
)

var _ providers.Host = (*Service)(nil)

// ReportOutcome implements providers.Host: the observed outcome of the
// operations whose receipt carried ref. It returns at once; the record is
// updated by the service's worker, in arrival order.
func (s *Service) ReportOutcome(provider providers.ID, nativeID, ref string, o providers.Outcome) {
	if ref == "" {
		return
	}
	r := outcomeReport{k: refKey{provider, nativeID, ref}, status: o.Status, reason: o.Reason, turn: o.Turn, at: s.opts.Clock.Now().UTC()}
	s.startWorker()
	select {
	case s.queue <- r:
	case <-s.stop:
	}
}

// Sync waits until every outcome reported before the call was handled.
func (s *Service) Sync(ctx context.Context) error {
	ack := make(chan struct{})
	s.startWorker()
	select {
	case s.queue <- outcomeReport{ack: ack}:
	case <-s.stop:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startWorker makes the outcome queue and starts its worker, the first
// time an outcome is reported (or Sync is called), not when the service is
// built: a process whose sessions report nothing never holds the 1,024-slot
// queue or the goroutine. After Close it does nothing (the queue stays nil,
// and a send on it gives way to the closed stop channel).
func (s *Service) startWorker() {
	s.worker.Do(func() {
		s.queue = make(chan outcomeReport, 1024)
		go s.work()
	})
}

func (s *Service) work() {
	defer close(s.done)
	growstack.Grow() // every outcome is written to the store
	handle := func(r outcomeReport) {
		if r.ack != nil {
			close(r.ack)
			return
		}
		ctx, cancel := clockctx.WithTimeout(context.Background(), s.opts.Clock, outcomeWriteTimeout, "delivery", "outcome write")
		defer cancel()
		s.mu.Lock()
		matched, changed := s.apply(ctx, r.k, r.status, r.reason, r.turn, r.at)
		if !matched {
			s.stash(r)
		}
		s.mu.Unlock()
		s.notify(changed...)
	}
	for {
		select {
		case r := <-s.queue:
			handle(r)
		case <-s.stop:
			for {
				select {
				case r := <-s.queue:
					handle(r)
				default:
					return
				}
			}
		}
	}
}

// stash keeps an outcome whose receipt is not recorded yet. Caller holds s.mu.
func (s *Service) stash(r outcomeReport) {
	now := s.opts.Clock.Now()
	if len(s.early) >= maxEarly {
		for k, es := range s.early {
			if len(es) == 0 || now.Sub(es[len(es)-1].at) > earlyTTL {
				delete(s.early, k)
			}
		}
		if len(s.early) >= maxEarly {
			s.opts.Logf("delivery: dropping outcome for %s:%s ref %s (too many unmatched outcomes)", r.k.provider, r.k.nativeID, r.k.ref)
			return
		}
	}
	s.early[r.k] = append(s.early[r.k], earlyOutcome{status: r.status, reason: r.reason, turn: r.turn, at: r.at})
}

// allowed says whether an observed outcome may move an operation from one
// status to another: queued moves anywhere; delivery_unknown only to an
// observed result (evidence, never a resend); completed and rejected are
// final.
func allowed(from operation.Status, to providers.ReceiptStatus) bool {
	switch from {
	case operation.StatusQueued:
		return to != providers.StatusQueued
	case operation.StatusDeliveryUnknown:
		return to == providers.StatusCompleted || to == providers.StatusRejected
	}
	return false
}

// apply records an observed outcome on the operations carrying k.ref,
// reports whether any operation carries it and returns the operations it
// changed. Caller holds s.mu and notifies the listeners after releasing it.
func (s *Service) apply(ctx context.Context, k refKey, status providers.ReceiptStatus, reason string, turn *providers.TurnResult, at time.Time) (bool, []Operation) {
	var matched bool
	var changed []Operation
	err := s.st.Tx(ctx, func(tx *ent.Tx) error {
		changed = changed[:0] // a team store may run the transaction again
		ops, err := tx.Operation.Query().
			Where(operation.Provider(string(k.provider)), operation.NativeID(k.nativeID), operation.Ref(k.ref)).
			All(ctx)
		if err != nil {
			return err
		}
		matched = len(ops) > 0
		changed = changed[:0]
		for _, o := range ops {
			if !allowed(o.Status, status) {
				continue
			}
			d := decodeDetail(o.Detail)
			d.Outcome = &outcomeDetail{Status: status, Reason: reason, At: at}
			state := stateObserved
			d.Reason = reason // the latest observation is the reason
			switch status {
			case providers.StatusDeliveryUnknown:
				state = stateLost
				d.Classification = "delivery_unknown"
			case providers.StatusRejected:
				d.Classification = "rejected"
			default:
				d.Classification = ""
			}
			upd := tx.Operation.UpdateOneID(o.ID).Where(operation.StatusEQ(o.Status)).
				SetStatus(operation.Status(status)).SetProviderState(state).SetDetail(d.raw()).
				SetUpdatedAt(s.opts.Clock.Now().UTC())
			setTurn(upd, o.Operation, turn)
			u, err := upd.Save(ctx)
			if ent.IsNotFound(err) {
				continue // changed concurrently by another process
			}
			if err != nil {
				return err
			}
			changed = append(changed, fromEnt(u))
		}
		return nil
	})
	if err != nil {
		s.opts.Logf("delivery: record outcome %s for %s:%s ref %s: %v", status, k.provider, k.nativeID, k.ref, err)
		return true, nil // do not keep retrying it as an early outcome
	}
	return matched, changed
}

// setTurn records what the adapter observed of the turn a send started:
// its verdict (with a failed turn's error), usage and changed files. Only
// a send starts a turn; a field the adapter did not observe stays NULL.
func setTurn(upd *ent.OperationUpdateOne, op string, turn *providers.TurnResult) {
	if turn == nil || op != OpSend {
		return
	}
	if turn.Verdict != "" {
		upd.SetVerdict(string(turn.Verdict))
	}
	if turn.Error != "" {
		upd.SetTurnError(turn.Error)
	}
	if turn.Usage.Known() {
		if raw, err := json.Marshal(turn.Usage); err == nil {
			upd.SetUsage(raw)
		}
	}
	if len(turn.ChangedFiles) > 0 {
		upd.SetChangedFiles(turn.ChangedFiles)
	}
}
