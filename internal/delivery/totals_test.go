package delivery_test

import (
	"testing"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
)

// TestTotalsText checks the one rendering of a usage total the desk and
// `work show` print: unknown (never 0) when no turn reported usage, only the
// reported figures, the verdicts in the spec's order, a partial total said.
func TestTotalsText(t *testing.T) {
	cost := 0.25
	for _, tc := range []struct {
		name string
		t    delivery.Totals
		want string
	}{
		{"nothing", delivery.Totals{}, "unknown over 0 turns (0 reported usage)"},
		{"none reported", delivery.Totals{Turns: 1, Verdicts: map[providers.Verdict]int{providers.VerdictEmpty: 1}},
			"unknown over 1 turns (0 reported usage; 1 empty)"},
		{"usage with no figure", delivery.Totals{Turns: 1, Usage: &providers.Usage{}}, "unknown over 1 turns (0 reported usage)"},
		{"reported", delivery.Totals{Turns: 3, Reported: 2,
			Usage:    &providers.Usage{InputTokens: providers.Tokens(120), OutputTokens: providers.Tokens(30), ReasoningTokens: providers.Tokens(0), CostUSD: &cost},
			Verdicts: map[providers.Verdict]int{providers.VerdictFailed: 1, providers.VerdictAnswered: 2}},
			"in 120 · out 30 · reasoning 0 · $0.2500 over 3 turns (2 reported usage; 2 answered, 1 failed)"},
		{"partial", delivery.Totals{Turns: 2, Reported: 1, Usage: &providers.Usage{CachedTokens: providers.Tokens(5)}, Partial: true},
			"cached 5 over 2 turns (1 reported usage), the newest only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.t.Text(); got != tc.want {
				t.Errorf("Text() = %q, want %q", got, tc.want)
			}
		})
	}
}
