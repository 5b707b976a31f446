package delivery

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
)

// TestTurnFactsAreStoredWithTheSend: the verdict, error, usage and changed
// files an adapter reports with a send's outcome are stored with the
// operation, read back on its receipt, and carried by its interop.operation
// event (what ends a read_session_events wait); unreported usage stays
// unknown (absent), never 0. An outcome before the receipt keeps its turn.
func TestTurnFactsAreStoredWithTheSend(t *testing.T) {
	relay := registry.NewHost()
	rec := &eventRecorder{}
	e := newEnv(t, "", func(o *Options) { o.Reports, o.Events = relay, rec })
	ctx := context.Background()
	answered := &providers.TurnResult{Verdict: providers.VerdictAnswered, ChangedFiles: []string{"/w/a.go"},
		Usage: &providers.Usage{InputTokens: providers.Tokens(120), OutputTokens: providers.Tokens(30), CachedTokens: providers.Tokens(20)}}
	failed := &providers.TurnResult{Verdict: providers.VerdictFailed, Error: "400 bad request"}
	ref := "turn-a"
	e.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		if ref == "turn-b" { // the outcome arrives before Send returns
			relay.ReportOutcome(providers.Codex, "t1", "turn-b", providers.Outcome{Status: providers.StatusRejected, Reason: "400 bad request", Turn: failed})
			e.svc.Sync(context.Background())
		}
		return queued(ref)
	}
	a, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Operation.Turn != nil {
		t.Fatalf("a queued send has turn facts: %+v", a.Operation.Turn)
	}
	relay.ReportOutcome(providers.Codex, "t1", "turn-a", providers.Outcome{Status: providers.StatusCompleted, Reason: "turn completed", Turn: answered})
	e.svc.Sync(ctx)
	got, err := e.svc.Get(ctx, a.Operation.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Turn, answered) || !reflect.DeepEqual(got.Receipt().Turn, answered) {
		t.Fatalf("stored turn = %+v, receipt %+v", got.Turn, got.Receipt().Turn)
	}
	if got.Turn.Usage.ReasoningTokens != nil || got.Turn.Usage.CostUSD != nil {
		t.Fatalf("unreported figures became known: %+v", got.Turn.Usage)
	}
	rec.mu.Lock()
	var data operationEvent
	if len(rec.evs) != 1 || json.Unmarshal(rec.evs[0].Data, &data) != nil || !reflect.DeepEqual(data.Turn, answered) {
		t.Fatalf("events = %+v", rec.evs)
	}
	rec.mu.Unlock()

	ref = "turn-b"
	b, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Operation.Status != providers.StatusRejected || !reflect.DeepEqual(b.Operation.Turn, failed) {
		t.Fatalf("early outcome: %+v turn %+v", b.Operation, b.Operation.Turn)
	}
}

// TestSessionTotalsSumReportedUsage: a session's total sums the usage its
// turns reported; a turn without usage counts as a turn, not as zero
// tokens, and a session whose turns reported nothing has unknown usage.
func TestSessionTotalsSumReportedUsage(t *testing.T) {
	relay := registry.NewHost()
	e := newEnv(t, "", func(o *Options) { o.Reports = relay })
	ctx := context.Background()
	n := 0
	e.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		n++
		return queued("turn-" + string(rune('a'+n)))
	}
	u := func(in, out int64) *providers.Usage {
		return &providers.Usage{InputTokens: providers.Tokens(in), OutputTokens: providers.Tokens(out)}
	}
	for i, tr := range []*providers.TurnResult{
		{Verdict: providers.VerdictAnswered, Usage: u(100, 30)},
		{Verdict: providers.VerdictEmpty, Usage: u(20, 0)},
		{Verdict: providers.VerdictFailed, Error: "boom"},
	} {
		if _, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "x"}); err != nil {
			t.Fatal(err)
		}
		relay.ReportOutcome(providers.Codex, "t1", "turn-"+string(rune('a'+i+1)), providers.Outcome{Status: providers.StatusCompleted, Turn: tr})
	}
	if _, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t2", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	relay.ReportOutcome(providers.Codex, "t2", "turn-e", providers.Outcome{Status: providers.StatusCompleted, Turn: &providers.TurnResult{Verdict: providers.VerdictAnswered}})
	e.svc.Sync(ctx)
	got, err := e.svc.SessionTotals(ctx, "codex:t1", "codex:t1", "bad")
	if err != nil {
		t.Fatal(err)
	}
	if got.Turns != 3 || got.Reported != 2 || !reflect.DeepEqual(got.Usage, u(120, 30)) || got.Partial {
		t.Fatalf("t1 totals = %+v usage %+v", got, got.Usage)
	}
	got, err = e.svc.SessionTotals(ctx, "codex:t2")
	if err != nil || got.Turns != 1 || got.Reported != 0 || got.Usage != nil {
		t.Fatalf("t2 totals = %+v, %v", got, err)
	}
	if _, err := e.svc.WorkTotals(ctx, "work-missing"); err == nil {
		t.Fatal("totals of a missing work item")
	}
}
