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
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// TestCreateConversationBudgetArguments drives create_conversation's
// budget from raw arguments: the parts left out take the defaults the spec
// declares (conversations.DefaultBudget); a negative, zero, absurd or
// non-integer part, and a budget below what the conversation already
// used, are tool errors naming the argument and change nothing; a raise
// lets the stopped exchange go on.
func TestCreateConversationBudgetArguments(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	f := &registrytest.Adapter{Provider: providers.Codex}
	f.SetSessions([]providers.Session{f.Session("a", ""), f.Session("b", "")}, nil)
	f.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		return providers.Receipt{Accepted: true, Status: providers.StatusQueued}, nil
	}
	reg, err := registry.New(st, []providers.Adapter{f}, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ledger := delivery.New(st, reg, delivery.Options{})
	t.Cleanup(func() { ledger.Close() })
	tools := ConversationTools{Svc: conversations.New(st, ledger)}
	create := func(raw string) (*catalogs.Conversation, error) {
		in, err := catalogs.DecodeCreateConversation(json.RawMessage(raw))
		if err != nil {
			return nil, err
		}
		return tools.CreateConversation(ctx, in)
	}

	in, err := catalogs.DecodeCreateConversation(json.RawMessage(`{"title":"t","budget":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := budgetInput(in.Budget); got != conversations.DefaultBudget {
		t.Fatalf("an empty budget decodes to %+v, the service's default is %+v: the spec's defaults and the code's differ", got, conversations.DefaultBudget)
	}

	conv, err := create(`{"title":"small","budget":{"messages":2}}`)
	if err != nil {
		t.Fatal(err)
	}
	id := conv.ID
	for _, native := range []string{"a", "b"} {
		if _, err := tools.Svc.Join(ctx, conversations.JoinInput{ConversationID: id, Provider: "codex", NativeID: native}); err != nil {
			t.Fatal(err)
		}
	}
	send := func() error {
		_, err := tools.Svc.Send(ctx, conversations.SendInput{ConversationID: id, Sender: "codex:a", Recipient: "codex:b", Text: "ping"})
		return err
	}
	for range 2 {
		if err := send(); err != nil {
			t.Fatal(err)
		}
	}
	budget := func() string {
		t.Helper()
		page, err := tools.ReadConversation(ctx, &catalogs.ReadConversationInput{ConversationID: id, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(page.Budget)
		return string(b)
	}
	before := budget()
	if !strings.Contains(before, `"messages":2,"messagesLeft":0`) || !strings.Contains(before, `"turnsPerParticipant":20`) || !strings.Contains(before, `"tokens":2000000`) {
		t.Fatalf("budget after creation = %s, want messages 2 and the defaults for the rest", before)
	}
	for _, tc := range []struct{ budget, want string }{
		{`{"messages":-1}`, "budget.messages"},
		{`{"messages":0}`, "budget.messages"},
		{`{"turnsPerParticipant":-5}`, "budget.turnsPerParticipant"},
		{`{"turnsPerParticipant":1000000}`, "budget.turnsPerParticipant"},
		{`{"tokens":0}`, "budget.tokens"},
		{`{"tokens":1000000000000}`, "budget.tokens"},
		{`{"messages":"many"}`, "budget.messages"},
		{`{"messages":1e30}`, "budget.messages"},
		{`{"messages":1}`, "budget.messages must be at least the 2 messages conversation " + id + " already carried; received 1"},
	} {
		_, err := create(`{"conversationId":"` + id + `","budget":` + tc.budget + `}`)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("budget %s: %v, want a tool error naming %q", tc.budget, err, tc.want)
		}
		if after := budget(); after != before {
			t.Fatalf("the refused budget %s changed the conversation's: %s -> %s", tc.budget, before, after)
		}
	}
	if err := send(); err == nil || !strings.Contains(err.Error(), "budget messages exhausted") {
		t.Fatalf("third send before the raise: %v, want the messages budget refusing it", err)
	}
	// A change names the parts it changes; the others keep their values,
	// not the creation defaults.
	if _, err := create(`{"conversationId":"` + id + `","budget":{"tokens":5000,"turnsPerParticipant":7}}`); err != nil {
		t.Fatalf("setting the token and turn budgets: %v", err)
	}
	if got := budget(); !strings.Contains(got, `"messages":2,`) || !strings.Contains(got, `"turnsPerParticipant":7`) || !strings.Contains(got, `"tokens":5000`) {
		t.Fatalf("budget after setting tokens and turns = %s, want messages still 2", got)
	}
	if _, err := create(`{"conversationId":"` + id + `","budget":{"messages":3}}`); err != nil {
		t.Fatalf("raising the budget: %v", err)
	}
	if got := budget(); !strings.Contains(got, `"turnsPerParticipant":7`) || !strings.Contains(got, `"tokens":5000`) {
		t.Fatalf("budget after raising messages = %s, want turns 7 and tokens 5000 kept (not reset to the defaults)", got)
	}
	if err := send(); err != nil {
		t.Fatalf("a send after the raise: %v", err)
	}
	if got := budget(); !strings.Contains(got, `"messages":3,"messagesLeft":0`) {
		t.Fatalf("budget after the raise and a send = %s", got)
	}
}
