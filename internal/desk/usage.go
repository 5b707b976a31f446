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
