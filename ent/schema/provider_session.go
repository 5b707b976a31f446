package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ProviderSession is a native provider session the runtime has seen, with
// the endpoint (server or process) that exposed it and, on a team store
// shared by several machines, the host that runs it. A session is always
// routed back to that endpoint, and only from that host.
type ProviderSession struct {
	ent.Schema
}

// The validators of the ProviderSession fields (rules.go).

func ValidateProviderSessionProvider(v string) error { return text(v, 1, noLimit) }
func ValidateProviderSessionNativeID(v string) error { return text(v, 1, noLimit) }

// Fields of the ProviderSession.
func (ProviderSession) Fields() []ent.Field {
	return []ent.Field{
		field.String("provider").Validate(ValidateProviderSessionProvider).Immutable(),
		field.String("native_id").Validate(ValidateProviderSessionNativeID).Immutable(),
		// Endpoint names the server or process that exposed the session,
		// e.g. "http://127.0.0.1:4096" or "stdio:/usr/bin/codex app-server".
		field.String("endpoint").Default(""),
		// Host names the machine whose runtime recorded the session first
		// (INTEROP_HOST, else the hostname) on a team store; "" on a local
		// store. A session is driven only from its host.
		field.String("host").Default(""),
		field.String("cwd").Default(""),
		field.String("title").Default(""),
		field.String("state").Default(""),
		field.Time("first_seen_at").Immutable(),
		field.Time("last_seen_at"),
	}
}

// Indexes of the ProviderSession.
func (ProviderSession) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "native_id").Unique(),
	}
}
