package desk

import (
	"context"
	"fmt"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claimconflict"
)

// maxRecentConflicts bounds the refusals listed on the claims page, and
// maxConflictsPerClaim those shown beside one claim.
const (
	maxRecentConflicts   = 20
	maxConflictsPerClaim = 5
)

// ConflictRow is one refused claim acquisition: Session asked for
// Resource and was refused because of HeldClaim, held by HeldSession.
type ConflictRow struct {
	ID          int
	WorkID      string
	Session     string
	Resource    string
	Kind        string
	Mode        string
	HeldClaim   string
	HeldSession string
	At          time.Time
}

func conflictRow(c *ent.ClaimConflict) ConflictRow {
	return ConflictRow{ID: c.ID, WorkID: c.WorkID, Session: c.SessionID, Resource: c.Resource, Kind: c.Kind, Mode: c.Mode,
		HeldClaim: c.HeldClaimID, HeldSession: c.HeldSessionID, At: c.RefusedAt}
}

// conflictsOf returns the newest refusals caused by each of the claims.
func (r *reader) conflictsOf(ctx context.Context, claimIDs []string) (map[string][]ConflictRow, error) {
	out := map[string][]ConflictRow{}
	for _, id := range claimIDs {
		list, err := r.client.ClaimConflict.Query().Where(claimconflict.HeldClaimID(id)).
			Order(ent.Desc(claimconflict.FieldID)).Limit(maxConflictsPerClaim).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the conflicts of claim %s: %w", id, err)
		}
		for _, c := range list {
			out[id] = append(out[id], conflictRow(c))
		}
	}
	return out, nil
}

// recentConflicts returns the newest refusals.
func (r *reader) recentConflicts(ctx context.Context, limit int) ([]ConflictRow, error) {
	list, err := r.client.ClaimConflict.Query().Order(ent.Desc(claimconflict.FieldID)).Limit(limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read refused claims: %w", err)
	}
	out := make([]ConflictRow, len(list))
	for i, c := range list {
		out[i] = conflictRow(c)
	}
	return out, nil
}
