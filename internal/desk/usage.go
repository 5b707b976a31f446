package desk

import (
	"context"
	"encoding/json"
	"fmt"

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
	return totalsText(t), nil
}

// totalsText renders a usage total.
func totalsText(t delivery.Totals) string {
	figures := "unknown"
	if t.Usage != nil {
		raw, err := json.Marshal(t.Usage)
		if err == nil {
			figures = usageText(raw)
		}
	}
	s := fmt.Sprintf("%s over %d turns (%d reported usage", figures, t.Turns, t.Reported)
	if v := t.VerdictText(); v != "" {
		s += "; " + v
	}
	s += ")"
	if t.Partial {
		s += ", the newest only"
	}
	return s
}
