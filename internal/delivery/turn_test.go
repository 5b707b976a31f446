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
