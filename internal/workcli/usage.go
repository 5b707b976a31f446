package workcli

import (
	"context"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/workflow"
)

// Option configures Run.
type Option func(*options)

type options struct {
	totals func(ctx context.Context, workID string) (delivery.Totals, error)
}

// WithTotals makes `work show` print what the work's turns cost and how
// they ended (delivery.Service.WorkTotals: its sessions' and its handoffs'
// sessions' turns).
func WithTotals(f func(ctx context.Context, workID string) (delivery.Totals, error)) Option {
	return func(o *options) { o.totals = f }
}

// usageTotals is get_work_item's usage (spec/records.yaml usageTotals),
// plus the turns per verdict.
type usageTotals struct {
	Turns    int                       `json:"turns"`
	Reported int                       `json:"reported"`
	Usage    *providers.Usage          `json:"usage,omitempty"`
	Partial  bool                      `json:"partial,omitempty"`
	Verdicts map[providers.Verdict]int `json:"verdicts,omitempty"`
}

// workShown is `work show`'s answer: the work detail and, with totals,
// its usage.
type workShown struct {
	workflow.WorkDetail
	Usage *usageTotals `json:"usage,omitempty"`
}

func totalsAnswer(t delivery.Totals) *usageTotals {
	return &usageTotals{Turns: t.Turns, Reported: t.Reported, Usage: t.Usage, Partial: t.Partial, Verdicts: t.Verdicts}
}
