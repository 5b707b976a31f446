package conversations

import (
	"context"

	"github.com/agent-interop/runtime/internal/providers"
)

// Dispatcher delivers one message text to one native provider session. The
// provider layer implements it; this package only calls it, after the
// message has been recorded.
//
// Dispatch follows the delivery contract of providers.Adapter.Send: it
// returns a *providers.NotSentError when the request certainly never reached
// the provider, a *providers.RejectedError when the provider refused it, and
// any other error when the outcome is uncertain. A returned Receipt with
// Accepted false is a refusal too. Dispatch must honour ctx.
type Dispatcher interface {
	Dispatch(ctx context.Context, provider, nativeID, text string, opts DispatchOptions) (providers.Receipt, error)
}

// DispatchOptions are the per-message options of Dispatch.
type DispatchOptions struct {
	// Mode is "send" (conversation messages are never steered).
	Mode string
	// Model selects a model for this prompt, when set.
	Model *providers.Model
	// Reasoning selects a reasoning effort, when set.
	Reasoning string
	// MessageID and IdempotencyKey identify the delivery record, for
	// adapters that can pass a correlation or deduplication key on.
	MessageID      string
	IdempotencyKey string
}

// DispatcherFunc adapts a function to Dispatcher.
type DispatcherFunc func(ctx context.Context, provider, nativeID, text string, opts DispatchOptions) (providers.Receipt, error)

// Dispatch calls f.
func (f DispatcherFunc) Dispatch(ctx context.Context, provider, nativeID, text string, opts DispatchOptions) (providers.Receipt, error) {
	return f(ctx, provider, nativeID, text, opts)
}
