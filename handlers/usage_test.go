package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/answercheck"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// TestReadConversationShowsTurnVerdictAndUsageTotals: a message's receipt
// carries its turn's verdict and usage once the adapter reported them, and
// read_conversation totals the conversation's turns; the answer matches
// the declared schema.
func TestReadConversationShowsTurnVerdictAndUsageTotals(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	var adapters []providers.Adapter
	for _, id := range []providers.ID{providers.Codex, providers.OpenCode} {
		f := &registrytest.Adapter{Provider: id}
		f.SetSessions([]providers.Session{f.Session("a", ""), f.Session("ses_1", "")}, nil)
		f.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
			return providers.Receipt{Accepted: true, Status: providers.StatusQueued, Ref: "msg_1", NativeTurnID: "msg_1"}, nil
		}
		adapters = append(adapters, f)
	}
	reg, err := registry.New(st, adapters, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	relay := registry.NewHost()
	ledger := delivery.New(st, reg, delivery.Options{Reports: relay})
	t.Cleanup(func() { ledger.Close() })
	tools := ConversationTools{Svc: conversations.New(st, ledger), Usage: ledger}
	conv, err := tools.CreateConversation(ctx, &catalogs.CreateConversationInput{Title: strPtr("usage")})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{"codex", "a"}, {"opencode", "ses_1"}} {
		if _, err := tools.JoinConversation(ctx, &catalogs.JoinConversationInput{ConversationID: conv.ID, Provider: p[0], NativeID: p[1]}); err != nil {
			t.Fatal(err)
		}
	}
	in, err := catalogs.DecodeSendConversationMessage(json.RawMessage(`{"conversationId":"` + conv.ID + `","sender":"codex:a","recipient":"opencode:ses_1","text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools.SendConversationMessage(ctx, in); err != nil {
		t.Fatal(err)
	}
	read := func() *catalogs.ReadConversationOutput {
		t.Helper()
		in, err := catalogs.DecodeReadConversation(json.RawMessage(`{"conversationId":"` + conv.ID + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		out, err := tools.ReadConversation(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		e, err := answercheck.Entry("full", "read_conversation")
		if err != nil {
			t.Fatal(err)
		}
		if err := answercheck.New().CheckJSON(e, out); err != nil {
			t.Fatalf("answer breaks its schema: %v\n%s", err, mustJSON(t, out))
		}
		return out
	}
	if got := mustJSON(t, read().Usage); got != `{"turns":0,"reported":0}` {
		t.Fatalf("before the turn ended: usage %s", got)
	}
	relay.ReportOutcome(providers.OpenCode, "ses_1", "msg_1", providers.Outcome{Status: providers.StatusCompleted, Turn: &providers.TurnResult{
		Verdict: providers.VerdictAnswered, Usage: &providers.Usage{InputTokens: providers.Tokens(100), OutputTokens: providers.Tokens(23)}}})
	if err := ledger.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	out := read()
	if got := mustJSON(t, out.Usage); got != `{"turns":1,"reported":1,"usage":{"input":100,"output":23},"verdicts":"1 answered"}` {
		t.Fatalf("usage %s", got)
	}
	if got := mustJSON(t, out.Messages[0].Receipt.Turn); !strings.Contains(got, `"verdict":"answered"`) {
		t.Fatalf("message receipt turn %s", got)
	}
}
