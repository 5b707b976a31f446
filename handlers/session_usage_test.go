package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/answercheck"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// TestReadSessionEventsTotalsTheSessionsUsage: read_session_events answers
// the session's usage totals over its turns: none reported is unknown (no
// usage, never 0), a turn without usage counts as a turn but adds nothing,
// another session's turns are not counted, and the answer keeps its schema.
func TestReadSessionEventsTotalsTheSessionsUsage(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	var n atomic.Int64
	f := &registrytest.Adapter{Provider: providers.Codex}
	f.SubscribeFunc = func(ctx context.Context, _ string) (<-chan providers.NativeEvent, error) {
		ch := make(chan providers.NativeEvent)
		go func() { <-ctx.Done(); close(ch) }()
		return ch, nil
	}
	f.SetSessions([]providers.Session{f.Session("t1", ""), f.Session("t2", "")}, nil)
	f.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		ref := fmt.Sprintf("turn_%d", n.Add(1))
		return providers.Receipt{Accepted: true, Status: providers.StatusQueued, Ref: ref, NativeTurnID: ref}, nil
	}
	reg, err := registry.New(st, []providers.Adapter{f}, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	relay := registry.NewHost()
	del := delivery.New(st, reg, delivery.Options{Reports: relay})
	t.Cleanup(func() { del.Close() })
	hub := events.NewHub(events.NewLog(st, events.LogOptions{}), events.HubOptions{Open: reg.Subscribe, Liveness: reg.Liveness})
	t.Cleanup(func() { hub.Close() })
	tools := SessionTools{Registry: reg, Delivery: del, Events: hub}
	entry, err := answercheck.Entry("full", "read_session_events")
	if err != nil {
		t.Fatal(err)
	}
	usage := func(native string) string {
		t.Helper()
		in, err := catalogs.DecodeReadSessionEvents(json.RawMessage(`{"provider":"codex","nativeId":"` + native + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		out, err := tools.ReadSessionEvents(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := answercheck.New().CheckJSON(entry, out); err != nil {
			t.Fatalf("answer breaks its schema: %v\n%s", err, mustJSON(t, out))
		}
		return mustJSON(t, out.Usage)
	}
	send := func(native string) {
		t.Helper()
		in, err := catalogs.DecodeSendSessionMessage(json.RawMessage(`{"provider":"codex","nativeId":"` + native + `","text":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tools.SendSessionMessage(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	report := func(native, ref string, turn *providers.TurnResult) {
		t.Helper()
		relay.ReportOutcome(providers.Codex, native, ref, providers.Outcome{Status: providers.StatusCompleted, Turn: turn})
		if err := del.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := usage("t1"); got != `{"turns":0,"reported":0}` {
		t.Fatalf("no turn yet: usage %s", got)
	}
	send("t1")
	report("t1", "turn_1", &providers.TurnResult{Verdict: providers.VerdictEmpty})
	if got := usage("t1"); got != `{"turns":1,"reported":0,"verdicts":"1 empty"}` {
		t.Fatalf("a turn without usage: usage %s, want unknown (no usage figures)", got)
	}
	send("t1")
	report("t1", "turn_2", &providers.TurnResult{Verdict: providers.VerdictAnswered, Usage: &providers.Usage{
		InputTokens: providers.Tokens(120), OutputTokens: providers.Tokens(30), CachedTokens: providers.Tokens(20), ReasoningTokens: providers.Tokens(7)}})
	send("t1")
	report("t1", "turn_3", &providers.TurnResult{Verdict: providers.VerdictAnswered, Usage: &providers.Usage{
		InputTokens: providers.Tokens(80), OutputTokens: providers.Tokens(10), CostUSD: new(float64)}})
	send("t2")
	report("t2", "turn_4", &providers.TurnResult{Verdict: providers.VerdictAnswered, Usage: &providers.Usage{InputTokens: providers.Tokens(1000)}})
	if got, want := usage("t1"), `{"turns":3,"reported":2,"usage":{"input":200,"output":40,"cached":20,"reasoning":7,"costUsd":0},"verdicts":"2 answered, 1 empty"}`; got != want {
		t.Errorf("t1 usage %s, want %s", got, want)
	}
	if got, want := usage("t2"), `{"turns":1,"reported":1,"usage":{"input":1000},"verdicts":"1 answered"}`; got != want {
		t.Errorf("t2 usage %s, want %s", got, want)
	}
}

// TestCutPagesKeepTheirUsage: a page the answer budget cuts keeps the
// totals of the page it was cut from (they total the session or the
// conversation, not the page's records).
func TestCutPagesKeepTheirUsage(t *testing.T) {
	u := &catalogs.UsageTotals{Turns: 2, Reported: 1}
	ev := withEventsUsage(eventPageAnswer(events.Page{Events: []events.Event{{Sequence: 1}, {Sequence: 2}, {Sequence: 3}}}), u)
	if c := ev.Cut(2); c.Usage != u || c.Cut(1).Usage != u {
		t.Errorf("read_session_events cut page: usage %+v, want %+v", c.Usage, u)
	}
	cv := withConversationUsage(&catalogs.ReadConversationOutput{Cut: func(int) *catalogs.ReadConversationOutput {
		return &catalogs.ReadConversationOutput{}
	}}, u)
	if c := cv.Cut(1); c.Usage != u {
		t.Errorf("read_conversation cut page: usage %+v, want %+v", c.Usage, u)
	}
}
