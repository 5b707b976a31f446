// Package callinfo carries what the MCP server knows about a tool call to
// the handlers below it: whether it arrived under a legacy 0.3.x name, so
// a handler can keep the 0.3.x record shape where the modern tool answers
// a summary instead.
package callinfo

import "context"

type legacyKey struct{}

// WithLegacy marks ctx as a call under a legacy alias.
func WithLegacy(ctx context.Context) context.Context {
	return context.WithValue(ctx, legacyKey{}, true)
}

// Legacy reports a call under a legacy alias.
func Legacy(ctx context.Context) bool {
	v, _ := ctx.Value(legacyKey{}).(bool)
	return v
}
