package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ClaimConflict records one refused claim acquisition: which session asked
// for which resource, and the active claim of another session that it
// overlapped. It is written in the same transaction that refused the
// request, so the traffic desk can show contention that the refusal itself
// (a tool error to the caller) leaves nowhere else. Only the newest
// records are kept (internal/claims bounds the table).
//
// The fields carry no validators on purpose: the claims service has
// validated them already, and validators would add work to the ent
// package's initialisation on every spawn.
type ClaimConflict struct {
	ent.Schema
}

// Annotations of the ClaimConflict.
func (ClaimConflict) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "claim_conflicts"}}
}

// Fields of the ClaimConflict.
func (ClaimConflict) Fields() []ent.Field {
	return []ent.Field{
		field.String("work_id").Immutable(),
		field.String("session_id").Immutable(),
		field.String("resource").Immutable().Comment("normalized, as the claim would have been"),
		field.String("kind").Immutable(),
		field.String("mode").Immutable(),
		field.String("held_claim_id").Immutable(),
		field.String("held_session_id").Immutable(),
		field.Time("refused_at").Immutable(),
	}
}

// Indexes of the ClaimConflict.
func (ClaimConflict) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("held_claim_id"),
	}
}
