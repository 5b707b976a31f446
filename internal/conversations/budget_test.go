package conversations_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
)

// TestBudgetStopsPingPong runs two agents replying to each other until a
// budget refuses a send: the refusal names the budget, stores nothing and
// delivers nothing.
func TestBudgetStopsPingPong(t *testing.T) {
	tests := []struct {
		name       string
		budget     *conversations.Budget // nil: the default
		oneWay     bool                  // only codex:a sends, so only claude-code:b runs turns
		wantSent   int64
		wantBudget string
		wantErr    string
	}{
		{name: "default budget stops the ping-pong", wantSent: conversations.DefaultBudget.Messages, wantBudget: "messages",
			wantErr: "budget messages exhausted: 40 of 40 messages used; the message was not stored or delivered"},
		{name: "default turn budget stops a one-way flood", oneWay: true, wantSent: conversations.DefaultBudget.TurnsPerParticipant,
			wantBudget: "turnsPerParticipant", wantErr: "budget turnsPerParticipant exhausted: recipient claude-code:b already received 20 of 20 messages"},
		{name: "small message budget", budget: &conversations.Budget{Messages: 3, TurnsPerParticipant: 10, Tokens: 1000}, wantSent: 3, wantBudget: "messages"},
		{name: "small turn budget", budget: &conversations.Budget{Messages: 10, TurnsPerParticipant: 2, Tokens: 1000}, wantSent: 4, wantBudget: "turnsPerParticipant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			if tt.budget != nil {
				e.svc = e.process(t, e.disp, conversations.WithBudget(*tt.budget)).svc
			}
			id := e.conv(t)
			var err error
			var sent int64
			for i := 0; i < 1000; i++ {
				in := conversations.SendInput{ConversationID: id, Sender: "codex:a", Recipient: "claude-code:b", Text: "ping " + strconv.Itoa(i)}
				if i%2 == 1 && !tt.oneWay {
					in.Sender, in.Recipient = in.Recipient, in.Sender
				}
				if _, err = e.svc.Send(ctx, in); err != nil {
					break
				}
				sent++
			}
			var be *conversations.BudgetExceededError
			if !errors.As(err, &be) || be.Budget != tt.wantBudget {
				t.Fatalf("after %d sends: err = %v, want a %s budget refusal", sent, err, tt.wantBudget)
			}
			if want := "Conversation " + id + ": " + tt.wantErr; tt.wantErr != "" && !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error = %q, want it to start with %q", err, tt.wantErr)
			}
			if sent != tt.wantSent {
				t.Errorf("sent %d messages before the refusal, want %d", sent, tt.wantSent)
			}
			before := e.counts(t)
			if _, err := e.send(t, id, "one more", ""); !errors.As(err, &be) {
				t.Fatalf("a further send: %v, want a budget refusal", err)
			}
			if after := e.counts(t); after != before {
				t.Errorf("a refused send changed the store: %+v -> %+v", before, after)
			}
			page, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: id})
			if err != nil {
				t.Fatal(err)
			}
			b := page.Budget
			if b == nil || b.MessagesLeft != b.Messages-tt.wantSent || b.TokensUsed.Known || b.TokensLeft() != "unknown" || len(b.TurnsLeft) != 2 {
				t.Fatalf("read budget = %+v", b)
			}
			for _, tl := range b.TurnsLeft {
				if tl.Left < 0 || (tt.wantBudget == "turnsPerParticipant" && tl.ParticipantID == "claude-code:b" && tl.Left != 0) {
					t.Errorf("turns left = %+v", b.TurnsLeft)
				}
			}
			if got := int64(before.Messages); got != tt.wantSent {
				t.Errorf("%d messages stored, want %d", got, tt.wantSent)
			}
		})
	}
}

// TestBudgetSetAtCreationAndRaised: a conversation created with a budget
// stops at it; raising it lets the exchange go on; a budget below what was
// used is refused naming the argument, and nothing changes.
func TestBudgetSetAtCreationAndRaised(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	c, err := e.svc.CreateWithBudget(ctx, "small", conversations.Budget{Messages: 2, TurnsPerParticipant: 5, Tokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a", "b"} {
		prov := map[string]string{"a": "codex", "b": "claude-code"}[p]
		if _, err := e.svc.Join(ctx, conversations.JoinInput{ConversationID: c.ID, Provider: prov, NativeID: p}); err != nil {
			t.Fatal(err)
		}
	}
	send := func() error {
		_, err := e.svc.Send(ctx, conversations.SendInput{ConversationID: c.ID, Sender: "codex:a", Recipient: "claude-code:b", Text: "ping"})
		return err
	}
	for range 2 {
		if err := send(); err != nil {
			t.Fatal(err)
		}
	}
	var be *conversations.BudgetExceededError
	if err := send(); !errors.As(err, &be) || be.Budget != "messages" || be.Limit != 2 || !strings.Contains(err.Error(), "create_conversation {conversationId, budget}") {
		t.Fatalf("third send = %v, want the messages budget of 2 refusing it and saying how to raise it", err)
	}
	before := e.counts(t)
	for _, tt := range []struct {
		b    conversations.Budget
		want string
	}{
		{conversations.Budget{Messages: 1, TurnsPerParticipant: 5, Tokens: 1000}, "budget.messages must be at least the 2 messages"},
		{conversations.Budget{Messages: 10, TurnsPerParticipant: 1, Tokens: 1000}, "budget.turnsPerParticipant must be at least the 2 messages participant claude-code:b already received"},
		{conversations.Budget{Messages: 10, TurnsPerParticipant: 5, Tokens: -1}, "must be at least 1"},
	} {
		_, err := e.svc.SetBudget(ctx, c.ID, tt.b, "")
		var inv *conversations.InvalidError
		if !errors.As(err, &inv) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SetBudget(%+v) = %v, want an invalid-argument error with %q", tt.b, err, tt.want)
		}
	}
	page, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	if page.Budget.Messages != 2 || page.Budget.MessagesLeft != 0 {
		t.Fatalf("a refused SetBudget changed the budget: %+v", page.Budget)
	}
	if after := e.counts(t); after != before {
		t.Fatalf("a refused SetBudget changed the store: %+v -> %+v", before, after)
	}
	if _, err := e.svc.SetBudget(ctx, c.ID, conversations.Budget{Messages: 3, TurnsPerParticipant: 5, Tokens: 1000}, ""); err != nil {
		t.Fatal(err)
	}
	if err := send(); err != nil {
		t.Fatalf("send after raising the budget: %v", err)
	}
	page, _ = e.svc.Read(ctx, conversations.ReadInput{ConversationID: c.ID})
	b := page.Budget
	if b.Messages != 3 || b.MessagesLeft != 0 || b.TokensLeft() != "unknown" || b.TokensUsed.Answer() != "unknown" {
		t.Fatalf("budget after the raise = %+v", b)
	}
	for _, tl := range b.TurnsLeft {
		if tl.ParticipantID == "claude-code:b" && (tl.Used != 3 || tl.Left != 2) {
			t.Errorf("turns of claude-code:b = %+v, want 3 used, 2 left", tl)
		}
	}
}

func TestCheckTokens(t *testing.T) {
	tests := []struct {
		used conversations.TokensUsed
		want bool
	}{
		{conversations.UnknownTokens, false}, // unknown never refuses and is never 0
		{conversations.TokensUsed{Known: true, Count: 0}, false},
		{conversations.TokensUsed{Known: true, Count: 999}, false},
		{conversations.TokensUsed{Known: true, Count: 1000}, true},
	}
	for _, tt := range tests {
		err := conversations.CheckTokens("conversation_x", tt.used, 1000)
		var be *conversations.BudgetExceededError
		if got := errors.As(err, &be); got != tt.want || (got && (be.Budget != "tokens" || !strings.Contains(err.Error(), "budget tokens exhausted: its turns used 1000 of 1000 tokens"))) {
			t.Errorf("CheckTokens(%+v) = %v, want refused %v", tt.used, err, tt.want)
		}
	}
	if conversations.UnknownTokens.Answer() != "unknown" || (conversations.TokensUsed{Known: true}).Answer() != int64(0) {
		t.Error("Answer: unknown usage must answer \"unknown\", a known 0 the number 0")
	}
}

// TestTokenBudgetCountsReportedUsage: the tokens the providers reported
// for a conversation's turns (stored with each send by the ledger) count
// against its token budget; a send once they reach it is refused, and
// read_conversation answers the count instead of "unknown".
func TestTokenBudgetCountsReportedUsage(t *testing.T) {
	ctx := context.Background()
	st := acceptQueued()
	e := newEnv(t, st, st, st)
	e.p = e.process(t, e.disp, conversations.WithBudget(conversations.Budget{Messages: 10, TurnsPerParticipant: 10, Tokens: 100}))
	e.svc = e.p.svc
	id := e.conv(t)
	in, out := int64(80), int64(30)
	if _, err := e.send(t, id, "first", ""); err != nil {
		t.Fatal(err)
	}
	page, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: id})
	if err != nil || page.Budget == nil || page.Budget.TokensUsed.Known {
		t.Fatalf("before any usage: %v %+v, want tokens used unknown", err, page.Budget)
	}
	e.p.del.ReportOutcome(providers.ClaudeCode, "b", st.receipt.Ref, providers.Outcome{Status: providers.StatusCompleted,
		Turn: &providers.TurnResult{Verdict: providers.VerdictAnswered, Usage: &providers.Usage{InputTokens: &in, OutputTokens: &out}}})
	if err := e.p.del.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	page, err = e.svc.Read(ctx, conversations.ReadInput{ConversationID: id})
	if err != nil || page.Budget == nil || !page.Budget.TokensUsed.Known || page.Budget.TokensUsed.Count != in+out {
		t.Fatalf("after usage: %v %+v, want %d tokens used", err, page.Budget, in+out)
	}
	before := e.counts(t)
	_, err = e.send(t, id, "second", "")
	var be *conversations.BudgetExceededError
	if !errors.As(err, &be) || be.Budget != "tokens" || be.Used != in+out || be.Limit != 100 {
		t.Fatalf("send past the token budget: %v, want a tokens refusal (110 of 100)", err)
	}
	if after := e.counts(t); after != before {
		t.Errorf("a refused send changed the store: %+v -> %+v", before, after)
	}
	// A token budget below what the turns used is refused naming the
	// argument, and nothing changes; a raise lets the exchange go on.
	b := conversations.Budget{Messages: 10, TurnsPerParticipant: 10, Tokens: 109}
	var inv *conversations.InvalidError
	if _, err := e.svc.SetBudget(ctx, id, b, ""); !errors.As(err, &inv) ||
		!strings.Contains(err.Error(), "budget.tokens must be at least the 110 tokens conversation "+id+" already used; received 109") {
		t.Fatalf("SetBudget below the tokens used = %v, want an invalid-argument error naming budget.tokens", err)
	}
	if page, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: id}); err != nil || page.Budget.Tokens != 100 {
		t.Fatalf("a refused SetBudget changed the token budget: %v %+v", err, page.Budget)
	}
	b.Tokens = 110 // what was used is allowed (and refuses the next send)
	if _, err := e.svc.SetBudget(ctx, id, b, ""); err != nil {
		t.Fatalf("SetBudget at the tokens used: %v", err)
	}
	b.Tokens = 1000
	if _, err := e.svc.SetBudget(ctx, id, b, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.send(t, id, "second", ""); err != nil {
		t.Fatalf("a send after raising the token budget: %v", err)
	}
}

// TestTokenBudgetSumsOnlyItsTurns: the token budget sums the input and
// output tokens of every turn of the conversation that reported them (a
// turn with only one figure adds it, one with none adds nothing, cached
// and reasoning tokens are not counted twice), never another
// conversation's, and refuses the first send once the sum reaches it.
func TestTokenBudgetSumsOnlyItsTurns(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.p = e.process(t, e.disp, conversations.WithBudget(conversations.Budget{Messages: 50, TurnsPerParticipant: 50, Tokens: 100}))
	e.svc = e.p.svc
	other := e.conv(t)
	id := e.conv(t)
	r, err := e.send(t, other, "elsewhere", "")
	if err != nil {
		t.Fatal(err)
	}
	e.setUsage(t, r.Message.ID, `{"input":5000,"output":5000}`)
	for i, tc := range []struct {
		usage    string // stored with the turn; "" none reported
		wantUsed int64  // after it; -1 unknown
	}{
		{"", -1},
		{`{"cached":40,"reasoning":40}`, -1},
		{`{"input":30,"cached":20,"reasoning":10}`, 30},
		{`{"output":25}`, 55},
		{`{"input":20,"output":24,"costUsd":0.5}`, 99},
		{`{"output":1}`, 100},
	} {
		r, err := e.send(t, id, "turn "+strconv.Itoa(i), "")
		if err != nil {
			t.Fatalf("send %d: %v (the budget refused before its tokens were used)", i, err)
		}
		if tc.usage != "" {
			e.setUsage(t, r.Message.ID, tc.usage)
		}
		page, err := e.svc.Read(ctx, conversations.ReadInput{ConversationID: id})
		if err != nil {
			t.Fatal(err)
		}
		got := page.Budget.TokensUsed
		if (tc.wantUsed < 0 && got.Known) || (tc.wantUsed >= 0 && (!got.Known || got.Count != tc.wantUsed)) {
			t.Fatalf("after turn %d (%s): tokens used %+v, want %d (-1: unknown)", i, tc.usage, got, tc.wantUsed)
		}
	}
	_, err = e.send(t, id, "one too many", "")
	var be *conversations.BudgetExceededError
	if !errors.As(err, &be) || be.Budget != "tokens" || be.Used != 100 || be.Limit != 100 {
		t.Fatalf("send at the token budget: %v, want a tokens refusal (100 of 100)", err)
	}
	if _, err := e.send(t, other, "the other goes on", ""); err == nil || !errors.As(err, &be) {
		t.Fatalf("the other conversation (10000 tokens used of 100): %v, want refused", err)
	}
}

// setUsage stores usage with the operation of message id, as the ledger
// does when the turn's outcome reports it.
func (e *env) setUsage(t testing.TB, id, usage string) {
	t.Helper()
	if err := e.c.Operation.UpdateOneID(e.op(t, id).ID).SetUsage(json.RawMessage(usage)).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}
