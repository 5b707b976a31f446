package app

import (
	"context"
	"errors"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/workflow"
)

// reviewProviders gives request_review the provider layer: native diffs and
// workspaces from the registry (each routed to the endpoint that exposed
// the session), sends through the delivery log (recorded before dispatch,
// a reused key refused, nothing ever resent).
type reviewProviders struct {
	reg *registry.Registry
	del *delivery.Service
}

var _ workflow.ReviewProviders = reviewProviders{}

// Resolve finds the session with its provider (recording it when it is
// seen for the first time).
func (r reviewProviders) Resolve(ctx context.Context, provider, nativeID string) error {
	_, err := r.reg.Resolve(ctx, provider, nativeID)
	return err
}

// Diff reads the session's latest native diff.
func (r reviewProviders) Diff(ctx context.Context, provider, nativeID string) (any, error) {
	return r.reg.Diff(ctx, provider, nativeID, providers.DiffOptions{})
}

// Workspace is the session's cwd as its provider reports it now; "" when
// the provider does not know the session or records no cwd.
func (r reviewProviders) Workspace(ctx context.Context, provider, nativeID string) (string, error) {
	s, err := r.reg.GetSession(ctx, provider, nativeID)
	if err != nil {
		var unknown *registry.UnknownSessionError
		if errors.As(err, &unknown) {
			return "", nil
		}
		return "", err
	}
	return s.CWD, nil
}

// Send records and dispatches the review prompt. A request the provider
// refused (or that never left) comes back as a rejected receipt, like
// send_session_message's; an uncertain outcome is an error.
func (r reviewProviders) Send(ctx context.Context, provider, nativeID, text, key string) (providers.Receipt, error) {
	res, err := r.del.Send(ctx, delivery.SendRequest{Provider: provider, NativeID: nativeID, Text: text, IdempotencyKey: key})
	if err != nil {
		return providers.Receipt{}, err
	}
	return res.Receipt, nil
}
