package conversations_test

import (
	"context"
	"testing"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
)

// TestMessageShowsItsOperation: a message has no delivery record of its
// own; outcomes the provider reports on the operation (one ledger) are what
// the message shows, so the two never disagree.
func TestMessageShowsItsOperation(t *testing.T) {
	type report struct {
		status providers.ReceiptStatus
		reason string
	}
	tests := []struct {
		name    string
		step    step
		reports []report
		want    conversations.Delivery
	}{
		{"queued then completed", acceptQueued(), []report{{providers.StatusCompleted, "stopReason: end_turn"}}, conversations.DeliveryCompleted},
		{"queued then rejected (401 after acceptance)", acceptQueued(), []report{{providers.StatusRejected, "Incorrect API key provided"}}, conversations.DeliveryRejected},
		{"provider lost", acceptQueued(), []report{{providers.StatusDeliveryUnknown, "agent connection closed"}}, conversations.DeliveryUnknown},
		{"lost, then evidence of completion", acceptQueued(), []report{
			{providers.StatusDeliveryUnknown, "agent connection closed"}, {providers.StatusCompleted, "observed"}}, conversations.DeliveryCompleted},
		{"completed stays", acceptCompleted(), []report{{providers.StatusRejected, "late"}}, conversations.DeliveryCompleted},
		{"rejected stays", refuse(), []report{{providers.StatusCompleted, "late"}}, conversations.DeliveryRejected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, tc.step)
			conv := e.conv(t)
			res, _ := e.send(t, conv, "hello", "k1")
			for _, r := range tc.reports {
				e.p.del.ReportOutcome(providers.ClaudeCode, "b", tc.step.receipt.Ref, providers.Outcome{Status: r.status, Reason: r.reason})
			}
			if err := e.p.del.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			page, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: conv})
			if err != nil || len(page.Messages) != 1 {
				t.Fatalf("read: %v %+v", err, page)
			}
			m := page.Messages[0]
			op, err := e.p.del.Get(ctx, m.OperationID)
			if err != nil || m.OperationID != res.Message.OperationID {
				t.Fatalf("operation %s: %v", m.OperationID, err)
			}
			if m.Delivery != tc.want || conversations.Delivery(op.Status) != m.Delivery || m.Receipt == nil || m.Receipt.Status != op.Status {
				t.Errorf("message %s (receipt %+v), operation %s; want %s", m.Delivery, m.Receipt, op.Status, tc.want)
			}
			if got := len(e.disp.Calls()); got != 1 {
				t.Errorf("dispatched %d times, want exactly once", got)
			}
		})
	}
}
