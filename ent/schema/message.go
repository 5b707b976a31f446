package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Message holds the schema definition for one directed conversation
// message. Its delivery is not recorded here: the message references the
// operation (the one delivery ledger) that carries it, written in the same
// transaction before it is dispatched, and shows that operation's state.
// The idempotency key is unique across the whole store, so two runtime
// processes can never both record, and so never both send, the same key.
//
// Trimming (beyond the newest 500 messages of a conversation) keeps the row
// as a tombstone: trimmed_at is set and the text cleared, so the sequence
// number and the idempotency key stay taken and an in-flight delivery record
// is never lost.
type Message struct {
	ent.Schema
}

// Annotations of the Message.
func (Message) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "conversation_messages"}}
}

// The validators of the Message fields (rules.go).

func ValidateMessageID(v string) error             { return text(v, 1, MaxIDBytes) }
func ValidateMessageConversationID(v string) error { return text(v, 1, noLimit) }
func ValidateMessageSequence(v int64) error        { return atLeast(v, 1) }
func ValidateMessageSender(v string) error         { return text(v, 1, MaxSessionBytes) }
func ValidateMessageRecipient(v string) error      { return text(v, 1, MaxSessionBytes) }
func ValidateMessageReplyTo(v string) error        { return text(v, 0, MaxReplyToBytes) }
func ValidateMessageIdempotencyKey(v string) error { return text(v, 1, MaxKeyBytes) }
func ValidateMessageOperationID(v string) error    { return text(v, 1, noLimit) }

// Fields of the Message.
func (Message) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Validate(ValidateMessageID).Immutable().Comment("message_<uuid>"),
		field.String("conversation_id").Validate(ValidateMessageConversationID).Immutable(),
		field.Int64("sequence").Validate(ValidateMessageSequence).Immutable(),
		field.String("sender").Validate(ValidateMessageSender).Immutable(),
		field.String("recipient").Validate(ValidateMessageRecipient).Immutable(),
		field.Text("text").Comment("cleared when the message is trimmed"),
		field.String("reply_to").Validate(ValidateMessageReplyTo).Optional().Nillable().Immutable(),
		field.Time("created_at").Immutable(),
		field.String("idempotency_key").Validate(ValidateMessageIdempotencyKey).Unique().Immutable(),
		// OperationID is the delivery operation that carries the message.
		field.String("operation_id").Validate(ValidateMessageOperationID).Immutable(),
		field.Time("trimmed_at").Optional().Nillable(),
	}
}

// Edges of the Message.
func (Message) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("conversation", Conversation.Type).Ref("messages").
			Field("conversation_id").Unique().Required().Immutable(),
		edge.To("operation", Operation.Type).
			Field("operation_id").Unique().Required().Immutable(),
	}
}

// Indexes of the Message. The second index serves every read of the
// retained transcript (trimmed_at IS NULL) by sequence, so tombstones never
// have to be scanned.
func (Message) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("conversation_id", "sequence").Unique(),
		index.Fields("conversation_id", "trimmed_at", "sequence"),
		index.Fields("operation_id"),
	}
}
