package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// EvidenceSource says where an evidence record came from.
type EvidenceSource struct {
	Adapter       string `json:"adapter"`
	Protocol      string `json:"protocol,omitempty"`
	NativeEventID string `json:"nativeEventId,omitempty"`
}

// Evidence holds the schema definition for an addressable, hashed piece of
// evidence (a diff, a command run, a review, ...). Records are append-only.
type Evidence struct {
	ent.Schema
}

// Annotations of the Evidence.
func (Evidence) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "evidence"}}
}

// The validators of the Evidence fields (rules.go).

func ValidateEvidenceID(v string) error          { return text(v, 1, MaxIDBytes) }
func ValidateEvidenceSessionID(v string) error   { return text(v, 0, MaxSessionBytes) }
func ValidateEvidenceDataBytes(v int) error      { return atLeast(v, 0) }
func ValidateEvidenceContentHash(v string) error { return text(v, 64, 64) }

// Fields of the Evidence.
func (Evidence) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Validate(ValidateEvidenceID).Immutable().Comment("evidence_<unixms>_<6 base36>"),
		field.String("work_id").Optional().Nillable().Immutable(),
		field.String("session_id").Validate(ValidateEvidenceSessionID).Optional().Nillable().Immutable(),
		field.Enum("kind").Immutable().Values(
			"diff", "file_change", "command", "test", "build", "review",
			"artifact", "approval", "lint", "typecheck", "session"),
		field.Enum("trust").Immutable().Values(
			"agent_claim", "provider_observed", "runtime_observed",
			"repository_verified", "external_verified", "human_accepted"),
		field.JSON("source", EvidenceSource{}).Immutable(),
		field.Time("captured_at").Immutable(),
		field.Text("summary").Immutable(),
		// Text, not field.JSON: the stored bytes must be exactly the canonical
		// form that content_hash covers (encoding/json would re-escape them).
		field.Text("data").Immutable().Comment("canonical JSON, see docs/store.md"),
		field.Int("data_bytes").Validate(ValidateEvidenceDataBytes).Immutable().Comment("len(data), so listings never load data"),
		field.String("content_hash").Validate(ValidateEvidenceContentHash).Immutable().Comment("SHA-256 hex of the canonical data"),
	}
}

// Edges of the Evidence.
func (Evidence) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("work", WorkItem.Type).Ref("evidence").Field("work_id").Unique().Immutable(),
	}
}

// Indexes of the Evidence.
func (Evidence) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("captured_at", "id"),
		index.Fields("work_id", "captured_at", "id"),
		index.Fields("session_id", "captured_at", "id"),
	}
}
