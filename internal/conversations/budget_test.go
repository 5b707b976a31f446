package conversations_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/conversations"
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
