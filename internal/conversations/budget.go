package conversations

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agent-interop/runtime/catalogs/limits"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/internal/delivery"
)

// Budget bounds a directed conversation so that two agents replying to
// each other cannot run on forever. Every send records one message and
// starts one turn of the recipient's session, so the message budget bounds
// the whole exchange, the turn budget what any one participant's session
// is made to run, and the token budget what those turns may cost.
type Budget struct {
	// Messages is how many messages the conversation may carry in all
	// (trimmed ones count: the sequence never goes back).
	Messages int64 `json:"messages"`
	// TurnsPerParticipant is how many messages one participant may
	// receive, each of which starts a turn of its session.
	TurnsPerParticipant int64 `json:"turnsPerParticipant"`
	// Tokens bounds the tokens the conversation's turns used, as the
	// providers reported them ([CheckTokens]).
	Tokens int64 `json:"tokens"`
}

// DefaultBudget is a new conversation's budget, create_conversation's
// defaults (spec/tools/conversations.yaml; docs/conversations.md, "Loop
// budgets", says why): 40 messages, 20 turns per participant, 2,000,000
// tokens.
var DefaultBudget = Budget{
	Messages:            limits.CreateConversationBudgetMessagesDefault,
	TurnsPerParticipant: limits.CreateConversationBudgetTurnsPerParticipantDefault,
	Tokens:              limits.CreateConversationBudgetTokensDefault,
}

// WithBudget sets the budget a conversation created without one gets
// (default DefaultBudget). Tests and benchmarks use it to run exchanges
// longer than the default.
func WithBudget(b Budget) Option { return func(s *Service) { s.budget = b } }

// TokensUsed is what a conversation's turns used: a count, or unknown
// while the providers' usage is not recorded per turn. It is never a
// made-up 0.
type TokensUsed struct {
	Known bool
	Count int64
}

// UnknownTokens is the usage of turns whose usage nobody recorded.
var UnknownTokens = TokensUsed{}

// Answer is the usage as answered: the count, or "unknown".
func (u TokensUsed) Answer() any {
	if !u.Known {
		return "unknown"
	}
	return u.Count
}

// BudgetExceededError refuses a send past one of the conversation's
// budgets; nothing is stored and nothing is delivered.
type BudgetExceededError struct {
	ConversationID string
	// Budget names the exhausted budget: "messages",
	// "turnsPerParticipant" or "tokens".
	Budget      string
	Participant string // the recipient, for turnsPerParticipant
	Used, Limit int64
}

func (e *BudgetExceededError) Error() string {
	const raise = "the message was not stored or delivered; raise the budget with create_conversation {conversationId, budget} if the exchange should go on"
	switch e.Budget {
	case "turnsPerParticipant":
		return fmt.Sprintf("Conversation %s: budget turnsPerParticipant exhausted: recipient %s already received %d of %d messages; %s",
			e.ConversationID, e.Participant, e.Used, e.Limit, raise)
	case "tokens":
		return fmt.Sprintf("Conversation %s: budget tokens exhausted: its turns used %d of %d tokens; %s",
			e.ConversationID, e.Used, e.Limit, raise)
	}
	return fmt.Sprintf("Conversation %s: budget messages exhausted: %d of %d messages used; %s",
		e.ConversationID, e.Used, e.Limit, raise)
}

func budgetOf(conv *ent.Conversation) Budget {
	return Budget{Messages: conv.BudgetMessages, TurnsPerParticipant: conv.BudgetTurns, Tokens: conv.BudgetTokens}
}

// CheckTokens refuses a send when the conversation's turns used its token
// budget. Unknown usage passes: nothing is known to be spent, and the
// message and turn budgets still bound the exchange.
func CheckTokens(conversationID string, used TokensUsed, limit int64) error {
	if used.Known && used.Count >= limit {
		return &BudgetExceededError{ConversationID: conversationID, Budget: "tokens", Used: used.Count, Limit: limit}
	}
	return nil
}

// tokensUsed is what conv's turns used: the input and output tokens the
// providers reported for the sends of its messages (stored with each send
// operation by the delivery ledger). It is unknown while no turn of conv
// reported either; turns that reported nothing add nothing, and cached and
// reasoning tokens (parts of those) are not counted again. It is the
// conversation's usage total (delivery.TotalsOf over
// delivery.OfConversation, one SQL aggregate that read_conversation's
// usage and the desk answer too), so its cost does not grow with the
// turns it sums.
func tokensUsed(ctx context.Context, tx *ent.Tx, conv *ent.Conversation) (TokensUsed, error) {
	t, err := delivery.TotalsOf(ctx, tx.Operation, delivery.OfConversation(conv.ID))
	if err != nil {
		return UnknownTokens, fmt.Errorf("read conversation %s's usage: %w", conv.ID, err)
	}
	used := UnknownTokens
	if t.Usage == nil {
		return used, nil
	}
	for _, n := range []*int64{t.Usage.InputTokens, t.Usage.OutputTokens} {
		if n != nil {
			used.Known = true
			used.Count += *n
		}
	}
	return used, nil
}

// turnsReceived counts the messages participant received in conv.
func turnsReceived(ctx context.Context, tx *ent.Tx, convID, participant string) (int64, error) {
	n, err := tx.Message.Query().Where(message.ConversationID(convID), message.Recipient(participant)).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count turns of %s: %w", participant, err)
	}
	return int64(n), nil
}

// checkBudget refuses a send from conv to recipient past conv's budget. It
// runs inside the send's write transaction, so concurrent sends cannot
// both take the last unit.
func (s *Service) checkBudget(ctx context.Context, tx *ent.Tx, conv *ent.Conversation, recipient string) error {
	b := budgetOf(conv)
	if conv.LastSequence >= b.Messages {
		return &BudgetExceededError{ConversationID: conv.ID, Budget: "messages", Used: conv.LastSequence, Limit: b.Messages}
	}
	turns, err := turnsReceived(ctx, tx, conv.ID, recipient)
	if err != nil {
		return err
	}
	if turns >= b.TurnsPerParticipant {
		return &BudgetExceededError{ConversationID: conv.ID, Budget: "turnsPerParticipant", Participant: recipient, Used: turns, Limit: b.TurnsPerParticipant}
	}
	used, err := tokensUsed(ctx, tx, conv)
	if err != nil {
		return err
	}
	return CheckTokens(conv.ID, used, b.Tokens)
}

// SetBudget replaces a conversation's budget (create_conversation with
// conversationId), and its title when title is not blank. A part of b that
// is 0 keeps its current value. A budget below what the conversation
// already used is refused naming the argument, and nothing changes.
func (s *Service) SetBudget(ctx context.Context, conversationID string, b Budget, title string) (Conversation, error) {
	if b.Messages < 0 || b.TurnsPerParticipant < 0 || b.Tokens < 0 {
		return Conversation{}, invalidf("budget: messages, turnsPerParticipant and tokens must be at least 1 (0 keeps the current value); received %+v", b)
	}
	title = strings.TrimSpace(title)
	if utf8.RuneCountInString(title) > MaxTitleLen {
		title = strings.TrimSpace(string([]rune(title)[:MaxTitleLen]))
	}
	var out Conversation
	err := s.tx(ctx, func(tx *ent.Tx) error {
		conv, err := getConversation(ctx, tx.Client(), conversationID)
		if err != nil {
			return err
		}
		b = b.over(budgetOf(conv))
		if b.Messages < conv.LastSequence {
			return invalidf("budget.messages must be at least the %d messages conversation %s already carried; received %d", conv.LastSequence, conv.ID, b.Messages)
		}
		parts, err := conv.QueryParticipants().All(ctx)
		if err != nil {
			return fmt.Errorf("read participants: %w", err)
		}
		for _, p := range parts {
			n, err := turnsReceived(ctx, tx, conv.ID, p.ParticipantID)
			if err != nil {
				return err
			}
			if b.TurnsPerParticipant < n {
				return invalidf("budget.turnsPerParticipant must be at least the %d messages participant %s already received; received %d", n, p.ParticipantID, b.TurnsPerParticipant)
			}
		}
		used, err := tokensUsed(ctx, tx, conv)
		if err != nil {
			return err
		}
		if used.Known && b.Tokens < used.Count {
			return invalidf("budget.tokens must be at least the %d tokens conversation %s already used; received %d", used.Count, conv.ID, b.Tokens)
		}
		upd := conv.Update().SetBudgetMessages(b.Messages).SetBudgetTurns(b.TurnsPerParticipant).SetBudgetTokens(b.Tokens).
			SetUpdatedAt(s.now())
		if title != "" {
			upd.SetTitle(title)
		}
		row, err := upd.Save(ctx)
		if err != nil {
			return fmt.Errorf("update budget: %w", err)
		}
		row.Edges.Participants = parts
		n, err := tx.Message.Query().Where(message.ConversationID(conv.ID), message.TrimmedAtIsNil()).Count(ctx)
		if err != nil {
			return fmt.Errorf("count messages: %w", err)
		}
		out = conversationView(row, n)
		return nil
	})
	return out, err
}

// over is b with each part that is 0 taken from current.
func (b Budget) over(current Budget) Budget {
	if b.Messages == 0 {
		b.Messages = current.Messages
	}
	if b.TurnsPerParticipant == 0 {
		b.TurnsPerParticipant = current.TurnsPerParticipant
	}
	if b.Tokens == 0 {
		b.Tokens = current.Tokens
	}
	return b
}

// BudgetLeft is a conversation's budget and what is left of it.
type BudgetLeft struct {
	Budget
	MessagesLeft int64 `json:"messagesLeft"`
	// TurnsLeft is, per participant, how many more messages it may receive.
	TurnsLeft []ParticipantTurns `json:"turnsLeft"`
	// TokensUsed is what the turns used, or unknown.
	TokensUsed TokensUsed `json:"-"`
}

// TokensLeft is what is left of the token budget: a count, or "unknown".
func (b BudgetLeft) TokensLeft() any {
	if !b.TokensUsed.Known {
		return "unknown"
	}
	return max(b.Tokens-b.TokensUsed.Count, 0)
}

// ParticipantTurns is what is left of one participant's turn budget.
type ParticipantTurns struct {
	ParticipantID string `json:"participantId"`
	Used          int64  `json:"used"`
	Left          int64  `json:"left"`
}

// budgetLeft reports conv's budget against what it has used.
func (s *Service) budgetLeft(ctx context.Context, tx *ent.Tx, conv *ent.Conversation) (*BudgetLeft, error) {
	b := budgetOf(conv)
	used, err := tokensUsed(ctx, tx, conv)
	if err != nil {
		return nil, err
	}
	out := &BudgetLeft{Budget: b, MessagesLeft: max(b.Messages-conv.LastSequence, 0), TurnsLeft: []ParticipantTurns{}, TokensUsed: used}
	for _, p := range conv.Edges.Participants {
		n, err := turnsReceived(ctx, tx, conv.ID, p.ParticipantID)
		if err != nil {
			return nil, err
		}
		out.TurnsLeft = append(out.TurnsLeft, ParticipantTurns{ParticipantID: p.ParticipantID, Used: n, Left: max(b.TurnsPerParticipant-n, 0)})
	}
	return out, nil
}
