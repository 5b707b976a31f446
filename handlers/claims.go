package handlers

import (
	"context"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/paging"
)

// ClaimTools answers the claims tool group (acquire_claim, release_claim,
// list_claims) over an internal/claims Service. Handlers delegates to it
// when Deps carries a claims service.
type ClaimTools struct {
	Svc *claims.Service
}

// AcquireClaim answers acquire_claim with the new claim.
func (t ClaimTools) AcquireClaim(ctx context.Context, in *catalogs.AcquireClaimInput) (*catalogs.Claim, error) {
	return record(claimAnswer)(t.Svc.Acquire(ctx, claims.AcquireInput{
		WorkID:     in.WorkID,
		SessionID:  in.SessionID,
		Resource:   in.Resource,
		Kind:       claims.Kind(in.Kind),
		Mode:       claims.Mode(in.Mode),
		TTLSeconds: int(in.TTLSeconds),
	}))
}

// ReleaseClaim answers release_claim with the released claim.
func (t ClaimTools) ReleaseClaim(ctx context.Context, in *catalogs.ReleaseClaimInput) (*catalogs.Claim, error) {
	return record(claimAnswer)(t.Svc.Release(ctx, claims.ReleaseInput{ClaimID: in.ClaimID, SessionID: optString(in.SessionID)}))
}

// ListClaims answers list_claims with {claims, nextCursor?} (the legacy
// claim_list unwraps the first page to the bare array).
func (t ClaimTools) ListClaims(ctx context.Context, in *catalogs.ListClaimsInput) (*catalogs.ListClaimsOutput, error) {
	session, err := paging.Session("list_claims", "session", in.Session, false)
	if err != nil {
		return nil, err
	}
	return answer(claimPageAnswer)(t.Svc.List(ctx, claims.ListInput{
		WorkID: optString(in.WorkID), Session: session, ActiveOnly: optBool(in.ActiveOnly),
		Limit: in.Limit, Cursor: optString(in.Cursor),
	}))
}

// optBool returns *p, or false for nil.
func optBool(p *bool) bool { return p != nil && *p }

// optInt returns *p, or 0 for nil.
func optInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// optString returns *p, or "" for nil.
func optString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
