package schema

import (
	"encoding/json"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Operation is the delivery record of one send, cancel or permission
// response, and the only one: a conversation message references the
// operation that carries it. It is written before the request is
// dispatched, so an outcome is never lost and a request is never sent
// twice: the idempotency key is unique across all operations.
//
// While an operation is open (status queued) it has an owner, the runtime
// process that dispatched it and follows its outcome (see RuntimeOwner). An
// open operation whose owner is gone is settled by another process from
// the provider's native history, never by sending it again.
type Operation struct {
	ent.Schema
}

// The validators of the Operation fields (rules.go).

func ValidateOperationID(v string) error             { return text(v, 1, noLimit) }
func ValidateOperationIdempotencyKey(v string) error { return text(v, 1, noLimit) }
func ValidateOperationProvider(v string) error       { return text(v, 1, noLimit) }
func ValidateOperationNativeID(v string) error       { return text(v, 1, noLimit) }
func ValidateOperationOperation(v string) error      { return text(v, 1, noLimit) }

// Fields of the Operation.
func (Operation) Fields() []ent.Field {
	return []ent.Field{
		// ID is "op_<uuid>".
		field.String("id").Validate(ValidateOperationID).Immutable(),
		field.String("idempotency_key").Validate(ValidateOperationIdempotencyKey).Unique().Immutable(),
		field.String("provider").Validate(ValidateOperationProvider).Immutable(),
		field.String("native_id").Validate(ValidateOperationNativeID).Immutable(),
		// Operation is send, cancel or permission.
		field.String("operation").Validate(ValidateOperationOperation).Immutable(),
		// TextSha256 is the hex SHA-256 of the text sent; the text itself
		// is never stored here.
		field.String("text_sha256").Default("").Immutable(),
		field.Enum("status").Values("queued", "completed", "rejected", "delivery_unknown").Default("queued"),
		field.String("provider_state").Default(""),
		field.JSON("detail", json.RawMessage{}).Optional(),
		// Ref is the adapter's correlation handle (a turn id, a message id)
		// used by Host.ReportOutcome.
		field.String("ref").Default(""),
		// NativeTurn names the provider's record of the turn the operation
		// started (Codex turn id, OpenCode message id, ACP prompt).
		field.String("native_turn").Default(""),
		// Owner is the RuntimeOwner id of the process that dispatched the
		// operation and follows it while it is open.
		field.String("owner").Default(""),
		// Verdict says how the turn a send started ended (answered, empty,
		// failed, aborted, truncated: spec/records.yaml turnVerdict); nil
		// until observed, and for operations that start no turn.
		field.String("verdict").Optional().Nillable(),
		// TurnError is the model's or provider's error of a failed turn.
		field.String("turn_error").Optional().Nillable(),
		// Usage is what the provider reported the turn cost
		// (providers.Usage); nil when it reported nothing.
		field.JSON("usage", json.RawMessage{}).Optional(),
		// ChangedFiles are the files the turn wrote, as the provider named them.
		field.JSON("changed_files", []string{}).Optional(),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
	}
}

// Indexes of the Operation.
func (Operation) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "native_id", "ref"),
		index.Fields("status", "owner"),
		// The traffic desk's receipts timeline: keyset pages, newest
		// first, over every operation and over one session's.
		index.Fields("created_at", "id"),
		index.Fields("provider", "native_id", "created_at", "id"),
	}
}
