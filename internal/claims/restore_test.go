package claims_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

func TestRestoreKeepsIDsAndTimesAndRefusesConflicts(t *testing.T) {
	st := teststore.Open(t)
	ctx := context.Background()
	seedWork(t, st.Client(), "work_a", "work_b")
	now := t0
	released := t0.Add(-time.Minute)
	held := claims.Claim{ID: "claim_held", WorkID: "work_a", SessionID: "codex:a", Resource: "src/auth/", Kind: claims.KindDirectory,
		Mode: claims.ModeExclusive, Status: claims.StatusActive, AcquiredAt: t0.Add(-time.Minute), ExpiresAt: t0.Add(10 * time.Minute)}
	restore := func(c claims.Claim) (claims.Claim, error) {
		var out claims.Claim
		err := st.Tx(ctx, func(tx *ent.Tx) error {
			var err error
			out, err = claims.Restore(ctx, tx, c, now)
			return err
		})
		return out, err
	}
	got, err := restore(held)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "claim_held" || got.Resource != "src/auth" || !got.AcquiredAt.Equal(held.AcquiredAt) || got.Status != claims.StatusActive {
		t.Fatalf("restored = %+v", got)
	}
	other := func(mutate func(*claims.Claim)) claims.Claim {
		c := claims.Claim{ID: "claim_x", WorkID: "work_b", SessionID: "claude-code:b", Resource: "src/auth/token.ts", Kind: claims.KindFile,
			Mode: claims.ModeExclusive, Status: claims.StatusActive, AcquiredAt: t0.Add(-time.Minute), ExpiresAt: t0.Add(time.Minute)}
		mutate(&c)
		return c
	}
	cases := []struct {
		name    string
		claim   claims.Claim
		wantErr any // nil, *claims.ConflictError, *claims.InvalidError, *claims.NotFoundError
		status  claims.Status
	}{
		{"active overlap of another session", other(func(*claims.Claim) {}), &claims.ConflictError{}, ""},
		{"expired overlap is history", other(func(c *claims.Claim) { c.ExpiresAt = t0 }), nil, claims.StatusExpired},
		{"released overlap is history", other(func(c *claims.Claim) { c.Status = claims.StatusReleased; c.ReleasedAt = &released }), nil, claims.StatusReleased},
		{"same session never conflicts", other(func(c *claims.Claim) { c.SessionID = "codex:a" }), nil, claims.StatusActive},
		{"a path that does not overlap", other(func(c *claims.Claim) { c.Resource = "docs/a.md" }), nil, claims.StatusActive},
		{"unknown work", other(func(c *claims.Claim) { c.WorkID = "work_missing" }), &claims.NotFoundError{}, ""},
		{"bad kind", other(func(c *claims.Claim) { c.Kind = "folder" }), &claims.InvalidError{}, ""},
		{"released without releasedAt", other(func(c *claims.Claim) { c.Status = claims.StatusReleased }), &claims.InvalidError{}, ""},
		{"expired is not a stored status", other(func(c *claims.Claim) { c.Status = claims.StatusExpired }), &claims.InvalidError{}, ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.claim.ID = tc.claim.ID + "_" + string(rune('a'+i))
			before := claimCount(t, st.Client())
			got, err := restore(tc.claim)
			switch want := tc.wantErr.(type) {
			case nil:
				if err != nil || got.Status != tc.status || got.ID != tc.claim.ID {
					t.Fatalf("got %+v, %v; want status %s", got, err, tc.status)
				}
			case *claims.ConflictError:
				if !errors.As(err, &want) || want.Held.ID != "claim_held" {
					t.Fatalf("err = %v, want a conflict with claim_held", err)
				}
			case *claims.InvalidError:
				if !errors.As(err, &want) {
					t.Fatalf("err = %v, want invalid", err)
				}
			case *claims.NotFoundError:
				if !errors.As(err, &want) {
					t.Fatalf("err = %v, want not found", err)
				}
			}
			if err != nil && claimCount(t, st.Client()) != before {
				t.Fatal("a refused restore wrote a claim")
			}
		})
	}
}
