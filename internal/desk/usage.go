package desk

import (
	"context"

	"github.com/agent-interop/runtime/internal/delivery"
)

// sessionUsage renders what a session's turns cost, as their providers
// reported it: the turns counted and the summed figures, or "unknown"
// when no turn reported usage (never a made-up 0).
func (r *reader) sessionUsage(ctx context.Context, provider, nativeID string) (string, error) {
	t, err := delivery.SessionTotalsIn(ctx, r.client, provider+":"+nativeID)
	if err != nil {
		return "", err
	}
	return t.Text(), nil
}

// workUsage renders what the turns of a work item's sessions and its
// handoffs' sessions cost (delivery.WorkTotalsIn), as sessionUsage.
func (r *reader) workUsage(ctx context.Context, workID string) (string, error) {
	t, err := delivery.WorkTotalsIn(ctx, r.client, workID)
	if err != nil {
		return "", err
	}
	return t.Text(), nil
}

// conversationUsage renders what the turns a conversation's messages
// started cost (delivery.ConversationTotalsIn), as sessionUsage.
func (r *reader) conversationUsage(ctx context.Context, conversationID string) (string, error) {
	t, err := delivery.ConversationTotalsIn(ctx, r.client, conversationID)
	if err != nil {
		return "", err
	}
	return t.Text(), nil
}
