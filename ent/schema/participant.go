package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Participant holds the schema definition for one provider session's
// membership in a conversation. Its participant_id (default
// "<provider>:<nativeId>") is unique within the conversation and is bound to
// exactly one provider session: the database refuses a second binding.
type Participant struct {
	ent.Schema
}

// Annotations of the Participant.
func (Participant) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "conversation_participants"}}
}

// The validators of the Participant fields (rules.go).

func ValidateParticipantConversationID(v string) error { return text(v, 1, noLimit) }
func ValidateParticipantParticipantID(v string) error  { return text(v, 1, MaxSessionBytes) }
func ValidateParticipantProvider(v string) error       { return text(v, 1, 100) }
func ValidateParticipantNativeID(v string) error       { return text(v, 1, MaxNativeIDBytes) }
func ValidateParticipantWorkspaceID(v string) error    { return text(v, 0, MaxWorkspaceBytes) }

// Fields of the Participant. The row ID is a surrogate; the identifier
// clients see is participant_id.
func (Participant) Fields() []ent.Field {
	return []ent.Field{
		field.String("conversation_id").Validate(ValidateParticipantConversationID).Immutable(),
		field.String("participant_id").Validate(ValidateParticipantParticipantID).Immutable(),
		field.String("provider").Validate(ValidateParticipantProvider).Immutable(),
		field.String("native_id").Validate(ValidateParticipantNativeID).Immutable(),
		field.String("workspace_id").Validate(ValidateParticipantWorkspaceID).Optional().Nillable().Immutable(),
		field.Enum("role").Values("sender", "reviewer", "editor").Optional().Nillable().Immutable(),
		field.Time("joined_at").Immutable(),
	}
}

// Edges of the Participant.
func (Participant) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("conversation", Conversation.Type).Ref("participants").
			Field("conversation_id").Unique().Required().Immutable(),
	}
}

// Indexes of the Participant: one participant ID per conversation, and one
// participant per provider session per conversation.
func (Participant) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("conversation_id", "participant_id").Unique(),
		index.Fields("conversation_id", "provider", "native_id").Unique(),
		// The session filter of list_conversations.
		index.Fields("provider", "native_id", "conversation_id"),
	}
}
