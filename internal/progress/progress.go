// Package progress carries an MCP progress reporter from the tool-call
// boundary to the code that waits, without tying that code to the MCP SDK.
package progress

import "context"

// Reporter sends one progress notification. total is 0 when unknown.
type Reporter func(progress, total float64, message string)

type key struct{}

// With returns ctx carrying r.
func With(ctx context.Context, r Reporter) context.Context {
	return context.WithValue(ctx, key{}, r)
}

// From returns the reporter in ctx, or one that does nothing when the
// client asked for no progress.
func From(ctx context.Context) Reporter {
	if r, ok := ctx.Value(key{}).(Reporter); ok && r != nil {
		return r
	}
	return func(float64, float64, string) {}
}

// Requested reports whether the client sent a progress token.
func Requested(ctx context.Context) bool {
	r, ok := ctx.Value(key{}).(Reporter)
	return ok && r != nil
}
