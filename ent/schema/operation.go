package schema

import (
	"encoding/json"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Operation is the delivery record of one send, cancel or permission
// response. It is written before the request is dispatched, so an outcome
// is never lost and a request is never sent twice: the idempotency key is
// unique across all operations.
type Operation struct {
	ent.Schema
}

// Fields of the Operation.
func (Operation) Fields() []ent.Field {
	return []ent.Field{
		// ID is "op_<uuid>".
		field.String("id").NotEmpty().Immutable(),
		field.String("idempotency_key").NotEmpty().Unique().Immutable(),
		field.String("provider").NotEmpty().Immutable(),
		field.String("native_id").NotEmpty().Immutable(),
		// Operation is send, cancel or permission.
		field.String("operation").NotEmpty().Immutable(),
		// TextSha256 is the hex SHA-256 of the text sent; the text itself
		// is never stored here.
		field.String("text_sha256").Default("").Immutable(),
		field.Enum("status").Values("queued", "completed", "rejected", "delivery_unknown").Default("queued"),
		field.String("provider_state").Default(""),
		field.JSON("detail", json.RawMessage{}).Optional(),
		// Ref is the adapter's correlation handle (a turn id, a message id)
		// used by Host.ReportOutcome.
		field.String("ref").Default(""),
		// LeaseExpiresAt is set while the dispatch is in flight. A queued
		// record whose lease expired belongs to a runtime that stopped
		// mid-dispatch: it becomes delivery_unknown at the next start.
		field.Time("lease_expires_at").Optional().Nillable(),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
	}
}

// Indexes of the Operation.
func (Operation) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "native_id", "ref"),
		index.Fields("status", "lease_expires_at"),
	}
}
