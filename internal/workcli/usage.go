package workcli

import (
	"context"
	"fmt"

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

// usageLine renders a total: the reported figures or "unknown" (never 0),
// the turns counted and their verdicts.
func usageLine(t delivery.Totals) string {
	figures := "unknown"
	if u := t.Usage; u != nil {
		figures = ""
		add := func(name string, v *int64) {
			if v != nil {
				figures += fmt.Sprintf("%s %d, ", name, *v)
			}
		}
		add("input", u.InputTokens)
		add("output", u.OutputTokens)
		add("cached", u.CachedTokens)
		add("reasoning", u.ReasoningTokens)
		if u.CostUSD != nil {
			figures += fmt.Sprintf("$%.4f, ", *u.CostUSD)
		}
		figures = figures[:len(figures)-2]
	}
	s := fmt.Sprintf("%s over %d turns (%d reported usage", figures, t.Turns, t.Reported)
	if v := t.VerdictText(); v != "" {
		s += "; " + v
	}
	s += ")"
	if t.Partial {
		s += ", newest turns only"
	}
	return s
}
