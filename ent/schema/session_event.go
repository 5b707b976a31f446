package schema

import (
	"encoding/json"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SessionEvent is one native provider event in a session's log. The
// sequence is owned by the runtime: it is allocated in the transaction that
// inserts the event, so it is monotonic per session across provider
// reconnects and across runtime processes sharing the database.
type SessionEvent struct {
	ent.Schema
}

// The validators of the SessionEvent fields (rules.go).

func ValidateSessionEventProvider(v string) error { return text(v, 1, noLimit) }
func ValidateSessionEventNativeID(v string) error { return text(v, 1, noLimit) }
func ValidateSessionEventSequence(v int64) error  { return atLeast(v, 1) }
func ValidateSessionEventEpoch(v int64) error     { return atLeast(v, 0) }

// Fields of the SessionEvent.
func (SessionEvent) Fields() []ent.Field {
	return []ent.Field{
		field.String("provider").Validate(ValidateSessionEventProvider).Immutable(),
		field.String("native_id").Validate(ValidateSessionEventNativeID).Immutable(),
		field.Int64("sequence").Validate(ValidateSessionEventSequence).Immutable(),
		// Epoch counts how many times the provider stream had been opened
		// when this event arrived.
		field.Int64("epoch").Validate(ValidateSessionEventEpoch).Immutable(),
		field.String("type").Immutable(),
		field.JSON("data", json.RawMessage{}).Optional().Immutable(),
		// TurnID is the native turn the event belongs to, when known.
		field.String("turn_id").Default("").Immutable(),
		field.Time("timestamp").Immutable(),
	}
}

// Indexes of the SessionEvent.
func (SessionEvent) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "native_id", "sequence").Unique(),
	}
}
