package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ReviewIndependence is what the caller asserts about the reviewer.
type ReviewIndependence struct {
	DifferentSession  bool `json:"differentSession"`
	DifferentProvider bool `json:"differentProvider"`
	FreshContext      bool `json:"freshContext"`
	WriteAccess       bool `json:"writeAccess"`
}

// ReviewFinding is one finding of a review.
type ReviewFinding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Detail   string `json:"detail"`
	File     string `json:"file,omitempty"`
	Line     *int   `json:"line,omitempty"`
}

// Review holds the schema definition for a caller-submitted review verdict.
// Its provenance is always agent_claim: the runtime did not observe it.
type Review struct {
	ent.Schema
}

// Annotations of the Review.
func (Review) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "reviews"}}
}

// The validators of the Review fields (rules.go).

func ValidateReviewID(v string) error                { return text(v, 1, MaxIDBytes) }
func ValidateReviewReviewerSessionID(v string) error { return text(v, 1, MaxSessionBytes) }

// Fields of the Review.
func (Review) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Validate(ValidateReviewID).Immutable().Comment("review_<uuid>"),
		field.String("work_id").Immutable(),
		field.Strings("subject_evidence_ids").Immutable(),
		field.String("reviewer_session_id").Validate(ValidateReviewReviewerSessionID).Immutable(),
		field.JSON("independence", ReviewIndependence{}).Immutable(),
		field.JSON("findings", []ReviewFinding{}).Immutable(),
		field.Enum("verdict").Immutable().Values("approve", "changes_requested", "blocked"),
		field.Enum("provenance").Immutable().Values("agent_claim").Default("agent_claim"),
		field.String("evidence_id").Optional().Nillable().Immutable().Comment("the review evidence record"),
		field.Time("created_at").Immutable(),
	}
}

// Edges of the Review.
func (Review) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("work", WorkItem.Type).Ref("reviews").Field("work_id").Unique().Required().Immutable(),
	}
}

// Indexes of the Review.
func (Review) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("created_at", "id"),
		index.Fields("work_id", "created_at", "id"),
	}
}
