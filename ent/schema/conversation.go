package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/agent-interop/runtime/catalogs/limits"
)

// Conversation holds the schema definition for a titled conversation
// between provider sessions. Messages are directed (one sender, one
// recipient) and numbered by last_sequence, which only grows: trimming old
// messages never frees a sequence number.
type Conversation struct {
	ent.Schema
}

// Annotations of the Conversation.
func (Conversation) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "conversations"}}
}

// The validators of the Conversation fields (rules.go).

func ValidateConversationID(v string) error            { return text(v, 1, MaxIDBytes) }
func ValidateConversationTitle(v string) error         { return text(v, 1, MaxTitleBytes) }
func ValidateConversationLastSequence(v int64) error   { return atLeast(v, 0) }
func ValidateConversationBudgetMessages(v int64) error { return atLeast(v, 1) }
func ValidateConversationBudgetTurns(v int64) error    { return atLeast(v, 1) }
func ValidateConversationBudgetTokens(v int64) error   { return atLeast(v, 1) }

// Fields of the Conversation.
func (Conversation) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Validate(ValidateConversationID).Immutable().Comment("conversation_<uuid>"),
		field.String("title").Validate(ValidateConversationTitle).Comment("trimmed, at most 300 characters"),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
		field.Int64("last_sequence").Validate(ValidateConversationLastSequence).Default(0),
		// The loop budget (internal/conversations/budget.go): a send past
		// it is refused. Defaults and maxima are create_conversation's
		// (spec/tools/conversations.yaml); a store upgraded from before
		// budgets gives its conversations the defaults. The maxima are the
		// tool's (the decoder's); tests and benchmarks set larger budgets.
		field.Int64("budget_messages").Validate(ValidateConversationBudgetMessages).Default(limits.CreateConversationBudgetMessagesDefault),
		field.Int64("budget_turns").Validate(ValidateConversationBudgetTurns).Default(limits.CreateConversationBudgetTurnsPerParticipantDefault),
		field.Int64("budget_tokens").Validate(ValidateConversationBudgetTokens).Default(limits.CreateConversationBudgetTokensDefault),
	}
}

// Edges of the Conversation.
func (Conversation) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("participants", Participant.Type),
		edge.To("messages", Message.Type),
	}
}

// Indexes of the Conversation.
func (Conversation) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("updated_at", "id"),
	}
}
