package claims

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
)

// ReleaseInput is the input of Release. An empty SessionID releases the
// claim whoever holds it.
type ReleaseInput struct {
	ClaimID   string
	SessionID string
}

// Release marks a claim released. A session other than the owner is
// refused with an *OwnershipError. Releasing an already released claim
// changes nothing and returns it as it is; an expired claim is marked
// released like an active one.
func (s *Service) Release(ctx context.Context, in ReleaseInput) (Claim, error) {
	id := strings.TrimSpace(in.ClaimID)
	caller := strings.TrimSpace(in.SessionID)
	if id == "" {
		return Claim{}, invalidf("claimId must not be blank")
	}
	var out Claim
	err := s.tx(ctx, func(tx *ent.Tx) error {
		now := s.now()
		row, err := tx.Claim.Get(ctx, id)
		if ent.IsNotFound(err) {
			return &NotFoundError{What: "claim", ID: id}
		}
		if err != nil {
			return fmt.Errorf("read claim %s: %w", id, err)
		}
		if caller != "" && caller != row.SessionID {
			return &OwnershipError{ClaimID: id, Owner: row.SessionID, Caller: caller}
		}
		if row.Status == claim.StatusReleased {
			out = view(row, now)
			return nil
		}
		row, err = row.Update().
			SetStatus(claim.StatusReleased).
			SetReleasedAt(now).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("release claim %s: %w", id, err)
		}
		out = view(row, now)
		return nil
	})
	if err != nil {
		return Claim{}, err
	}
	return out, nil
}

// ListInput filters List.
type ListInput struct {
	// WorkID keeps only the claims of one work item.
	WorkID string
	// ActiveOnly keeps only claims that are active now (not released, not
	// expired).
	ActiveOnly bool
}

// List returns claims, oldest acquisition first.
func (s *Service) List(ctx context.Context, in ListInput) ([]Claim, error) {
	now := s.now()
	q := s.client.Claim.Query()
	if w := strings.TrimSpace(in.WorkID); w != "" {
		q = q.Where(claim.WorkID(w))
	}
	if in.ActiveOnly {
		q = q.Where(claim.StatusEQ(claim.StatusActive), claim.ExpiresAtGT(now))
	}
	rows, err := q.Order(ent.Asc(claim.FieldAcquiredAt), ent.Asc(claim.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list claims: %w", err)
	}
	out := make([]Claim, 0, len(rows))
	for _, r := range rows {
		c := view(r, now)
		if in.ActiveOnly && c.Status != StatusActive {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}
