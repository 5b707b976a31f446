package workcli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/workflow"
)

// TestShowPrintsUsageAndVerdicts: `work show` prints what the work's turns
// cost and how they ended, as a line and in --json; "unknown" when no turn
// reported usage, never 0.
func TestShowPrintsUsageAndVerdicts(t *testing.T) {
	ctx := context.Background()
	svc := workflow.New(teststore.Open(t), workflow.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	w, err := svc.CreateWork(ctx, workflow.CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"c"}})
	if err != nil {
		t.Fatal(err)
	}
	cost := 0.25
	for _, tc := range []struct {
		name   string
		totals delivery.Totals
		args   []string
		want   string
	}{
		{"none reported", delivery.Totals{Turns: 1, Verdicts: map[providers.Verdict]int{providers.VerdictEmpty: 1}},
			nil, "unknown over 1 turns (0 reported usage; 1 empty)"},
		{"reported", delivery.Totals{Turns: 3, Reported: 2, Usage: &providers.Usage{InputTokens: providers.Tokens(120), OutputTokens: providers.Tokens(30), CostUSD: &cost},
			Verdicts: map[providers.Verdict]int{providers.VerdictAnswered: 2, providers.VerdictFailed: 1}},
			nil, "in 120 · out 30 · $0.2500 over 3 turns (2 reported usage; 2 answered, 1 failed)"},
		{"json", delivery.Totals{Turns: 2, Reported: 1, Usage: &providers.Usage{InputTokens: providers.Tokens(7)},
			Verdicts: map[providers.Verdict]int{providers.VerdictTruncated: 2}},
			[]string{"--json"}, `"usage":{"turns":2,"reported":1,"usage":{"input":7},"verdicts":{"truncated":2}}`},
		{"json unknown", delivery.Totals{Turns: 1}, []string{"--json"}, `"usage":{"turns":1,"reported":0}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked string
			totals := func(_ context.Context, id string) (delivery.Totals, error) { asked = id; return tc.totals, nil }
			var out, errb bytes.Buffer
			if code := Run(ctx, svc, append([]string{"show", w.ID}, tc.args...), &out, &errb, WithTotals(totals)); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if asked != w.ID || !strings.Contains(out.String(), tc.want) {
				t.Errorf("totals of %q; output lacks %q:\n%s", asked, tc.want, out.String())
			}
		})
	}
	var out bytes.Buffer
	if Run(ctx, svc, []string{"show", w.ID}, &out, &out); strings.Contains(out.String(), "Usage") {
		t.Errorf("without totals, show printed a usage line:\n%s", out.String())
	}
}
