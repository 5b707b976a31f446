package conversations_test

import (
	"context"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

func observed(key string, accepted bool, status providers.ReceiptStatus) conversations.ObservedReceipt {
	return conversations.ObservedReceipt{IdempotencyKey: key, Receipt: providers.Receipt{
		Provider: "claude-code", NativeID: "b", Operation: "send", Accepted: accepted, Status: status}}
}

type outcome struct {
	id       string
	delivery conversations.Delivery
	resolved bool
	previous conversations.Delivery
}

func outcomes(rs []conversations.ReconcileResult) []outcome {
	var out []outcome
	for _, r := range rs {
		out = append(out, outcome{r.Message.ID, r.Message.Delivery, r.Resolved, r.PreviousDelivery})
	}
	return out
}

func sameOutcomes(a, b []outcome) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReconcileSemantics replays the 0.3.x reconcile cases.
func TestReconcileSemantics(t *testing.T) {
	ctx := context.Background()
	t.Run("unknown to completed", func(t *testing.T) {
		e := newEnv(t, uncertain())
		id := e.conv(t)
		_, _ = e.send(t, id, "hi", "k1")
		m := e.c.Message.Query().OnlyX(ctx)
		got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{ObservedReceipts: []conversations.ObservedReceipt{observed("k1", true, "completed")}})
		want := []outcome{{m.ID, "completed", true, "delivery_unknown"}}
		if err != nil || !sameOutcomes(outcomes(got), want) {
			t.Fatalf("reconcile = %+v, %v; want %+v", outcomes(got), err, want)
		}
		if got[0].Message.Receipt == nil || got[0].Message.Receipt.Status != "completed" {
			t.Fatalf("receipt not stored: %+v", got[0].Message)
		}
	})
	t.Run("queued to unknown to queued", func(t *testing.T) {
		e := newEnv(t)
		id := e.conv(t)
		mid := e.interrupted(t, id, "k2", t0.Add(time.Minute))
		e.clock.Advance(2 * time.Minute)
		got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{})
		if want := []outcome{{mid, "delivery_unknown", false, "queued"}}; err != nil || !sameOutcomes(outcomes(got), want) {
			t.Fatalf("first pass = %+v, %v", outcomes(got), err)
		}
		row := e.message(t, mid)
		if row.DeliveryUnknownAt == nil || !row.DeliveryUnknownAt.Equal(t0.Add(2*time.Minute)) || row.DispatchLeaseID != nil {
			t.Fatalf("row after first pass = %+v", row)
		}
		got, err = e.svc.Reconcile(ctx, conversations.ReconcileInput{ObservedReceipts: []conversations.ObservedReceipt{observed("k2", true, "queued")}})
		if want := []outcome{{mid, "queued", true, "delivery_unknown"}}; err != nil || !sameOutcomes(outcomes(got), want) {
			t.Fatalf("second pass = %+v, %v", outcomes(got), err)
		}
		// Provider-confirmed queued is never reclassified.
		got, err = e.svc.Reconcile(ctx, conversations.ReconcileInput{})
		if err != nil || len(got) != 0 || e.message(t, mid).Delivery != "queued" {
			t.Fatalf("third pass = %+v, %v", outcomes(got), err)
		}
	})
	t.Run("unknown to rejected", func(t *testing.T) {
		e := newEnv(t, uncertain())
		id := e.conv(t)
		_, _ = e.send(t, id, "hi", "k3")
		m := e.c.Message.Query().OnlyX(ctx)
		got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{ConversationID: id,
			ObservedReceipts: []conversations.ObservedReceipt{observed("k3", false, "rejected")}})
		if want := []outcome{{m.ID, "rejected", true, "delivery_unknown"}}; err != nil || !sameOutcomes(outcomes(got), want) {
			t.Fatalf("reconcile = %+v, %v", outcomes(got), err)
		}
	})
	t.Run("terminal untouched", func(t *testing.T) {
		e := newEnv(t, acceptCompleted(), refuse(), acceptQueued())
		id := e.conv(t)
		for _, k := range []string{"done", "refused", "accepted"} {
			if _, err := e.send(t, id, "hi", k); err != nil {
				t.Fatal(err)
			}
		}
		before := e.snapshot(t)
		got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{ObservedReceipts: []conversations.ObservedReceipt{
			observed("done", false, "rejected"), observed("refused", true, "completed"), observed("accepted", true, "completed")}})
		if err != nil || len(got) != 0 || e.snapshot(t) != before {
			t.Fatalf("reconcile touched terminal or receipted records: %+v, %v", outcomes(got), err)
		}
	})
	t.Run("idempotent", func(t *testing.T) {
		e := newEnv(t, uncertain())
		id := e.conv(t)
		_, _ = e.send(t, id, "hi", "k4")
		e.interrupted(t, id, "k5", t0)
		first, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{})
		if err != nil || len(first) != 2 {
			t.Fatalf("first = %+v, %v", outcomes(first), err)
		}
		snap := e.snapshot(t)
		e.clock.Advance(time.Hour)
		second, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{})
		if err != nil || e.snapshot(t) != snap {
			t.Fatalf("second pass changed the store: %v", err)
		}
		for i, o := range outcomes(second) {
			if o.delivery != "delivery_unknown" || o.resolved || o.previous != "delivery_unknown" || o.id != first[i].Message.ID {
				t.Fatalf("second pass = %+v", outcomes(second))
			}
		}
	})
	t.Run("unexpired lease skipped", func(t *testing.T) {
		e := newEnv(t)
		id := e.conv(t)
		e.interrupted(t, id, "k6", t0.Add(conversations.LeaseTTL))
		before := e.snapshot(t)
		e.clock.Advance(conversations.LeaseTTL - time.Millisecond)
		got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{ObservedReceipts: []conversations.ObservedReceipt{observed("k6", true, "completed")}})
		if err != nil || len(got) != 0 || e.snapshot(t) != before {
			t.Fatalf("reconcile under an unexpired lease = %+v, %v", outcomes(got), err)
		}
		e.clock.Advance(time.Millisecond)
		if got, _ := e.svc.Reconcile(ctx, conversations.ReconcileInput{}); len(got) != 1 || got[0].Message.Delivery != "delivery_unknown" {
			t.Fatalf("reconcile at lease expiry = %+v", outcomes(got))
		}
	})
	t.Run("conversation filter", func(t *testing.T) {
		e := newEnv(t)
		a, b := e.conv(t), e.conv(t)
		ma := e.interrupted(t, a, "ka", t0)
		e.interrupted(t, b, "kb", t0)
		got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{ConversationID: a})
		if want := []outcome{{ma, "delivery_unknown", false, "queued"}}; err != nil || !sameOutcomes(outcomes(got), want) {
			t.Fatalf("filtered = %+v, %v", outcomes(got), err)
		}
		if _, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{ConversationID: "conversation_x"}); err == nil || err.Error() != "Unknown conversation conversation_x" {
			t.Fatalf("unknown conversation: %v", err)
		}
		if _, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{ObservedReceipts: []conversations.ObservedReceipt{{IdempotencyKey: " "}}}); err == nil ||
			err.Error() != "observedReceipts: idempotencyKey must not be blank" {
			t.Fatalf("blank key: %v", err)
		}
	})
}

// TestInFlightNotReclassified checks both guards of an in-flight send: the
// in-process marker (same service, lease already expired) and the durable
// lease (another service, as another process would be).
func TestInFlightNotReclassified(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	gate := make(chan struct{})
	started := make(chan struct{})
	sender := e.service(script(step{gate: gate, started: started, receipt: providers.Receipt{Accepted: true}}),
		conversations.WithLease(conversations.LeaseTTL, time.Hour))
	id := e.conv(t)
	done := make(chan error, 1)
	go func() {
		_, err := sender.Send(ctx, conversations.SendInput{ConversationID: id, Sender: "codex:a", Recipient: "claude-code:b", Text: "slow", IdempotencyKey: "slow"})
		done <- err
	}()
	<-started

	if got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{}); err != nil || len(got) != 0 {
		t.Fatalf("other process reclassified a leased send: %+v, %v", outcomes(got), err)
	}
	e.clock.Advance(conversations.LeaseTTL + time.Second) // no renewal: the lease has expired
	if got, err := sender.Reconcile(ctx, conversations.ReconcileInput{}); err != nil || len(got) != 0 {
		t.Fatalf("same process reclassified its own in-flight send: %+v, %v", outcomes(got), err)
	}
	got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{})
	if err != nil || len(got) != 1 || got[0].Message.Delivery != "delivery_unknown" {
		t.Fatalf("expired lease in another process = %+v, %v", outcomes(got), err)
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The late receipt is the truth: the record moves back to queued.
	row := e.c.Message.Query().OnlyX(ctx)
	if row.Delivery != "queued" || row.Receipt == nil || !row.Receipt.Accepted {
		t.Fatalf("late outcome = %+v", row)
	}
}

// TestReconcileExpiredAtStartup simulates a restart after a crash: the
// new service marks expired in-flight sends delivery_unknown and leaves a
// send still leased by a live process alone.
func TestReconcileExpiredAtStartup(t *testing.T) {
	pgtest.EachDialect(t, testReconcileExpiredAtStartup)
}

func testReconcileExpiredAtStartup(t *testing.T, location string) {
	ctx := context.Background()
	e := newEnvAt(t, location)
	id := e.conv(t)
	dead := e.interrupted(t, id, "dead", t0.Add(-time.Second))
	live := e.interrupted(t, id, "live", t0.Add(time.Minute))
	restarted := e.service(script())
	got, err := restarted.ReconcileExpiredAtStartup(ctx)
	if want := []outcome{{dead, "delivery_unknown", false, "queued"}}; err != nil || !sameOutcomes(outcomes(got), want) {
		t.Fatalf("startup reconcile = %+v, %v", outcomes(got), err)
	}
	if e.message(t, live).Delivery != "queued" {
		t.Fatal("startup reconcile touched a live lease")
	}
}
