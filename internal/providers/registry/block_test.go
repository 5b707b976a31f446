package registry

import (
	"context"
	"testing"

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

// listAsync lists every provider's sessions in the background; the page
// arrives on the returned channel (an error fails the test).
func listAsync(ctx context.Context, t *testing.T, r *Registry) <-chan SessionPage {
	done := make(chan SessionPage, 1)
	go func() {
		p, err := r.ListSessionPage(ctx, SessionQuery{})
		if err != nil {
			t.Error(err)
		}
		done <- p
	}()
	return done
}
