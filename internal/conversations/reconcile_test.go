package conversations_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
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
		mid := e.interrupted(t, id, "k2", false)
		testclock.Pass(ctx, e.clock, 2*time.Minute)
		got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{})
		if want := []outcome{{mid, "delivery_unknown", false, "queued"}}; err != nil || !sameOutcomes(outcomes(got), want) {
			t.Fatalf("first pass = %+v, %v", outcomes(got), err)
		}
		m := e.message(t, mid)
		if m.DeliveryUnknownAt == nil || !m.DeliveryUnknownAt.Equal(t0.Add(2*time.Minute)) || m.Receipt == nil ||
			!strings.Contains(m.Receipt.Detail.(map[string]any)["reason"].(string), "no runtime process owns it") {
			t.Fatalf("message after first pass = %+v", m)
		}
		got, err = e.svc.Reconcile(ctx, conversations.ReconcileInput{ObservedReceipts: []conversations.ObservedReceipt{observed("k2", true, "queued")}})
		if want := []outcome{{mid, "queued", true, "delivery_unknown"}}; err != nil || !sameOutcomes(outcomes(got), want) {
			t.Fatalf("second pass = %+v, %v", outcomes(got), err)
		}
		// Provider-confirmed queued is never reclassified (this process
		// now follows it).
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
		e.interrupted(t, id, "k5", false)
		first, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{})
		if err != nil || len(first) != 2 {
			t.Fatalf("first = %+v, %v", outcomes(first), err)
		}
		snap := e.snapshot(t)
		testclock.Pass(ctx, e.clock, time.Hour)
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
	t.Run("live owner skipped", func(t *testing.T) {
		e := newEnv(t)
		id := e.conv(t)
		e.interrupted(t, id, "k6", true)
		before := e.snapshot(t)
		testclock.Pass(ctx, e.clock, delivery.DefaultOwnerTimeout-time.Second)
		got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{ObservedReceipts: []conversations.ObservedReceipt{observed("k6", true, "completed")}})
		if err != nil || len(got) != 0 || e.snapshot(t) != before {
			t.Fatalf("reconcile under a live owner = %+v, %v", outcomes(got), err)
		}
		testclock.Pass(ctx, e.clock, 2*time.Second) // its heartbeat is now too old
		if got, _ := e.svc.Reconcile(ctx, conversations.ReconcileInput{}); len(got) != 1 || got[0].Message.Delivery != "delivery_unknown" {
			t.Fatalf("reconcile after the owner's heartbeat stopped = %+v", outcomes(got))
		}
	})
	t.Run("conversation filter", func(t *testing.T) {
		e := newEnv(t)
		a, b := e.conv(t), e.conv(t)
		ma := e.interrupted(t, a, "ka", false)
		e.interrupted(t, b, "kb", false)
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

// TestInFlightNotReclassified: a send another live process is
// dispatching is left alone; once that process is gone the send is settled
// from the provider's history, and the dead dispatch's late receipt does
// not undo the settlement.
func TestInFlightNotReclassified(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	gate := make(chan struct{})
	started := make(chan struct{})
	sender := e.process(t, script(step{gate: gate, started: started, receipt: providers.Receipt{Accepted: true}}))
	id := e.conv(t)
	done := make(chan error, 1)
	go func() {
		_, err := sender.svc.Send(ctx, conversations.SendInput{ConversationID: id, Sender: "codex:a", Recipient: "claude-code:b", Text: "slow", IdempotencyKey: "slow"})
		done <- err
	}()
	<-started

	if got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{}); err != nil || len(got) != 0 {
		t.Fatalf("another process reclassified a live send: %+v, %v", outcomes(got), err)
	}
	if got, err := sender.svc.Reconcile(ctx, conversations.ReconcileInput{}); err != nil || len(got) != 0 {
		t.Fatalf("the same process reclassified its own in-flight send: %+v, %v", outcomes(got), err)
	}
	sender.kill()
	e.p.fakes[providers.ClaudeCode].LookupFunc = func(_ context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
		return providers.TurnRecord{Source: "fake history"}, nil
	}
	got, err := e.svc.Reconcile(ctx, conversations.ReconcileInput{})
	if err != nil || len(got) != 1 || got[0].Message.Delivery != "delivery_unknown" || got[0].Resolved {
		t.Fatalf("gone owner in another process = %+v, %v", outcomes(got), err)
	}
	close(gate)
	if err := <-done; err != nil && !strings.Contains(err.Error(), "delivery_unknown") {
		t.Fatal(err)
	}
	if m := e.message(t, got[0].Message.ID); m.Delivery != "delivery_unknown" {
		t.Fatalf("late receipt undid the settlement: %+v", m)
	}
	if n := len(e.disp.Calls()); n != 0 {
		t.Fatalf("the settling process sent %d prompts", n)
	}
}

// TestStartupSettlesWhatGoneProcessesLeft simulates a restart after a
// crash: the new process settles the sends a gone process left open (from
// the provider's history) and leaves a send owned by a live process alone.
func TestStartupSettlesWhatGoneProcessesLeft(t *testing.T) {
	pgtest.EachDialect(t, testStartupSettlesWhatGoneProcessesLeft)
}

func testStartupSettlesWhatGoneProcessesLeft(t *testing.T, location string) {
	ctx := context.Background()
	e := newEnvAt(t, location)
	id := e.conv(t)
	dead := e.interrupted(t, id, "dead", false)
	live := e.interrupted(t, id, "live", true)
	restarted := e.process(t, script())
	restarted.fakes[providers.ClaudeCode].LookupFunc = func(_ context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
		if q.CorrelationID != e.op(t, dead).ID {
			t.Errorf("looked up %+v", q)
		}
		return providers.TurnRecord{Found: true, Status: providers.StatusCompleted, NativeTurnID: "p1-turn-3", Source: "fake history"}, nil
	}
	got, err := restarted.del.Settle(ctx)
	if err != nil || len(got) != 1 || got[0].Status != providers.StatusCompleted {
		t.Fatalf("startup settlement = %+v, %v", got, err)
	}
	if m := e.message(t, dead); m.Delivery != "completed" || m.TurnID != "p1-turn-3" {
		t.Fatalf("settled message = %+v", m)
	}
	if e.message(t, live).Delivery != "queued" {
		t.Fatal("startup settlement touched a live owner's send")
	}
}
