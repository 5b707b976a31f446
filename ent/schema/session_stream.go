package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SessionStream is the per-session head of the event log: the last
// sequence handed out, the current epoch and the oldest sequence still
// retained (events before it were deleted by retention).
type SessionStream struct {
	ent.Schema
}

// The validators of the SessionStream fields (rules.go).

func ValidateSessionStreamProvider(v string) error      { return text(v, 1, noLimit) }
func ValidateSessionStreamNativeID(v string) error      { return text(v, 1, noLimit) }
func ValidateSessionStreamLastSequence(v int64) error   { return atLeast(v, 0) }
func ValidateSessionStreamEpoch(v int64) error          { return atLeast(v, 0) }
func ValidateSessionStreamOldestRetained(v int64) error { return atLeast(v, 1) }

// Fields of the SessionStream.
func (SessionStream) Fields() []ent.Field {
	return []ent.Field{
		field.String("provider").Validate(ValidateSessionStreamProvider).Immutable(),
		field.String("native_id").Validate(ValidateSessionStreamNativeID).Immutable(),
		field.Int64("last_sequence").Validate(ValidateSessionStreamLastSequence).Default(0),
		field.Int64("epoch").Validate(ValidateSessionStreamEpoch).Default(0),
		// OldestRetained is the smallest sequence still stored; with no
		// event deleted yet it is 1.
		field.Int64("oldest_retained").Validate(ValidateSessionStreamOldestRetained).Default(1),
		field.Time("updated_at"),
	}
}

// Indexes of the SessionStream.
func (SessionStream) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "native_id").Unique(),
	}
}
