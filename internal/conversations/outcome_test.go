package conversations_test

import (
	"context"
	"testing"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
)

func TestRecordOutcomeMovesOnlyOpenDeliveries(t *testing.T) {
	tests := []struct {
		name    string
		step    step
		outcome providers.ReceiptStatus
		want    conversations.Delivery
		changed bool
	}{
		{"queued then completed", acceptQueued(), providers.StatusCompleted, conversations.DeliveryCompleted, true},
		{"queued then rejected (401 after acceptance)", acceptQueued(), providers.StatusRejected, conversations.DeliveryRejected, true},
		{"unknown then completed", uncertain(), providers.StatusCompleted, conversations.DeliveryCompleted, true},
		{"completed stays", acceptCompleted(), providers.StatusRejected, conversations.DeliveryCompleted, false},
		{"rejected stays", refuse(), providers.StatusCompleted, conversations.DeliveryRejected, false},
		{"queued ignores a non-final status", acceptQueued(), providers.StatusQueued, conversations.DeliveryQueued, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.step)
			conv := e.conv(t)
			_, _ = e.send(t, conv, "hello", "k1")
			changed, err := e.svc.RecordOutcome(context.Background(), "k1", tc.outcome, "Incorrect API key provided")
			if err != nil || changed != tc.changed {
				t.Fatalf("RecordOutcome = %v, %v; want changed %v", changed, err, tc.changed)
			}
			page, err := e.svc.Read(context.Background(), conversations.ReadInput{ConversationID: conv})
			if err != nil || len(page.Messages) != 1 {
				t.Fatalf("read: %v %+v", err, page)
			}
			if got := page.Messages[0].Delivery; got != tc.want {
				t.Errorf("delivery %s, want %s", got, tc.want)
			}
			if got := len(e.disp.Calls()); got != 1 {
				t.Errorf("dispatched %d times, want exactly once", got)
			}
		})
	}
}
