package conversations

import (
	"context"
	"fmt"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/message"
)

// Budget bounds a directed conversation so that two agents replying to
// each other cannot run on forever. Every send records one message and
// starts one turn of the recipient's session, so the message budget bounds
// the whole exchange and the turn budget bounds what any one participant's
// session is made to run.
type Budget struct {
	// Messages is how many messages the conversation may carry in all
	// (trimmed ones count: the sequence never goes back).
	Messages int64 `json:"messages"`
	// TurnsPerParticipant is how many messages one participant may
	// receive, each of which starts a turn of its session.
	TurnsPerParticipant int64 `json:"turnsPerParticipant"`
	// Tokens is the token budget. It is not enforced yet: per-turn usage
	// is not recorded, so what was used is unknown.
	Tokens int64 `json:"tokens"`
}

// DefaultBudget is the budget of every conversation (see
// docs/conversations.md, "Loop budgets"): 40 messages, 20 turns per
// participant, 2,000,000 tokens. A review or a question-and-answer between
// two agents takes a handful of exchanges; 20 agent turns of typically
// 20k–100k tokens each stay in the low dollars, while a runaway ping-pong
// is stopped within minutes.
var DefaultBudget = Budget{Messages: 40, TurnsPerParticipant: 20, Tokens: 2_000_000}

// WithBudget sets the budget every conversation gets (default
// DefaultBudget). Tests use it to run exchanges longer than the default.
func WithBudget(b Budget) Option { return func(s *Service) { s.budget = b } }

// BudgetExceededError refuses a send past one of the conversation's
// budgets; nothing is stored and nothing is delivered.
type BudgetExceededError struct {
	ConversationID string
	// Budget names the exhausted budget: "messages" or "turnsPerParticipant".
	Budget      string
	Participant string // the recipient, for turnsPerParticipant
	Used, Limit int64
}

func (e *BudgetExceededError) Error() string {
	if e.Budget == "turnsPerParticipant" {
		return fmt.Sprintf("Conversation %s: budget turnsPerParticipant exhausted: recipient %s already received %d of %d messages; the message was not stored or delivered",
			e.ConversationID, e.Participant, e.Used, e.Limit)
	}
	return fmt.Sprintf("Conversation %s: budget messages exhausted: %d of %d messages used; the message was not stored or delivered",
		e.ConversationID, e.Used, e.Limit)
}

// checkBudget refuses a send from conv to recipient past s.budget. It runs
// inside the send's write transaction, so concurrent sends cannot both
// take the last unit.
func (s *Service) checkBudget(ctx context.Context, tx *ent.Tx, conv *ent.Conversation, recipient string) error {
	b := s.budget
	if conv.LastSequence >= b.Messages {
		return &BudgetExceededError{ConversationID: conv.ID, Budget: "messages", Used: conv.LastSequence, Limit: b.Messages}
	}
	turns, err := tx.Message.Query().Where(message.ConversationID(conv.ID), message.Recipient(recipient)).Count(ctx)
	if err != nil {
		return fmt.Errorf("count turns of %s: %w", recipient, err)
	}
	if int64(turns) >= b.TurnsPerParticipant {
		return &BudgetExceededError{ConversationID: conv.ID, Budget: "turnsPerParticipant", Participant: recipient, Used: int64(turns), Limit: b.TurnsPerParticipant}
	}
	return nil
}

// BudgetLeft is a conversation's budget and what is left of it.
type BudgetLeft struct {
	Budget
	MessagesLeft int64 `json:"messagesLeft"`
	// TurnsLeft is, per participant, how many more messages it may receive.
	TurnsLeft []ParticipantTurns `json:"turnsLeft"`
	// TokensUsed is "unknown": per-turn usage is not recorded yet.
	TokensUsed string `json:"tokensUsed"`
}

// ParticipantTurns is what is left of one participant's turn budget.
type ParticipantTurns struct {
	ParticipantID string `json:"participantId"`
	Left          int64  `json:"left"`
}

// budgetLeft reports s.budget against what conv has used.
func (s *Service) budgetLeft(ctx context.Context, tx *ent.Tx, conv *ent.Conversation) (*BudgetLeft, error) {
	b := s.budget
	out := &BudgetLeft{Budget: b, MessagesLeft: max(b.Messages-conv.LastSequence, 0), TurnsLeft: []ParticipantTurns{}, TokensUsed: "unknown"}
	for _, p := range conv.Edges.Participants {
		n, err := tx.Message.Query().Where(message.ConversationID(conv.ID), message.Recipient(p.ParticipantID)).Count(ctx)
		if err != nil {
			return nil, fmt.Errorf("count turns of %s: %w", p.ParticipantID, err)
		}
		out.TurnsLeft = append(out.TurnsLeft, ParticipantTurns{ParticipantID: p.ParticipantID, Left: max(b.TurnsPerParticipant-int64(n), 0)})
	}
	return out, nil
}
