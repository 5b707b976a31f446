package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Claim holds the schema definition for a cooperative lease on a resource
// (a file, a directory, an interface name or a whole workspace) that one
// session holds for one work item. Claims never intercept the filesystem:
// they are coordination state that internal/claims checks and records in a
// single write transaction.
type Claim struct {
	ent.Schema
}

// Annotations of the Claim.
func (Claim) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "claims"}}
}

// The validators of the Claim fields (rules.go).

func ValidateClaimID(v string) error        { return text(v, 1, MaxIDBytes) }
func ValidateClaimWorkID(v string) error    { return text(v, 1, noLimit) }
func ValidateClaimSessionID(v string) error { return text(v, 1, MaxSessionBytes) }
func ValidateClaimResource(v string) error  { return text(v, 1, MaxResourceBytes) }

// Fields of the Claim. A claim whose expires_at has passed stays "active"
// in the table; readers treat it as expired (lazy expiry).
func (Claim) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Validate(ValidateClaimID).Immutable().Comment("claim_<uuid>"),
		field.String("work_id").Validate(ValidateClaimWorkID).Immutable(),
		field.String("session_id").Validate(ValidateClaimSessionID).Immutable(),
		field.String("resource").Validate(ValidateClaimResource).Immutable().
			Comment("normalized: trimmed; file and directory paths cleaned to forward slashes"),
		field.Enum("kind").Values("file", "directory", "interface", "workspace").Default("file").Immutable(),
		field.Enum("mode").Values("exclusive", "shared_read").Default("exclusive").Immutable(),
		field.Enum("status").Values("active", "released").Default("active"),
		field.Time("acquired_at").Immutable(),
		field.Time("expires_at"),
		field.Time("released_at").Optional().Nillable(),
	}
}

// Edges of the Claim. The work edge is one-directional (the work item
// schema needs no change) and gives the work_id column a foreign key to
// work_items, so a claim can never name a work item that does not exist.
func (Claim) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("work", WorkItem.Type).Field("work_id").Unique().Required().Immutable(),
	}
}

// Indexes of the Claim. The overlap check of an acquisition reads only
// (status, resource, expires_at) entries: exact lookups of the resource and
// its ancestors plus one range scan for what lies below it, and the active
// workspace claims through (status, kind, expires_at); so it costs
// O(log n) in the active claims. The listings page newest first on
// (…, acquired_at, id).
func (Claim) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("status", "expires_at"),
		index.Fields("status", "resource", "expires_at"),
		index.Fields("status", "kind", "expires_at"),
		index.Fields("acquired_at", "id"),
		index.Fields("status", "acquired_at", "id"),
		index.Fields("work_id", "acquired_at", "id"),
		index.Fields("session_id", "acquired_at", "id"),
	}
}
