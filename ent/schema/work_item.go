package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// WorkItem holds the schema definition for a unit of coordinated work: an
// objective, its acceptance criteria, and the sessions that own it.
type WorkItem struct {
	ent.Schema
}

// Annotations of the WorkItem.
func (WorkItem) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "work_items"}}
}

// The validators of the WorkItem fields (rules.go).

func ValidateWorkItemID(v string) error                 { return text(v, 1, MaxIDBytes) }
func ValidateWorkItemObjective(v string) error          { return text(v, 1, noLimit) }
func ValidateWorkItemSourceSession(v string) error      { return text(v, 0, MaxSessionBytes) }
func ValidateWorkItemDestinationSession(v string) error { return text(v, 0, MaxSessionBytes) }

// Fields of the WorkItem. Timestamps have no defaults on purpose: the service
// layer sets them from its injected clock.
func (WorkItem) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Validate(ValidateWorkItemID).Immutable().Comment("work_<unixms>_<6 base36>"),
		field.Text("objective").Validate(ValidateWorkItemObjective),
		field.Strings("acceptance_criteria"),
		field.Strings("risks"),
		field.Strings("unresolved_questions"),
		field.String("source_session").Validate(ValidateWorkItemSourceSession).Optional().Nillable(),
		field.String("destination_session").Validate(ValidateWorkItemDestinationSession).Optional().Nillable(),
		field.Enum("status").Values("open", "in_progress", "blocked", "accepted", "rejected").Default("open"),
		field.Strings("changed_files"),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
	}
}

// Edges of the WorkItem.
func (WorkItem) Edges() []ent.Edge {
	return []ent.Edge{
		// depends_on: this work cannot finish before the target work.
		// The inverse, dependents, lists the works waiting on this one.
		edge.To("depends_on", WorkItem.Type).From("dependents"),
		edge.To("evidence", Evidence.Type),
		edge.To("handoffs", Handoff.Type),
		edge.To("reviews", Review.Type),
	}
}

// Indexes of the WorkItem: one per filter of the work listings, each
// ending in the keyset order (updated_at, id), so every page is one range
// scan whatever the store's size.
func (WorkItem) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("updated_at", "id"),
		// The desk's sort by creation: keyset on (created_at, id).
		index.Fields("created_at", "id"),
		index.Fields("status", "updated_at", "id"),
		index.Fields("source_session", "updated_at", "id"),
		index.Fields("destination_session", "updated_at", "id"),
	}
}
