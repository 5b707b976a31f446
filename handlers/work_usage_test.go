package handlers

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/answercheck"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/workflow"
)

// TestGetWorkItemTotalsItsSessionsAndHandoffs: get_work_item totals the
// turns of the work's source session and of its handoffs' source and
// destination sessions (each session once), with their verdicts; another
// session's turns are not counted, and nothing reported is unknown.
func TestGetWorkItemTotalsItsSessionsAndHandoffs(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	f := &registrytest.Adapter{Provider: providers.Codex}
	var sessions []providers.Session
	for _, id := range []string{"src", "hsrc", "hdst", "other"} {
		sessions = append(sessions, f.Session(id, ""))
	}
	f.SetSessions(sessions, nil)
	f.SendFunc = func(_ context.Context, native, _ string, _ providers.SendOptions) (providers.Receipt, error) {
		return providers.Receipt{Accepted: true, Status: providers.StatusQueued, Ref: native, NativeTurnID: native}, nil
	}
	reg, err := registry.New(st, []providers.Adapter{f}, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	relay := registry.NewHost()
	del := delivery.New(st, reg, delivery.Options{Reports: relay})
	t.Cleanup(func() { del.Close() })
	sess := SessionTools{Registry: reg, Delivery: del}
	tools := WorkflowTools{Svc: workflow.New(st, workflow.Options{LookupEnv: func(string) (string, bool) { return "", false }}), Usage: del}
	w, err := tools.CreateWorkItem(ctx, &catalogs.CreateWorkItemInput{Objective: "o", AcceptanceCriteria: []string{"c"}, SourceSession: opt("codex:src")})
	if err != nil {
		t.Fatal(err)
	}
	entry, err := answercheck.Entry("full", "get_work_item")
	if err != nil {
		t.Fatal(err)
	}
	usage := func() string {
		t.Helper()
		out, err := tools.GetWorkItem(ctx, &catalogs.GetWorkItemInput{WorkID: w.ID, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if err := answercheck.New().CheckJSON(entry, out); err != nil {
			t.Fatalf("answer breaks its schema: %v\n%s", err, mustJSON(t, out))
		}
		return mustJSON(t, out.Usage)
	}
	turn := func(native string, tr *providers.TurnResult) {
		t.Helper()
		in, err := catalogs.DecodeSendSessionMessage(json.RawMessage(`{"provider":"codex","nativeId":"` + native + `","text":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sess.SendSessionMessage(ctx, in); err != nil {
			t.Fatal(err)
		}
		relay.ReportOutcome(providers.Codex, native, native, providers.Outcome{Status: providers.StatusCompleted, Turn: tr})
		if err := del.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	turn("src", &providers.TurnResult{Verdict: providers.VerdictEmpty})
	if got, want := usage(), `{"turns":1,"reported":0,"verdicts":"1 empty"}`; got != want {
		t.Fatalf("nothing reported: usage %s, want %s (unknown, never 0)", got, want)
	}
	if _, err := tools.Svc.CreateHandoff(ctx, workflow.CreateHandoffInput{WorkID: w.ID, SourceSession: "codex:hsrc", DestinationSession: opt("codex:hdst"),
		Objective: "finish", AcceptanceCriteria: []string{"green"}, AuthorityBoundaries: []string{"none"}}); err != nil {
		t.Fatal(err)
	}
	// A second handoff from the work's own source session counts it once.
	if _, err := tools.Svc.CreateHandoff(ctx, workflow.CreateHandoffInput{WorkID: w.ID, SourceSession: "codex:src",
		Objective: "again", AcceptanceCriteria: []string{"green"}, AuthorityBoundaries: []string{"none"}}); err != nil {
		t.Fatal(err)
	}
	turn("hsrc", &providers.TurnResult{Verdict: providers.VerdictAnswered, Usage: &providers.Usage{InputTokens: providers.Tokens(100), OutputTokens: providers.Tokens(20)}})
	turn("hdst", &providers.TurnResult{Verdict: providers.VerdictTruncated, Usage: &providers.Usage{InputTokens: providers.Tokens(50), CostUSD: new(float64)}})
	turn("other", &providers.TurnResult{Verdict: providers.VerdictAnswered, Usage: &providers.Usage{InputTokens: providers.Tokens(9999)}})
	if got, want := usage(), `{"turns":3,"reported":2,"usage":{"input":150,"output":20,"costUsd":0},"verdicts":"1 answered, 1 empty, 1 truncated"}`; got != want {
		t.Errorf("usage %s, want %s", got, want)
	}
}
