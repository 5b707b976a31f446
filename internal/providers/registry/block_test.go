package registry

import (
	"context"

	"github.com/agent-interop/runtime/internal/providers"
)

// blockUntil is a listing that ends with no sessions once release is
// closed, or with its context's error: a provider whose listing is still
// under way for as long as a test needs.
func blockUntil(release <-chan struct{}) func(ctx context.Context) ([]providers.Session, error) {
	return func(ctx context.Context) ([]providers.Session, error) {
		select {
		case <-release:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
