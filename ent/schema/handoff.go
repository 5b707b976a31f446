package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// HandoffValidation is the latest validation a handoff's author reports.
type HandoffValidation struct {
	Label      string `json:"label,omitempty"`
	Command    string `json:"command,omitempty"`
	Outcome    string `json:"outcome"`
	ObservedAt string `json:"observedAt,omitempty"`
}

// Handoff holds the schema definition for a durable, structured transfer of
// work from one session to another, with its lifecycle status and the token
// budget its delivery packet was built against.
type Handoff struct {
	ent.Schema
}

// Annotations of the Handoff.
func (Handoff) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "handoffs"}}
}

// The validators of the Handoff fields (rules.go).

func ValidateHandoffID(v string) error                 { return text(v, 1, MaxIDBytes) }
func ValidateHandoffSourceSession(v string) error      { return text(v, 1, MaxSessionBytes) }
func ValidateHandoffDestinationSession(v string) error { return text(v, 0, MaxSessionBytes) }
func ValidateHandoffRepositoryRevision(v string) error { return text(v, 0, MaxRevisionBytes) }
func ValidateHandoffContextTokens(v int) error         { return atLeast(v, 0) }
func ValidateHandoffTokenBudget(v int) error           { return atLeast(v, 1) }

// Fields of the Handoff. The durable record keeps every field, including the
// ones its packet omitted.
func (Handoff) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Validate(ValidateHandoffID).Immutable().Comment("handoff_<uuid>"),
		field.String("work_id").Immutable(),
		field.String("source_session").Validate(ValidateHandoffSourceSession).Immutable(),
		field.String("destination_session").Validate(ValidateHandoffDestinationSession).Optional().Nillable().Immutable(),
		field.Text("objective").Immutable(),
		field.Strings("acceptance_criteria").Immutable(),
		field.Strings("evidence_ids").Immutable(),
		field.Strings("changed_files").Immutable(),
		field.Strings("risks").Immutable(),
		field.Strings("unresolved_questions").Immutable(),
		field.Strings("authority_boundaries").Immutable(),
		field.Enum("continuation_state").Optional().Nillable().Immutable().Values(
			"not_started", "in_progress", "needs_completion", "likely_complete", "existing_behavior_broken"),
		field.JSON("latest_validation", &HandoffValidation{}).Optional().Immutable(),
		field.Strings("assumptions").Optional().Immutable(),
		field.Strings("rollback_notes").Optional().Immutable(),
		field.Text("next_action").Optional().Nillable().Immutable(),
		field.String("repository_revision").Validate(ValidateHandoffRepositoryRevision).Optional().Nillable().Immutable(),
		field.Enum("status").Values(
			"created", "accepted", "applied", "verified", "completed", "blocked", "superseded").Default("created"),
		field.Int("context_tokens").Validate(ValidateHandoffContextTokens).Immutable(),
		field.Int("token_budget").Validate(ValidateHandoffTokenBudget).Immutable(),
		field.Strings("omitted_fields").Immutable(),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
	}
}

// Edges of the Handoff.
func (Handoff) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("work", WorkItem.Type).Ref("handoffs").Field("work_id").Unique().Required().Immutable(),
	}
}

// Indexes of the Handoff.
func (Handoff) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("created_at", "id"),
		index.Fields("work_id", "created_at", "id"),
	}
}
