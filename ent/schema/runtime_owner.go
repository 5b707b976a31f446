package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
)

// RuntimeOwner is one runtime process that dispatched operations on this
// store. It renews heartbeat_at while it runs and sets stopped_at when it
// closes. Another process treats the owner as gone (and settles its open
// operations) once it stopped, once its heartbeat is older than the owner
// timeout, or, on the same host, as soon as its pid no longer runs.
type RuntimeOwner struct {
	ent.Schema
}

// Annotations of the RuntimeOwner.
func (RuntimeOwner) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "runtime_owners"}}
}

// The validators of the RuntimeOwner fields (rules.go).

func ValidateRuntimeOwnerID(v string) error { return text(v, 1, noLimit) }

// Fields of the RuntimeOwner.
func (RuntimeOwner) Fields() []ent.Field {
	return []ent.Field{
		// ID is "rt_<uuid>", fresh for every process.
		field.String("id").Validate(ValidateRuntimeOwnerID).Immutable(),
		field.String("host").Default("").Immutable(),
		// Boot identifies the host's boot (Linux boot_id), so a pid from
		// before a reboot is known to be gone.
		field.String("boot").Default("").Immutable(),
		field.Int("pid").Immutable(),
		field.Time("started_at").Immutable(),
		field.Time("heartbeat_at"),
		field.Time("stopped_at").Optional().Nillable(),
	}
}
